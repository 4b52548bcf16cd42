/// Text ready for a terminal: whatever text goes in is escaped by ``TerminalText`` as it is added,
/// and the only control sequences it can hold are hostscope's own, added through the named
/// controls below (styles, cursor movement, line erasing).
///
/// Styled output (the chat, `watch`'s live view, progress lines) is built from these values, so
/// that no string — from a host, a model, a file or a message — can reach the terminal with an
/// escape sequence of its own: there is no way to turn a `String` into a `TerminalOutput`
/// without escaping it. Newlines and tabs are kept.
///
/// ```swift
/// var line = TerminalOutput.carriageReturn + .eraseLine
/// line += TerminalOutput(name, style: .dim)   // name escaped, then dimmed
/// ```
public struct TerminalOutput: Sendable, Equatable, Hashable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// What goes to the terminal, byte for byte.
    public private(set) var text: String

    /// Empty output.
    public init() {
        text = ""
    }

    /// `text` escaped for the terminal; newlines and tabs are kept.
    public init(_ text: String) {
        self.text = TerminalText.sanitize(text, keepingLayout: true)
    }

    /// `text` escaped, shown in `style` and reset afterwards.
    public init(_ text: String, style: Style) {
        self = TerminalOutput(style: style) + TerminalOutput(text) + .reset
    }

    /// A string literal, escaped like any other text: control sequences come only from the
    /// named controls.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// Output already escaped by this module (the Markdown renderer's byte-level escaping).
    init(escaped text: String) {
        self.text = text
    }

    public var description: String { text }

    public var isEmpty: Bool { text.isEmpty }

    /// Whether the output ends a line.
    public var endsLine: Bool { text.hasSuffix("\n") }

    public static func + (lhs: TerminalOutput, rhs: TerminalOutput) -> TerminalOutput {
        TerminalOutput(escaped: lhs.text + rhs.text)
    }

    public static func += (lhs: inout TerminalOutput, rhs: TerminalOutput) {
        lhs.text += rhs.text
    }

    /// Appends `text`, escaped.
    public mutating func append(_ text: String) {
        self.text += TerminalText.sanitize(text, keepingLayout: true)
    }

    // MARK: - Controls

    /// SGR styles hostscope uses.
    public enum Style: Sendable {
        case bold, dim, underline, red, green, yellow, cyan
        /// Bold off (normal intensity).
        case normalIntensity
        /// The default foreground colour.
        case defaultColour

        var parameter: String {
            switch self {
            case .bold: "1"
            case .dim: "2"
            case .underline: "4"
            case .red: "31"
            case .green: "32"
            case .yellow: "33"
            case .cyan: "36"
            case .normalIntensity: "22"
            case .defaultColour: "39"
            }
        }
    }

    /// Switches `style` on.
    public init(style: Style) {
        text = "\u{1B}[" + style.parameter + "m"
    }

    /// Every style off.
    public static let reset = TerminalOutput(escaped: "\u{1B}[0m")
    /// Back to the start of the line.
    public static let carriageReturn = TerminalOutput(escaped: "\r")
    /// Erases the whole line the cursor is on.
    public static let eraseLine = TerminalOutput(escaped: "\u{1B}[2K")
    /// Erases from the cursor to the end of the line.
    public static let eraseToEndOfLine = TerminalOutput(escaped: "\u{1B}[K")

    /// Moves the cursor `lines` lines up (nothing for 0).
    public static func cursorUp(_ lines: Int) -> TerminalOutput {
        lines > 0 ? TerminalOutput(escaped: "\u{1B}[\(lines)A") : TerminalOutput()
    }
}
