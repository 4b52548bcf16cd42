import Foundation

/// The `tools` collector's probe: the classic commands people run by hand — `mpstat`, `free`,
/// `df`, `ps` — in one script, read through the same parsers as `hostscope parse`.
///
/// Kernel counters are still read before and after the `mpstat` interval for network and disk
/// rates, which no classic tool prints in bytes without a second interval of its own. Without
/// sysstat, CPU comes from those `/proc/stat` reads and the snapshot says so. `mpstat` samples
/// whole seconds, so `--sample` is rounded up to one. Process CPU is `ps`'s `%CPU`: the average
/// over each process's lifetime, not the sampling window (the `proc` collector measures the
/// window).
public enum LinuxToolsProbe {
    public static func command(sampleSeconds: Double, nonce: String) -> String {
        let interval = max(1, Int(sampleSeconds.rounded(.up)))
        let marker = "echo " + ProbeOutput.markerPrefix(nonce)
        let counters = "/proc/uptime /proc/stat /proc/net/dev /proc/diskstats"
        return "export LC_ALL=C LANG=C S_TIME_FORMAT=ISO; cd / 2>/dev/null; \(marker)self; echo $$; "
            + "\(marker)sample; head -n 100000 \(counters); "
            + "if command -v mpstat >/dev/null 2>&1; then \(marker)mpstat; mpstat -P ALL \(interval) 1; "
            + "else \(marker)nompstat; sleep \(interval); fi; "
            + "\(marker)sample; head -n 100000 \(counters) /proc/loadavg; "
            + "\(marker)free; free -b; \(marker)df; df -kPT; \(marker)dfi; df -iP; "
            + "\(marker)ps; ps -eo pid,ppid,user:32,pcpu,pmem,rss,args --sort=-pcpu; \(marker)end"
    }

    /// Builds the snapshot sections from the tools' output.
    public static func build(
        into snapshot: inout Snapshot, output: ProbeOutput, sampleSeconds: Double, topProcesses: Int
    ) throws(ParseError) {
        guard output.isComplete else {
            throw ParseError(
                source: "probe", message: "output ended early (no end marker): the host cut the command short")
        }
        let samples = output.sections(named: "sample").map(ProbeOutput.files(in:))
        guard samples.count == 2, let before = samples.first, let after = samples.last,
            let uptimeBefore = before["/proc/uptime"], let uptimeAfter = after["/proc/uptime"],
            let statBefore = before["/proc/stat"], let statAfter = after["/proc/stat"]
        else {
            throw ParseError(source: "probe", message: "no /proc samples in the output: is this a Linux host?")
        }
        // The kernel samples double as the counter samples of the proc collector, so the same
        // builder computes network and disk rates; the tools' figures then replace its gauges.
        var result = LinuxProbeResult()
        do {
            for (files, uptime, stat) in [(before, uptimeBefore, statBefore), (after, uptimeAfter, statAfter)] {
                var sample = LinuxCounterSample(
                    uptimeSeconds: try ProcUptimeParser.parse(uptime), cpu: try ProcStatParser.parse(stat))
                sample.network = (try? ProcNetDevParser.parse(files["/proc/net/dev"] ?? "")) ?? []
                sample.disks = (try? ProcDiskStatsParser.parse(files["/proc/diskstats"] ?? "")) ?? []
                result.samples.append(sample)
            }
        } catch {
            // The tools' own figures do not need the kernel samples: without them there are no
            // network or disk rates (two empty samples at one instant give none), and no CPU
            // figures unless mpstat gives them.
            result.warnings.append(error.description + "; no network or disk rates")
            let empty = LinuxCounterSample(uptimeSeconds: 0, cpu: CPUCounters(total: CPUTicks()))
            result.samples = [empty, empty]
        }
        result.load = after["/proc/loadavg"].flatMap { try? ProcLoadAvgParser.parse($0) }
        if sampleSeconds < 1 {
            result.warnings.append("mpstat samples whole seconds: --sample \(sampleSeconds) s was rounded up to 1 s")
        }

        if let text = output.section("free") {
            do {
                let parsed = try FreeParser.parse(text)
                result.memory = parsed.value
                result.warnings.append(contentsOf: parsed.warnings)
            } catch {
                result.warnings.append(error.description)
            }
        }
        if let text = output.section("df") {
            do {
                let parsed = try DfParser.parse(text)
                result.disks = parsed.value
                result.warnings.append(contentsOf: parsed.warnings)
                if let inodes = output.section("dfi").flatMap({ try? DfParser.parse($0).value }) {
                    result.disks = LinuxProcProbe.joinInodes(inodes, into: parsed.value)
                }
            } catch {
                result.warnings.append(error.description)
            }
        }
        LinuxSnapshotBuilder.build(
            into: &snapshot, result: result, previous: result.samples[0], current: result.samples[1],
            topProcesses: 0)

        if let text = output.section("mpstat") {
            do {
                let parsed = try MpstatParser.parse(text)
                snapshot.cpu = parsed.value
                snapshot.cpu?.sampleMs = Double(max(1, Int(sampleSeconds.rounded(.up)))) * 1000
                snapshot.warnings.append(contentsOf: parsed.warnings)
            } catch {
                snapshot.warnings.append(error.description + "; CPU read from /proc/stat instead")
            }
        } else {
            snapshot.warnings.append("mpstat not found (install sysstat): CPU read from /proc/stat instead")
        }

        if let text = output.section("ps") {
            do {
                let parsed = try PsParser.parse(text)
                let selfPID = output.section("self").flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
                let rows = parsed.value.filter { $0.pid != selfPID && $0.ppid != selfPID }
                snapshot.processes = Array(rows.prefix(topProcesses))
                snapshot.warnings.append(contentsOf: parsed.warnings)
            } catch {
                snapshot.warnings.append(error.description)
            }
        }
    }
}
