import ValueFormats

/// Makes text from a host safe to print on a terminal.
///
/// Process names, mount points, owner names, prompts, error messages and file contents come from
/// machines the user does not fully control; an ESC or other control character in them could
/// rewrite the user's terminal (OSC 52 writes the clipboard, OSC 0 the window title, `ESC[2J`
/// clears the screen). They are shown escaped (`\e`, `\x07`, `\n`), visibly and reversibly.
///
/// This is the one escaping function of the terminal output: the command line's sinks apply it
/// to everything they write (see ``TerminalOutput``), and renderers apply it to single fields,
/// where a newline would also break the layout.
public enum TerminalText {
    /// `text` with every control character escaped, newlines and tabs included: for one field of
    /// a line (a name, a message, a cell).
    public static func sanitize(_ text: String) -> String {
        sanitize(text, keepingLayout: false)
    }

    /// `text` with control characters escaped; with `keepingLayout`, newlines, tabs and the CR of
    /// a CRLF line end stay as they are (for whole lines and pages of text). A CR anywhere else
    /// could return to the start of the line and overwrite what was shown, so it is escaped.
    public static func sanitize(_ text: String, keepingLayout: Bool) -> String {
        let scalars = text.unicodeScalars
        guard scalars.contains(where: { needsEscape($0, keepingLayout: keepingLayout) || $0 == "\r" }) else {
            return text
        }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let scalar = scalars[index]
            index = scalars.index(after: index)
            if scalar == "\r", keepingLayout, index < scalars.endIndex, scalars[index] == "\n" {
                out.unicodeScalars.append(scalar)
            } else if needsEscape(scalar, keepingLayout: keepingLayout) {
                out += escaped(scalar)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Bytes that may not be UTF-8 (file contents, a line a host printed) as terminal-safe text:
    /// lines (LF or CRLF) and tabs kept, every other control character, escape sequence and
    /// invalid UTF-8 byte shown escaped (a piece holding invalid UTF-8 in the reversible form of
    /// `EscapedText`, as file names are shown).
    public static func sanitize<Bytes: BidirectionalCollection<UInt8>>(bytes: Bytes) -> String {
        var out = ""
        out.reserveCapacity(bytes.count)
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        for (index, line) in lines.enumerated() {
            let last = index == lines.count - 1
            // The CR of a CRLF line end is layout; it is put back after the line's text.
            let crlf = !last && line.last == UInt8(ascii: "\r")
            let text = line.dropLast(crlf ? 1 : 0)
            let pieces = text.split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false)
            for (pieceIndex, piece) in pieces.enumerated() {
                if pieceIndex > 0 { out += "\t" }
                if let text = String(validating: piece, as: UTF8.self) {
                    out += sanitize(text)
                } else {
                    out += EscapedText.encode(Array(piece))
                }
            }
            if crlf { out += "\r" }
            if !last { out += "\n" }
        }
        return out
    }

    /// ``sanitize(bytes:)`` as bytes, for sinks of data that reach a terminal.
    public static func escaped(bytes: [UInt8]) -> [UInt8] {
        Array(sanitize(bytes: bytes).utf8)
    }

    /// Whether `bytes` hold nothing ``sanitize(bytes:)`` would change: valid UTF-8 without
    /// control characters other than newline, tab and the CR of a CRLF line end.
    public static func isSafe<Bytes: Collection<UInt8>>(bytes: Bytes) -> Bool {
        var previous: UInt8 = 0
        var ascii = true
        for byte in bytes {
            if previous == 0x0D, byte != 0x0A { return false }
            if byte < 0x20, byte != 0x0A, byte != 0x09, byte != 0x0D { return false }
            if byte >= 0x7F { ascii = false }
            previous = byte
        }
        if previous == 0x0D { return false }
        // ASCII without controls is the common case and needs no decoding.
        if ascii { return true }
        guard let text = String(validating: bytes, as: UTF8.self) else { return false }
        return !text.unicodeScalars.contains { needsEscape($0, keepingLayout: true) && $0 != "\r" }
    }

    /// C0 and C1 controls, DEL, and the bidirectional overrides that reorder what is shown.
    static func needsEscape(_ scalar: Unicode.Scalar, keepingLayout: Bool) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: !keepingLayout
        case 0x00..<0x20, 0x7F, 0x80..<0xA0, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// The escaped form of one scalar that needs escaping.
    static func escaped(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\u{1B}": return "\\e"
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        default:
            let value = scalar.value
            return value < 0x100 ? "\\x" + Hex.string(value, width: 2) : "\\u{" + Hex.string(value, width: 4) + "}"
        }
    }

    /// Shortens `text` to `width` columns with an ellipsis (counting characters as one column).
    public static func truncate(_ text: String, to width: Int) -> String {
        guard width > 1, text.count > width else { return text }
        return String(text.prefix(width - 1)) + "…"
    }

    /// Shortens `text` to `width` columns from its start (`…vg0-root`): for names whose end tells them apart,
    /// such as devices and file names.
    public static func truncateStart(_ text: String, to width: Int) -> String {
        guard width > 1, text.count > width else { return text }
        return "…" + String(text.suffix(width - 1))
    }

    /// Shortens `text` to `width` columns in its middle (`/var/lib/…/merged`): for paths, whose start says
    /// where they are and whose end what they are.
    public static func truncateMiddle(_ text: String, to width: Int) -> String {
        guard width > 2, text.count > width else { return truncate(text, to: width) }
        let kept = width - 1
        let head = (kept + 1) / 2
        return String(text.prefix(head)) + "…" + String(text.suffix(kept - head))
    }

    /// `parts` joined with ` · `, a new line (starting with `indent`) wherever the next part would pass `width`
    /// columns; a part longer than a line is cut. For summary lines that must fit a terminal.
    public static func wrapped(_ parts: [String], width: Int, indent: String) -> [String] {
        var lines: [String] = []
        var line = ""
        for part in parts {
            if line.isEmpty {
                line = part
            } else if line.count + 3 + part.count <= width {
                line += " · " + part
            } else {
                lines.append(line)
                line = indent + part
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines.map { truncate($0, to: width) }
    }

    /// `text` broken between words into lines of at most `width` columns, each line after the first starting
    /// with `indent`; a word longer than a line is cut where the line ends.
    public static func wordWrapped(_ text: String, width: Int, indent: String = "") -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            let prefix = lines.isEmpty ? "" : indent
            if line.isEmpty {
                line = prefix + word
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = indent + word
            }
            while line.count > width, width > indent.count {
                lines.append(String(line.prefix(width)))
                line = indent + line.dropFirst(width)
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    /// `text` padded with spaces to `width` columns, on the left when `right`-aligned; longer text is left as is.
    public static func padded(_ text: String, to width: Int, right: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - text.count))
        return right ? padding + text : text + padding
    }
}
