/// Reads Linux sysstat `iostat` output (`-x` of 10.x with `Device:`, 11.x, 12.x; the basic
/// `tps kB_read/s` report; `-k`, `-m`, `-t`, any locale) into per-device rates and CPU shares.
///
/// iostat's first report covers the time since boot; only a later report is an interval. So
/// the **last** report is used when there are several (`iostat -dxk 1 2`), and a lone report
/// yields device names and the core count with every figure `null` and a warning, unless it
/// is an interval report known as such. Device columns are mapped by header name; rates in KiB,
/// MiB or 512-byte sectors are converted to bytes. `avg-cpu` shares fill the CPU section;
/// iostat's `%system` includes interrupt time, so `irq_percent` and `softirq_percent` are `null`.
public enum IostatParser {
    static let source = "iostat"

    /// Per-device rates and, when the report had `avg-cpu`, CPU shares.
    public struct Report: Sendable, Equatable {
        public var devices: [BlockDeviceStats]
        public var cpu: CPUStats?
    }

    private struct RawReport {
        var cpu: [String: Double] = [:]
        var devices: [BlockDeviceStats] = []
    }

    public static func parse(_ text: String) throws(ParseError) -> Parsed<Report> {
        var reports: [RawReport] = []
        var cores: Int?
        var cpuHeader: [Substring]?
        var deviceHeader: [Substring]?
        var sawHeader = false
        for (index, line) in TextScanning.lines(text).enumerated() {
            let fields = TextScanning.fields(line)
            guard let first = fields.first else {
                deviceHeader = nil
                continue
            }
            if fields.count >= 2, fields.last == "CPU)", let count = Int(fields[fields.count - 2].dropFirst()) {
                cores = count
                deviceHeader = nil
                continue
            }
            if first == "avg-cpu:" {
                cpuHeader = Array(fields.dropFirst())
                reports.append(RawReport())
                sawHeader = true
                continue
            }
            if let header = cpuHeader {
                cpuHeader = nil
                guard fields.count == header.count else {
                    throw ParseError(
                        source: source, message: "avg-cpu row has \(fields.count) figures for \(header.count) columns",
                        line: index + 1)
                }
                for (name, value) in zip(header, fields) {
                    guard let number = TextScanning.localizedDouble(value) else {
                        throw ParseError(
                            source: source, message: "`\(value)` under \(name) is not a number", line: index + 1)
                    }
                    reports[reports.count - 1].cpu[String(name)] = number
                }
                continue
            }
            if first == "Device:" || first == "Device" {
                deviceHeader = Array(fields.dropFirst())
                sawHeader = true
                // A device table right after an avg-cpu row belongs to that report; otherwise it opens one.
                if let last = reports.last, last.devices.isEmpty, !last.cpu.isEmpty {
                } else {
                    reports.append(RawReport())
                }
                continue
            }
            guard let header = deviceHeader else { continue }
            guard fields.count == header.count + 1 else {
                throw ParseError(
                    source: source,
                    message: "row for \(first) has \(fields.count - 1) figures for \(header.count) columns",
                    line: index + 1)
            }
            reports[reports.count - 1].devices.append(try device(fields, header: header, line: index + 1))
        }
        guard sawHeader, !reports.isEmpty else {
            throw .unexpected(source: source, "no `avg-cpu:` or `Device` header", expected: "`iostat`", text: text)
        }
        var warnings: [String] = []
        if reports.count == 1 {
            let names = reports[0].devices.map { BlockDeviceStats(device: $0.device) }
            warnings.append(
                "iostat printed one report, which covers the time since boot: figures need a second report "
                    + "(`iostat -dxk 1 2`)")
            return Parsed(
                Report(devices: names, cpu: reports[0].cpu.isEmpty ? nil : CPUStats(cores: cores)), warnings: warnings)
        }
        let last = reports[reports.count - 1]
        if last.devices.contains(where: { $0.readBytesPerSecond == nil && $0.bytesPerSecond == nil }) {
            warnings.append(
                "iostat device columns without a known read/write rate (rkB/s, kB_read/s, …): rates unknown")
        }
        return Parsed(Report(devices: last.devices, cpu: cpuStats(last.cpu, cores: cores)), warnings: warnings)
    }

    private static func cpuStats(_ values: [String: Double], cores: Int?) -> CPUStats? {
        guard let idle = values["%idle"] else { return nil }
        let iowait = values["%iowait"]
        return CPUStats(
            cores: cores, busyPercent: (100 - idle - (iowait ?? 0)).rounded(toPlaces: 4),
            activePercent: (100 - idle).rounded(toPlaces: 4),
            userPercent: values["%user"], nicePercent: values["%nice"], systemPercent: values["%system"],
            iowaitPercent: iowait, stealPercent: values["%steal"], idlePercent: idle)
    }

    private static func device(_ fields: [Substring], header: [Substring], line: Int) throws(ParseError)
        -> BlockDeviceStats
    {
        var values: [String: Double] = [:]
        for (name, value) in zip(header, fields.dropFirst()) {
            guard let number = TextScanning.localizedDouble(value) else {
                throw ParseError(source: source, message: "`\(value)` under \(name) is not a number", line: line)
            }
            values[String(name)] = number
        }
        func rate(_ candidates: [(String, Double)]) -> Double? {
            for (name, scale) in candidates { if let value = values[name] { return value * scale } }
            return nil
        }
        let kib = 1024.0
        let mib = 1_048_576.0
        return BlockDeviceStats(
            device: String(fields[0]),
            readBytesPerSecond: rate([
                ("rkB/s", kib), ("rMB/s", mib), ("rsec/s", 512), ("kB_read/s", kib), ("MB_read/s", mib),
                ("Blk_read/s", 512),
            ]),
            writeBytesPerSecond: rate([
                ("wkB/s", kib), ("wMB/s", mib), ("wsec/s", 512), ("kB_wrtn/s", kib), ("MB_wrtn/s", mib),
                ("Blk_wrtn/s", 512),
            ]),
            readsPerSecond: values["r/s"], writesPerSecond: values["w/s"], utilizationPercent: values["%util"],
            transfersPerSecond: values["tps"])
    }
}
