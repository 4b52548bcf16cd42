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
/// It works on UTF-8 bytes: every byte that matters is ASCII, or the lead byte of a control or bidirectional
/// override character, and none of those occurs inside another character, so plain runs are copied whole.
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
    private var pending: [UInt8] = []
    private var mode = LineMode.inline
    private var fence: (marker: UInt8, count: Int)?
    private var closesFence = false
    private var bold = false
    private var code = false
    private var heldStar = false
    private var lineStyled = false

    private static let reset = Array("\u{1B}[0m".utf8)
    private static let boldOn = Array("\u{1B}[1m".utf8)
    private static let boldOff = Array("\u{1B}[22m".utf8)
    private static let underline = Array("\u{1B}[4m".utf8)
    private static let codeOn = Array("\u{1B}[36m".utf8)
    private static let codeOff = Array("\u{1B}[39m".utf8)
    private static let dim = Array("\u{1B}[2m".utf8)
    private static let bullet = Array("•".utf8)
    private static let bar = Array("│".utf8)
    private static let rule = Array(String(repeating: "─", count: 40).utf8)

    private static let space = UInt8(ascii: " ")
    private static let newline = UInt8(ascii: "\n")
    private static let star = UInt8(ascii: "*")
    private static let backtick = UInt8(ascii: "`")
    private static let tilde = UInt8(ascii: "~")
    private static let hash = UInt8(ascii: "#")

    /// Creates a renderer.
    public init(styled: Bool) {
        self.styled = styled
    }

    /// The terminal text for the next piece of the answer.
    public mutating func feed(_ text: String) -> TerminalOutput {
        var text = text
        return text.withUTF8 { bytes in
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + 16)
            var index = 0
            while index < bytes.count {
                if !styled || (!atLineStart && !heldStar) {
                    var end = index
                    while end < bytes.count, isPlain(bytes[end]) { end += 1 }
                    if end > index {
                        out.append(contentsOf: bytes[index..<end])
                        index = end
                        continue
                    }
                }
                let width = Self.sequenceWidth(bytes[index])
                let end = min(bytes.count, index + width)
                let character = bytes[index..<end]
                index = end
                if styled {
                    step(character, into: &out)
                } else {
                    Self.escape(character, into: &out)
                }
            }
            return TerminalOutput(escaped: String(decoding: out, as: UTF8.self))
        }
    }

    /// The text still held back, with every style closed; the renderer is ready for a new answer afterwards.
    public mutating func finish() -> TerminalOutput {
        var out: [UInt8] = []
        if atLineStart, !pending.isEmpty {
            let line = pending
            pending = []
            begin(line, atNewline: false, into: &out)
        }
        closeLine(into: &out)
        self = MarkdownStreamRenderer(styled: styled)
        return TerminalOutput(escaped: String(decoding: out, as: UTF8.self))
    }

    /// Whether a byte can be copied as it is in the current state.
    private func isPlain(_ byte: UInt8) -> Bool {
        guard byte >= 0x20, byte != 0x7F, byte != 0xC2, byte != 0xE2 else { return false }
        guard styled else { return true }
        switch mode {
        case .code, .fence: return true
        case .inline: return byte != Self.star && byte != Self.backtick
        }
    }

    /// One character (its UTF-8 bytes).
    private mutating func step<Bytes: Collection<UInt8>>(_ character: Bytes, into out: inout [UInt8]) {
        let byte = character.first ?? 0
        if atLineStart {
            if byte == Self.newline {
                let line = pending
                pending = []
                begin(line, atNewline: true, into: &out)
                endLine(into: &out)
                return
            }
            pending += character
            if couldStillBeMarker(pending) {
                return
            }
            let line = pending
            pending = []
            begin(line, atNewline: false, into: &out)
            return
        }
        if byte == Self.newline {
            endLine(into: &out)
            return
        }
        emit(character, into: &out)
    }

    /// Whether the start of a line so far may still turn out to be a block marker, so it must wait.
    private func couldStillBeMarker(_ prefix: [UInt8]) -> Bool {
        guard prefix.count < 16 else { return false }
        let body = prefix.drop { $0 == Self.space }
        if fence != nil {
            // Inside a block only a closing fence matters.
            return body.allSatisfy { $0 == Self.backtick || $0 == Self.tilde }
        }
        return body.allSatisfy(Self.isMarkerByte)
    }

    /// Whether a byte may be part of a block marker at the start of a line.
    private static func isMarkerByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "#"), UInt8(ascii: "-"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "_"),
            UInt8(ascii: ">"), UInt8(ascii: "`"), UInt8(ascii: "~"), UInt8(ascii: "."), UInt8(ascii: ")"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            false
        }
    }

    /// Classifies a line from its start (`atNewline`: the whole line) and renders that start.
    private mutating func begin(_ prefix: [UInt8], atNewline: Bool, into out: inout [UInt8]) {
        atLineStart = false
        let indent = prefix.prefix { $0 == Self.space }
        let body = prefix.dropFirst(indent.count)
        if let open = fence {
            let run = body.prefix { $0 == open.marker }
            if indent.count <= 3, run.count >= open.count, body.dropFirst(run.count).allSatisfy({ $0 == Self.space }),
                atNewline || body.count == run.count
            {
                mode = .fence
                closesFence = true
                out += Self.dim
                Self.escape(prefix, into: &out)
                lineStyled = true
            } else {
                mode = .code
                Self.escape(prefix, into: &out)
            }
            return
        }
        if indent.count <= 3, let first = body.first, first == Self.backtick || first == Self.tilde {
            let run = body.prefix { $0 == first }
            if run.count >= 3 {
                fence = (first, run.count)
                mode = .fence
                out += Self.dim
                Self.escape(prefix, into: &out)
                lineStyled = true
                return
            }
        }
        mode = .inline
        if atNewline, body.count >= 3, let first = body.first,
            first == UInt8(ascii: "-") || first == Self.star
                || first == UInt8(ascii: "_"), body.allSatisfy({ $0 == first || $0 == Self.space })
        {
            out += Self.dim
            out += Self.rule
            lineStyled = true
            return
        }
        if body.first == Self.hash {
            let hashes = body.prefix { $0 == Self.hash }
            let rest = body.dropFirst(hashes.count)
            if hashes.count <= 6, rest.isEmpty || rest.first == Self.space {
                out += indent
                out += Self.boldOn
                if hashes.count <= 2 { out += Self.underline }
                lineStyled = true
                bold = true
                emitAll(rest.drop { $0 == Self.space }, into: &out)
                return
            }
        }
        if let first = body.first, first == UInt8(ascii: "-") || first == Self.star || first == UInt8(ascii: "+"),
            body.dropFirst().first == Self.space
        {
            out += indent
            out += Self.codeOn + Self.bullet + Self.codeOff
            emitAll(body.dropFirst(), into: &out)
            return
        }
        let digits = body.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        if !digits.isEmpty, digits.count <= 9, let mark = body.dropFirst(digits.count).first,
            mark == UInt8(ascii: ".") || mark == UInt8(ascii: ")"), body.dropFirst(digits.count + 1).first == Self.space
        {
            out += indent
            out += Self.boldOn
            out += digits
            out.append(UInt8(ascii: "."))
            out += Self.boldOff
            emitAll(body.dropFirst(digits.count + 1), into: &out)
            return
        }
        if body.first == UInt8(ascii: ">") {
            out += indent
            out += Self.dim + Self.bar + Self.reset
            emitAll(body.dropFirst(), into: &out)
            return
        }
        emitAll(prefix[...], into: &out)
    }

    /// Emits bytes of a line's start one character at a time.
    private mutating func emitAll(_ bytes: ArraySlice<UInt8>, into out: inout [UInt8]) {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let end = min(bytes.endIndex, index + Self.sequenceWidth(bytes[index]))
            emit(bytes[index..<end], into: &out)
            index = end
        }
    }

    private mutating func emit<Bytes: Collection<UInt8>>(_ character: Bytes, into out: inout [UInt8]) {
        let byte = character.first ?? 0
        switch mode {
        case .code, .fence:
            Self.escape(character, into: &out)
            return
        case .inline:
            break
        }
        if code {
            if byte == Self.backtick {
                code = false
                out += Self.codeOff
            } else {
                Self.escape(character, into: &out)
            }
            return
        }
        if heldStar {
            heldStar = false
            if byte == Self.star {
                bold.toggle()
                lineStyled = true
                out += bold ? Self.boldOn : Self.boldOff
                return
            }
            out.append(Self.star)
        }
        switch byte {
        case Self.star:
            heldStar = true
        case Self.backtick:
            code = true
            lineStyled = true
            out += Self.codeOn
        default:
            Self.escape(character, into: &out)
        }
    }

    private mutating func endLine(into out: inout [UInt8]) {
        closeLine(into: &out)
        out.append(Self.newline)
        atLineStart = true
        // A fence line opens the block or, when it matched the opening fence, closes it.
        if mode == .fence, closesFence { fence = nil }
        closesFence = false
        mode = fence == nil ? .inline : .code
    }

    private mutating func closeLine(into out: inout [UInt8]) {
        if heldStar {
            heldStar = false
            out.append(Self.star)
        }
        if lineStyled || bold || code {
            out += Self.reset
        }
        bold = false
        code = false
        lineStyled = false
    }

    /// How many bytes the UTF-8 sequence starting with `lead` has.
    private static func sequenceWidth(_ lead: UInt8) -> Int {
        switch lead {
        case 0xF0...: 4
        case 0xE0...: 3
        case 0xC0...: 2
        default: 1
        }
    }

    /// Appends characters as a terminal may show them: controls other than tab and newline, C1 controls and
    /// bidirectional overrides escaped as ``TerminalText`` escapes them.
    private static func escape<Bytes: Collection<UInt8>>(_ bytes: Bytes, into out: inout [UInt8]) {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            let end = bytes.index(index, offsetBy: sequenceWidth(byte), limitedBy: bytes.endIndex) ?? bytes.endIndex
            let needsEscape: Bool
            switch byte {
            case 0x09, 0x0A: needsEscape = false
            case ..<0x20, 0x7F: needsEscape = true
            case 0xC2:
                let next = bytes.index(after: index)
                needsEscape = next < end && (0x80...0x9F).contains(bytes[next])
            case 0xE2:
                // U+202A–U+202E (E2 80 AA–AE) and U+2066–U+2069 (E2 81 A6–A9).
                let scalar = Array(bytes[index..<end])
                needsEscape =
                    scalar.count == 3
                    && ((scalar[1] == 0x80 && (0xAA...0xAE).contains(scalar[2]))
                        || (scalar[1] == 0x81 && (0xA6...0xA9).contains(scalar[2])))
            default: needsEscape = false
            }
            if needsEscape {
                out += TerminalText.sanitize(String(decoding: bytes[index..<end], as: UTF8.self)).utf8
            } else {
                out += bytes[index..<end]
            }
            index = end
        }
    }
}
