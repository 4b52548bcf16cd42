/// A host argument: the machine itself, or one reached over SSH.
public enum HostTarget: Sendable, Hashable, CustomStringConvertible {
    /// The machine hostscope runs on, probed without SSH.
    case local
    /// A host reached over SSH.
    case remote(SSHDestination)

    /// The argument that names the machine itself.
    public static let localName = "local"

    /// Reads `local` or any form `SSHDestination(parsing:)` takes.
    public init(parsing argument: String) throws(SSHError) {
        if argument == Self.localName {
            self = .local
        } else {
            self = .remote(try SSHDestination(parsing: argument))
        }
    }

    public var description: String {
        switch self {
        case .local: Self.localName
        case .remote(let destination): destination.description
        }
    }
}
