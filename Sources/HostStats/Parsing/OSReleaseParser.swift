/// Reads `/etc/os-release`, optionally followed by the line of `uname -snrm`, into ``OSInfo``.
///
/// os-release values follow shell quoting (`"…"` with `\` escapes, `'…'`, or bare words). The
/// uname line (`Linux web1 6.1.0-18-amd64 x86_64`) gives family, kernel and architecture; a
/// host without os-release (macOS, old BSD) may send the uname line alone.
public enum OSReleaseParser {
    static let source = "/etc/os-release"

    public static func parse(_ text: String) throws(ParseError) -> OSInfo {
        var values: [String: String] = [:]
        var uname: [Substring]?
        for line in TextScanning.lines(text) {
            let trimmed = line.trimmingBlanks()
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            if let equals = trimmed.firstIndex(of: "="),
                trimmed[..<equals].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") })
            {
                values[String(trimmed[..<equals])] = unquote(trimmed[trimmed.index(after: equals)...])
            } else {
                // `Linux web1 6.1.0-18-amd64 x86_64`: a system name, a host, a release that starts
                // with a digit, and a machine name.
                let fields = TextScanning.fields(trimmed)
                if fields.count == 4, fields[0].allSatisfy(\.isLetter), fields[2].first?.isNumber == true,
                    fields[3].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
                {
                    uname = fields
                }
            }
        }
        guard !values.isEmpty || uname != nil else {
            throw .unexpected(
                source: source, "no `KEY=value` line nor `uname -snrm` line",
                expected: "`cat /etc/os-release; uname -snrm`", text: text)
        }
        let family = uname.map { $0[0].lowercased() } ?? (values["ID"] == "freebsd" ? "freebsd" : "linux")
        var name = values["PRETTY_NAME"]
        if name == nil, let base = values["NAME"] {
            name = values["VERSION"].map { "\(base) \($0)" } ?? base
        }
        var info = OSInfo(
            family: family, name: name, kernel: uname.map { String($0[2]) }, arch: uname.map { String($0[3]) })
        info.nodename = uname.map { String($0[1]) }
        info.release = values
        return info
    }

    private static func unquote(_ value: Substring) -> String {
        guard let first = value.first, first == "\"" || first == "'" else { return String(value.trimmingBlanks()) }
        var result = ""
        var escaped = false
        for character in value.dropFirst() {
            if escaped {
                result.append(character)
                escaped = false
            } else if first == "\"" && character == "\\" {
                escaped = true
            } else if character == first {
                break
            } else {
                result.append(character)
            }
        }
        return result
    }
}
