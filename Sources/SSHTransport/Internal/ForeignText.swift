/// Text from the other side (what a server or a `ProxyCommand` sent instead of an SSH banner, what a command
/// wrote to standard error) made fit for a one-line message: nothing in it can move the cursor, clear the
/// screen or end the line.
enum ForeignText {
    /// `bytes` in double quotes, with control and format characters, quotes and backslashes escaped (`\r`,
    /// `\x1b`, `\u{202e}`), invalid UTF-8 shown as U+FFFD, and at most `limit` characters before an ellipsis.
    static func quoted(_ bytes: some Sequence<UInt8>, limit: Int = 160) -> String {
        var text = ""
        var count = 0
        var iterator = bytes.makeIterator()
        var decoder = Unicode.UTF8()
        decoding: while count < limit {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                text += escaped(scalar)
            case .error:
                text += "\u{FFFD}"
            case .emptyInput:
                break decoding
            }
            count += 1
        }
        if count == limit, case .scalarValue = decoder.decode(&iterator) { text += "…" }
        return "\"\(text)\""
    }

    /// The last `lastLines` non-blank lines of `bytes`, each quoted, joined with ` / `; empty when there are
    /// none.
    static func quoted(_ bytes: [UInt8], lastLines: Int) -> String {
        let lines = bytes.split(whereSeparator: { $0 == 0x0A || $0 == 0x0D })
            .filter { line in line.contains { $0 != 0x20 && $0 != 0x09 } }
        return lines.suffix(lastLines).map { quoted($0) }.joined(separator: " / ")
    }

    private static func escaped(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\"": return "\\\""
        case "\\": return "\\\\"
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        default: break
        }
        if scalar.value < 0x20 || scalar.value == 0x7F {
            let hex = String(scalar.value, radix: 16)
            return "\\x" + (hex.count == 1 ? "0" : "") + hex
        }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned:
            return "\\u{\(String(scalar.value, radix: 16))}"
        default:
            return String(scalar)
        }
    }
}
