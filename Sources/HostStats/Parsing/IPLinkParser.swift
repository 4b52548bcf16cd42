/// Reads `ip -s link` (iproute2) into per-interface counters.
///
/// Each interface is a `N: name: <FLAGS> …` line followed by `RX:` and `TX:` header lines, each
/// with its figures on the next line; columns are mapped by those header names (`bytes packets
/// errors dropped …`), which differ slightly between iproute2 versions. `-s -s` adds
/// `RX errors:` detail blocks, which are skipped. A `name@parent` suffix is removed so that
/// names match `/proc/net/dev`.
public enum IPLinkParser {
    static let source = "ip"

    /// The interfaces, warnings left out (see ``parse(_:warnings:)``).
    public static func parse(_ text: String) throws(ParseError) -> [NetworkInterfaceStats] {
        var warnings: [String] = []
        return try parse(text, warnings: &warnings)
    }

    /// The interfaces; a counter beyond 2^64 is left out (`null`) and named in `warnings`.
    public static func parse(_ text: String, warnings: inout [String]) throws(ParseError) -> [NetworkInterfaceStats] {
        var interfaces: [NetworkInterfaceStats] = []
        var header: (direction: Substring, names: [Substring])?
        for (index, line) in TextScanning.lines(text).enumerated() {
            let fields = TextScanning.fields(line)
            guard let first = fields.first else { continue }
            if line.first != " ", first.hasSuffix(":"), Int(first.dropLast()) != nil, fields.count >= 2 {
                var name = fields[1].hasSuffix(":") ? fields[1].dropLast() : fields[1]
                if let at = name.firstIndex(of: "@") { name = name[..<at] }
                interfaces.append(NetworkInterfaceStats(interface: String(name)))
                header = nil
                continue
            }
            if first == "RX:" || first == "TX:" {
                header = (first, Array(fields.dropFirst()))
                continue
            }
            guard let current = header, !interfaces.isEmpty else { continue }
            header = nil
            guard fields.count == current.names.count else {
                throw ParseError(
                    source: source,
                    message:
                        "\(current.direction) figures do not match the header \(current.names.joined(separator: " "))",
                    line: index + 1)
            }
            var values: [String: UInt64] = [:]
            for (name, value) in zip(current.names, fields) {
                switch TextScanning.readCounter(value) {
                case .value(let number): values[String(name)] = number
                case .outOfRange:
                    let interface = interfaces[interfaces.count - 1].interface
                    warnings.append(
                        TextScanning.outOfRangeWarning("ip \(current.direction) \(name) of \(interface)", value))
                case nil:
                    throw ParseError(
                        source: source, message: "`\(value)` under \(name) is not a counter", line: index + 1)
                }
            }
            let position = interfaces.count - 1
            if current.direction == "RX:" {
                interfaces[position].rxBytes = values["bytes"]
                interfaces[position].rxErrors = values["errors"]
                interfaces[position].rxDropped = values["dropped"]
            } else {
                interfaces[position].txBytes = values["bytes"]
                interfaces[position].txErrors = values["errors"]
                interfaces[position].txDropped = values["dropped"]
            }
        }
        guard !interfaces.isEmpty else {
            throw .unexpected(
                source: source, "no `N: name: <…>` interface line", expected: "`ip -s link`", text: text)
        }
        guard interfaces.contains(where: { $0.rxBytes != nil }) else {
            throw .unexpected(
                source: source, "interfaces but no `RX:` counters (was `-s` left out?)", expected: "`ip -s link`",
                text: text)
        }
        return interfaces
    }
}
