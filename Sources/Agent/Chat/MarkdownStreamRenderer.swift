/// Renders Markdown for a terminal while it streams in, a piece at a time.
///
/// Headings show bold (without their `#`), list markers as bullets, block quotes with a bar, `**bold**` and
/// `` `code` `` styled, a line of `---` as a rule; fenced code blocks are kept intact, fences included, and
/// nothing inside them is interpreted. Styles never outlive their line, so a model that forgets to close `**`
/// cannot leave the terminal bold.
///
/// Only the start of a line is held back, and only while it could still be a marker (`#`, `-`, `1.`, a fence);
/// everything else is passed on as soon as it arrives. Control characters (ESC and the like, which could drive
/// the terminal) are shown escaped, as ``TerminalText`` does.
///
/// ```swift
/// var renderer = MarkdownStreamRenderer(styled: true)
/// for delta in deltas { write(renderer.feed(delta)) }
/// write(renderer.finish())
/// ```
public struct MarkdownStreamRenderer: Sendable {
    private enum LineMode {
        /// Markdown: inline markers are interpreted.
        case inline
        /// A line of a fenced code block: shown as it is.
        case code
        /// A fence line: shown as it is, dimmed.
        case fence
    }

    /// Whether to emit terminal styles; without them text passes through unchanged (controls still escaped).
    public let styled: Bool

    private var atLineStart = true
    private var pending = ""
    private var mode = LineMode.inline
    private var fence: (marker: Character, count: Int)?
    private var closesFence = false
    private var bold = false
    private var code = false
    private var heldStar = false
    private var lineStyled = false

    private static let reset = "\u{1B}[0m"
    private static let boldOn = "\u{1B}[1m"
    private static let boldOff = "\u{1B}[22m"
    private static let codeOn = "\u{1B}[36m"
    private static let codeOff = "\u{1B}[39m"
    private static let dim = "\u{1B}[2m"
    private static let markerCharacters: Set<Character> = [
        "#", "-", "*", "+", "_", ">", "`", "~", ".", ")", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9",
    ]

    /// Creates a renderer.
    public init(styled: Bool) {
        self.styled = styled
    }

