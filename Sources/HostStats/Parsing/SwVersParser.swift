/// Reads macOS `sw_vers` into ``OSInfo``: `ProductName:` and `ProductVersion:` lines
/// (`Key:<TAB>value`), giving names such as `macOS 14.4.1` or, on older releases,
/// `Mac OS X 10.14.6`. macOS has no os-release file; this is its human name.
public enum SwVersParser {
    static let source = "sw_vers"

    /// `ProductName ProductVersion`, the name alone when no version is printed, or `nil` when the
    /// text has no `ProductName:` line.
    public static func productName(_ text: String) -> String? {
        var values: [String: String] = [:]
        for line in TextScanning.lines(text) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            values[String(line[..<colon].trimmingBlanks())] = String(line[line.index(after: colon)...].trimmingBlanks())
        }
        guard let name = values["ProductName"], !name.isEmpty else { return nil }
        guard let version = values["ProductVersion"], !version.isEmpty else { return name }
        return "\(name) \(version)"
    }

    /// The snapshot part for `hostscope parse sw_vers`: `os` with family `darwin` and the name.
    public static func parse(_ text: String) throws(ParseError) -> OSInfo {
        guard let name = productName(text) else {
            throw .unexpected(source: source, "no `ProductName:` line", expected: "`sw_vers`", text: text)
        }
        return OSInfo(family: "darwin", name: name)
    }
}
