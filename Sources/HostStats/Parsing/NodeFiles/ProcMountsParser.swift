/// Reads `/proc/mounts` (`/dev/vda / ext4 rw,relatime 0 0`; spaces in names written `\040`) for
/// each filesystem's read-only flag.
public enum ProcMountsParser {
    static let source = "/proc/mounts"

    public static func parse(_ text: String) throws(ParseError) -> [MountEntry] {
        var mounts: [MountEntry] = []
        for (index, line) in TextScanning.lines(text).enumerated() where !line.isEmpty {
            let fields = TextScanning.fields(line)
            guard fields.count >= 4 else {
                throw ParseError(
                    source: source, message: "expected device, mount point, type and options", line: index + 1)
            }
            let options = fields[3].split(separator: ",")
            mounts.append(
                MountEntry(
                    device: unescape(fields[0]), mountPoint: unescape(fields[1]), type: String(fields[2]),
                    readOnly: options.contains("ro")))
        }
        guard !mounts.isEmpty else {
            throw .unexpected(source: source, "no mount line", expected: "`cat \(source)`", text: text)
        }
        return mounts
    }

    /// The kernel's octal escapes (`\040` space, `\011` tab, `\012` newline, `\134` backslash).
    static func unescape(_ field: Substring) -> String {
        guard field.contains("\\") else { return String(field) }
        var bytes: [UInt8] = []
        let utf8 = Array(field.utf8)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "\\"), index + 4 <= utf8.count,
                let value = UInt8(String(decoding: utf8[(index + 1)..<(index + 4)], as: UTF8.self), radix: 8)
            {
                bytes.append(value)
                index += 4
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
