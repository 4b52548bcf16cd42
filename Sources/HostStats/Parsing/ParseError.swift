/// Text that a parser could not turn into figures.
///
/// The message names the tool and what was wrong in words a person can act on, e.g. "free
/// output has no `Mem:` line: expected the output of `free -b`".
public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The tool or file whose output was being read (`free`, `/proc/stat`, …).
    public var source: String
    public var message: String
    /// 1-based line number where reading failed, when one line is to blame.
    public var line: Int?

    public init(source: String, message: String, line: Int? = nil) {
        self.source = source
        self.message = message
        self.line = line
    }

    public var description: String {
        if let line { return "\(source) output, line \(line): \(message)" }
        return "\(source) output: \(message)"
    }
}
