/// The `proc` collector's probe: one POSIX `sh` script that reads the kernel's own counters
/// and gauges, so a snapshot costs one round trip and a handful of processes on the host.
///
/// Each sample is one `head` over `/proc/uptime`, `/proc/stat`, `/proc/net/dev` and
/// `/proc/diskstats` plus one `cat` of every `/proc/PID/stat`. A one-off snapshot takes two
/// samples `--sample` apart inside the script (CPU and rates are deltas, never since-boot
/// averages); `watch` takes one per tick and uses the previous tick's. The gauges follow:
/// `/proc/meminfo`, `/proc/loadavg`, `df -kPT`, `df -iP` and `ps` for user names and
/// command lines. Everything runs under `LC_ALL=C`.
public enum LinuxProcProbe {
    /// The script; `sampleSeconds` > 0 takes two samples that far apart, `nil` or 0 one.
    public static func command(sampleSeconds: Double?) -> String {
        let counters = "/proc/uptime /proc/stat /proc/net/dev /proc/diskstats"
        var script = "export LC_ALL=C LANG=C; cd / 2>/dev/null; echo @@self; echo $$; "
        if let sampleSeconds, sampleSeconds > 0 {
            script += "echo @@sample; head -n 100000 \(counters); echo @@pids; cat /proc/[0-9]*/stat 2>/dev/null; "
            script += "sleep \(formatSeconds(sampleSeconds)); "
        }
        script += "echo @@sample; head -n 100000 \(counters) /proc/meminfo /proc/loadavg; "
        script += "echo @@pids; cat /proc/[0-9]*/stat 2>/dev/null; "
        script += "echo @@df; df -kPT; echo @@dfi; df -iP; "
        script += "echo @@ps; ps -eo pid,ppid,user:32,rss,args; "
        script += "echo @@end"
        return script
    }

    /// `0.25`, not `0.25000000000000000`; `sleep` wants a plain decimal.
    static func formatSeconds(_ seconds: Double) -> String {
        let millis = Int((seconds * 1000).rounded())
        return millis % 1000 == 0 ? String(millis / 1000) : "\(millis / 1000).\(String(format: "%03d", millis % 1000))"
    }

    /// Reads the probe's output. Counter samples are required; a gauge that could not be read
    /// becomes a warning, and the rest of the snapshot is kept.
    public static func parse(_ output: ProbeOutput) throws(ParseError) -> LinuxProbeResult {
        guard output.isComplete else {
            throw ParseError(
                source: "probe", message: "output ended early (no @@end marker): the host cut the command short")
        }
        let sampleTexts = output.sections(named: "sample")
        let pidTexts = output.sections(named: "pids")
        guard !sampleTexts.isEmpty, sampleTexts.count == pidTexts.count else {
            throw ParseError(source: "probe", message: "no /proc samples in the output: is this a Linux host?")
        }
        var result = LinuxProbeResult()
        result.probePID = output.section("self").flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        for (sampleText, pidText) in zip(sampleTexts, pidTexts) {
            let files = ProbeOutput.files(in: sampleText)
            guard let uptimeText = files["/proc/uptime"], let statText = files["/proc/stat"] else {
                throw ParseError(source: "probe", message: "/proc/uptime or /proc/stat could not be read")
            }
            var sample = LinuxCounterSample(
                uptimeSeconds: try ProcUptimeParser.parse(uptimeText), cpu: try ProcStatParser.parse(statText))
            if let text = files["/proc/net/dev"] {
                do { sample.network = try ProcNetDevParser.parse(text) } catch { result.warnings.append(error.description) }
            }
            if let text = files["/proc/diskstats"] {
                do { sample.disks = try ProcDiskStatsParser.parse(text) } catch { result.warnings.append(error.description) }
            }
            do { sample.processes = try ProcPidStatParser.parse(pidText) } catch { result.warnings.append(error.description) }
            result.samples.append(sample)
            if let text = files["/proc/meminfo"] {
                do { result.memory = try ProcMemInfoParser.parse(text) } catch { result.warnings.append(error.description) }
            }
            if let text = files["/proc/loadavg"] {
                do { result.load = try ProcLoadAvgParser.parse(text) } catch { result.warnings.append(error.description) }
            }
        }
        if let text = output.section("df") {
            do {
                let parsed = try DfParser.parse(text)
                result.disks = parsed.value
                result.warnings.append(contentsOf: parsed.warnings)
            } catch {
                result.warnings.append(error.description)
            }
        }
        if let text = output.section("dfi"), result.disks != nil {
            // Inode counts come from a second df; filesystems without inodes (vfat…) keep nil.
            if let inodes = try? DfParser.parse(text).value {
                for index in result.disks!.indices {
                    let mount = result.disks![index].mount
                    guard let match = inodes.first(where: { $0.mount == mount }) else { continue }
                    result.disks![index].inodesTotal = match.inodesTotal ?? match.sizeBytes
                    result.disks![index].inodesUsed = match.inodesUsed ?? match.usedBytes
                }
            }
        }
        if let text = output.section("ps") {
            do {
                let parsed = try PsParser.parse(text)
                result.processTable = parsed.value
                result.warnings.append(contentsOf: parsed.warnings)
            } catch {
                result.warnings.append(error.description)
            }
        }
        return result
    }
}

/// One read of the kernel's counters.
public struct LinuxCounterSample: Sendable, Equatable {
    /// `/proc/uptime`: the host's own clock for the interval between two samples.
    public var uptimeSeconds: Double
    public var cpu: CPUCounters
    public var network: [NetworkInterfaceStats] = []
    public var disks: [DiskIOCounters] = []
    public var processes: [ProcessSample] = []

    public init(
        uptimeSeconds: Double, cpu: CPUCounters, network: [NetworkInterfaceStats] = [], disks: [DiskIOCounters] = [],
        processes: [ProcessSample] = []
    ) {
        self.uptimeSeconds = uptimeSeconds
        self.cpu = cpu
        self.network = network
        self.disks = disks
        self.processes = processes
    }
}

/// Everything one run of the probe yielded.
public struct LinuxProbeResult: Sendable {
    /// One or two counter samples, oldest first.
    public var samples: [LinuxCounterSample] = []
    public var memory: MemoryStats?
    public var load: LoadAverage?
    public var disks: [DiskStats]?
    /// `ps` rows: user names, resident sizes and command lines by pid.
    public var processTable: [ProcessStats]?
    /// The probe's own shell; it and its children are left out of the process list.
    public var probePID: Int?
    public var warnings: [String] = []
}
