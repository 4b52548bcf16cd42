/// Makes text from a host safe to print on a terminal.
///
/// Process names, mount points and file contents come from machines the user does not fully
/// control; an ESC or other control character in them could rewrite the user's terminal. On a
/// terminal they are shown escaped (`\e`, `\x07`, `\n`), visibly and reversibly.
public enum TerminalText {
    public static func sanitize(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\u{1B}": out += "\\e"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                let value = scalar.value
                out += value < 0x100 ? "\\x" + hex(value, width: 2) : "\\u{" + hex(value, width: 4) + "}"
            }
        }
        return out
    }

    /// C0 and C1 controls, DEL, and the bidirectional overrides that reorder what is shown.
    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x7F, 0x80..<0xA0, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    private static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// Shortens `text` to `width` columns with an ellipsis (counting characters as one column).
    public static func truncate(_ text: String, to width: Int) -> String {
        guard width > 1, text.count > width else { return text }
        return String(text.prefix(width - 1)) + "…"
    }
}
