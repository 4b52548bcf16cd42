/// Why a fleet file cannot be used: one sentence naming the file and the line, and what to write instead.
public struct FleetFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file, as given.
    public var path: String
    /// The line the problem is on; `nil` for the file as a whole.
    public var line: Int?
    /// The sentence to show.
    public var message: String

    /// A problem at `line` of the fleet file `path`: the message starts with the file and the line.
    public init(path: String, line: Int?, _ problem: String) {
        self.path = path
        self.line = line
        self.message = "the fleet file \(path)" + (line.map { ", line \($0)" } ?? "") + ": " + problem
    }

    public var description: String { message }
}
