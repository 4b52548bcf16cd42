/// Reads `/proc/net/softnet_stat`: a line of hexadecimal columns per CPU (processed, dropped,
/// time squeezed, then columns kernels have added over time). The CPU is the line's place, or
/// its thirteenth column where the kernel prints it (Linux 5.10+ skips offline CPUs).
public enum ProcSoftnetParser {
    static let source = "/proc/net/softnet_stat"

    public static func parse(_ text: String) throws(ParseError) -> [SoftnetCPU] {
        var cpus: [SoftnetCPU] = []
        for (index, line) in TextScanning.lines(text).enumerated() where !line.isEmpty {
            let fields = TextScanning.fields(line)
            let values = fields.map { UInt64($0, radix: 16) }
            guard fields.count >= 3, let processed = values[0], let dropped = values[1], let squeezed = values[2]
            else {
                throw ParseError(
                    source: source, message: "expected at least three hexadecimal columns", line: index + 1)
            }
            let cpu = fields.count >= 13 ? values[12].flatMap { Int(exactly: $0) } ?? cpus.count : cpus.count
            cpus.append(SoftnetCPU(cpu: cpu, processed: processed, dropped: dropped, timeSqueezed: squeezed))
        }
        guard !cpus.isEmpty else {
            throw .unexpected(source: source, "no CPU line", expected: "`cat \(source)`", text: text)
        }
        return cpus
    }
}
