public import OrderedJSON

/// What a tool produced.
public struct ToolOutput: Sendable, Hashable {
    /// The output text (the session caps it before the model sees it).
    public var text: String
    /// Whether the tool failed; the model still sees the text.
    public var isError: Bool
    /// The exit code of the command behind the tool, when there was one.
    public var exitCode: Int?

    /// Creates an output.
    public init(text: String, isError: Bool = false, exitCode: Int? = nil) {
        self.text = text
        self.isError = isError
        self.exitCode = exitCode
    }
}

/// What a tool execution may want to know about the call.
public struct ToolContext: Sendable, Hashable {
    /// The provider's id of the call.
    public var callID: String
    /// The span of the execution, when an observer made one; work the tool does should be its children.
    public var span: ChatSpanIDs?

    /// Creates a context.
    public init(callID: String, span: ChatSpanIDs?) {
        self.callID = callID
        self.span = span
    }
}

/// Runs the tools offered to the model. The session validates arguments against each tool's schema first,
/// so `execute` only sees arguments that passed.
public protocol ToolExecutor: Sendable {
    /// The tools the model may call.
    var tools: [ToolDefinition] { get }

    /// Runs one tool. A thrown error becomes an error result whose text is the error's description; an
    /// execution should stop early when its task is cancelled (the user stopped the turn).
    func execute(name: String, input: JSONValue, context: ToolContext) async throws -> ToolOutput
}

/// Cuts tool output to a byte budget at a character boundary, saying so at the end.
public enum ToolOutputCap {
    /// `text` itself when it fits in `maxBytes` of UTF-8, else its first characters and a line such as
    /// `[output cut: showing 16384 of 90210 bytes]`.
    public static func apply(_ text: String, maxBytes: Int) -> (text: String, wasCut: Bool) {
        let total = text.utf8.count
        guard total > maxBytes else {
            return (text, false)
        }
        var end = text.utf8.index(text.utf8.startIndex, offsetBy: max(maxBytes, 0))
        // Back off to the start of a character so a multi-byte one is never split.
        while end > text.startIndex, text.utf8[end] & 0xC0 == 0x80 {
            end = text.utf8.index(before: end)
        }
        let kept = text[..<end]
        let shown = kept.utf8.count
        return (kept + "\n[output cut: showing \(shown) of \(total) bytes]", true)
    }
}