    /// The terminal text for the next piece of the answer.
    public mutating func feed(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            step(Character(scalar), into: &out)
        }
        return out
    }

    /// The text still held back, with every style closed; the renderer is ready for a new answer afterwards.
    public mutating func finish() -> String {
        var out = ""
        if atLineStart, !pending.isEmpty {
            let line = pending
            pending = ""
            begin(line, atNewline: false, into: &out)
        }
        closeLine(into: &out)
        self = MarkdownStreamRenderer(styled: styled)
        return out
    }

    private mutating func step(_ character: Character, into out: inout String) {
        guard styled else {
            out += Self.escaped(character)
            return
        }
        if atLineStart {
            if character == "\n" {
                let line = pending
                pending = ""
                begin(line, atNewline: true, into: &out)
                endLine(into: &out)
                return
            }
            pending.append(character)
            if couldStillBeMarker(pending) {
                return
            }
            let line = pending
            pending = ""
            begin(line, atNewline: false, into: &out)
            return
        }
        if character == "\n" {
            endLine(into: &out)
            return
        }
        emit(character, into: &out)
    }

    /// Whether the start of a line so far may still turn out to be a block marker, so it must wait.
    private func couldStillBeMarker(_ prefix: String) -> Bool {
        guard prefix.count < 16 else { return false }
        let body = prefix.drop { $0 == " " }
        if fence != nil {
            // Inside a block only a closing fence matters.
            return body.allSatisfy { $0 == "`" || $0 == "~" }
        }
        return body.allSatisfy { Self.markerCharacters.contains($0) }
    }

    /// Classifies a line from its start (`atNewline`: the whole line) and renders that start.
    private mutating func begin(_ prefix: String, atNewline: Bool, into out: inout String) {
        atLineStart = false
        let indent = String(prefix.prefix { $0 == " " })
        let body = prefix.dropFirst(indent.count)
        if let open = fence {
            let run = body.prefix { $0 == open.marker }
            if indent.count <= 3, run.count >= open.count, body.dropFirst(run.count).allSatisfy({ $0 == " " }),
                atNewline || body.count == run.count
            {
                mode = .fence
                closesFence = true
                out += Self.dim + Self.escaped(prefix)
                lineStyled = true
            } else {
                mode = .code
                out += Self.escaped(prefix)
            }
            return
        }
        if indent.count <= 3, let first = body.first, first == "`" || first == "~" {
            let run = body.prefix { $0 == first }
            if run.count >= 3 {
                fence = (first, run.count)
                mode = .fence
                out += Self.dim + Self.escaped(prefix)
                lineStyled = true
                return
            }
        }
        mode = .inline
        if atNewline, body.count >= 3, let first = body.first, "-*_".contains(first),
            body.allSatisfy({ $0 == first || $0 == " " })
        {
            out += Self.dim + String(repeating: "─", count: 40)
            lineStyled = true
            return
        }
        if let first = body.first, first == "#" {
            let hashes = body.prefix { $0 == "#" }
            let rest = body.dropFirst(hashes.count)
            if hashes.count <= 6, rest.isEmpty || rest.first == " " {
                out += indent + Self.boldOn + (hashes.count <= 2 ? "\u{1B}[4m" : "")
                lineStyled = true
                bold = true
                for character in rest.drop(while: { $0 == " " }) { emit(character, into: &out) }
                return
            }
        }
        if let first = body.first, "-*+".contains(first), body.dropFirst().first == " " {
            out += indent + Self.codeOn + "•" + Self.codeOff
            for character in body.dropFirst() { emit(character, into: &out) }
            return
        }
        let digits = body.prefix { $0.isNumber }
        if !digits.isEmpty, digits.count <= 9, let mark = body.dropFirst(digits.count).first, mark == "." || mark == ")",
            body.dropFirst(digits.count + 1).first == " "
        {
            out += indent + Self.boldOn + digits + "." + Self.boldOff
            for character in body.dropFirst(digits.count + 1) { emit(character, into: &out) }
            return
        }
        if body.first == ">" {
            out += indent + Self.dim + "│" + Self.reset
            for character in body.dropFirst() { emit(character, into: &out) }
            return
        }
        for character in prefix { emit(character, into: &out) }
    }

    private mutating func emit(_ character: Character, into out: inout String) {
        switch mode {
        case .code, .fence:
            out += Self.escaped(character)
            return
        case .inline:
            break
        }
        if code {
            if character == "`" {
                code = false
                out += Self.codeOff
            } else {
                out += Self.escaped(character)
            }
            return
        }
        if heldStar {
            heldStar = false
            if character == "*" {
                bold.toggle()
                lineStyled = true
                out += bold ? Self.boldOn : Self.boldOff
                return
            }
            out += "*"
        }
        switch character {
        case "*":
            heldStar = true
        case "`":
            code = true
            lineStyled = true
            out += Self.codeOn
        default:
            out += Self.escaped(character)
        }
    }

    private mutating func endLine(into out: inout String) {
        closeLine(into: &out)
        out += "\n"
        atLineStart = true
        if mode == .fence {
            // A fence line opens the block or, when it matched the opening fence, closes it.
            if closesFence { fence = nil }
        }
        closesFence = false
        mode = fence == nil ? .inline : .code
    }

    private mutating func closeLine(into out: inout String) {
        if heldStar {
            heldStar = false
            out += "*"
        }
        if lineStyled || bold || code {
            out += Self.reset
        }
        bold = false
        code = false
        lineStyled = false
    }

    /// A character as a terminal may show it: controls other than tab escaped.
    static func escaped(_ character: Character) -> String {
        guard character != "\t", character != "\n",
            character.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) })
        else {
            return String(character)
        }
        return TerminalText.sanitize(String(character))
    }

    static func escaped(_ text: String) -> String {
        text.map(escaped).joined()
    }
}
