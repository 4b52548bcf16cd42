/// Why alert rules could not be read, in one sentence that names the file and line and says what to do.
public struct AlertingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem it is.
    public enum Code: Sendable, Equatable {
        /// The file could not be read at all (missing, unreadable).
        case unreadable
        /// The file was read and holds something that is not a rule as docs/alerts.md describes.
        case invalid
    }

    public let code: Code
    /// The sentence to show.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
