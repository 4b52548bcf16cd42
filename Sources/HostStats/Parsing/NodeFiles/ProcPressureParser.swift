/// Reads a `/proc/pressure/{cpu,io,memory}` file: `some avg10=0.00 avg60=0.00 avg300=0.00
/// total=123` and, for io and memory (and cpu since Linux 5.13), a `full` line.
public enum ProcPressureParser {
    public static func parse(_ text: String, resource: String) throws(ParseError) -> [PressureStall] {
        let source = "/proc/pressure/\(resource)"
        var stalls: [PressureStall] = []
        for (index, line) in TextScanning.lines(text).enumerated() where !line.isEmpty {
            let fields = TextScanning.fields(line)
            // A kind read twice (a garbled capture) keeps its first line.
            guard let kind = fields.first, kind == "some" || kind == "full",
                !stalls.contains(where: { $0.kind == kind })
            else { continue }
            var values: [Substring: Substring] = [:]
            for field in fields.dropFirst() {
                guard let equals = field.firstIndex(of: "=") else { continue }
                values[field[..<equals]] = field[field.index(after: equals)...]
            }
            guard let avg10 = values["avg10"].flatMap({ Double($0) }),
                let avg60 = values["avg60"].flatMap({ Double($0) }),
                let avg300 = values["avg300"].flatMap({ Double($0) }),
                let total = values["total"].flatMap({ TextScanning.counter($0) })
            else {
                throw ParseError(
                    source: source, message: "`\(kind)` line lacks avg10=, avg60=, avg300= or total=", line: index + 1)
            }
            stalls.append(
                PressureStall(
                    resource: resource, kind: String(kind), avg10: avg10, avg60: avg60, avg300: avg300,
                    totalMicroseconds: total))
        }
        guard !stalls.isEmpty else {
            throw .unexpected(
                source: source, "no `some avg10=… total=…` line", expected: "`cat \(source)`", text: text)
        }
        return stalls
    }
}
