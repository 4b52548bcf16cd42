import Foundation

/// The `macos` collector's probe: one script of the tools macOS ships, read by the same parsers
/// as `hostscope parse`.
///
/// - CPU: `top -l 2 -n 0 -s S`, the second sample's `CPU usage:` line, a delta over `S` whole
///   seconds (`--sample` rounded up). The first sample is not an interval and is never used.
/// - Memory: `vm_stat` pages × the page size its header states (16384 on Apple Silicon, 4096
///   on Intel), total from `sysctl hw.memsize`, swap from `vm.swapusage`. `used = app + wired +
///   compressed` (Activity Monitor's "Memory Used"; `active + wired` before the compressor), as
///   `definition` says.
/// - Cores, load, uptime: `sysctl hw.ncpu vm.loadavg kern.boottime`; uptime is the host's clock
///   minus the boot time.
/// - Network: `netstat -ibn`, the `<Link#N>` row of each interface (older releases cut names to
///   five characters: links sharing a cut name are told apart as `name#N`). Rates are deltas
///   between two reads of the host's clock and counters. Drops are `null`: `-d` would add only
///   outgoing drops, and not on every release.
/// - Disks: `df -kP`, then `df -i` for inodes. Zero-sized autofs maps (`map -hosts`) are left
///   out, as Linux df leaves out dummy filesystems; APFS's inode total (~2^63, "no limit") is
///   `null`.
/// - Processes: `ps -A -o pid,ppid,user,%cpu,%mem,rss,command`, busiest first (macOS ps cannot
///   sort).
///
/// The host's clock is read with sub-second precision through the system Perl
/// (`Time::HiRes`); without Perl, `date +%s` gives whole seconds and rates over short windows
/// are correspondingly coarse.
///
/// A one-off snapshot reads the network counters before and after `top`'s interval, so its
/// rates cover the same window as its CPU figures. A `watch` tick reads them once and takes
/// deltas against the previous tick (none on the first tick); its CPU figures still come from
/// `top`'s own two samples, so every tick spends `S` seconds on the host, where a Linux tick
/// reads counters and returns at once. macOS offers no per-CPU tick counters to a shell, so
/// `per_core` is empty.
///
/// `cpu_percent` of a process is what macOS `ps` prints: a decaying average over roughly the
/// last minute, not a share of the sampling window. Disk I/O rates are `null`: macOS tools
/// report throughput per disk (`disk0`), not per mounted filesystem, and without a read/write
/// split.
///
/// The script is also valid `zsh`, the login shell macOS gives new accounts, which is what an
/// SSH server runs commands with: no globs, no reliance on word splitting.
public enum MacProbe {
    /// `top -s` takes whole seconds.
    public static func topSeconds(_ sampleSeconds: Double) -> Int {
        max(1, Int(sampleSeconds.rounded(.up)))
    }

    static let clock = "perl -MTime::HiRes=time -e 'printf \"%.6f\\n\", time' 2>/dev/null || date +%s"
    static let netstat = "netstat -ibn"

    /// The script. With `sampled`, network counters are read before and after `top`'s interval
    /// as well; without, once after it (a `watch` tick).
    public static func command(sampleSeconds: Double, sampled: Bool, nonce: String) -> String {
        let marker = "echo " + ProbeOutput.markerPrefix(nonce)
        var script = "export LC_ALL=C LANG=C; cd / 2>/dev/null; \(marker)self; echo $$; "
        if sampled {
            script += "\(marker)clock; \(clock); \(marker)netstat; \(netstat); "
        }
        script += "\(marker)top; top -l 2 -n 0 -s \(topSeconds(sampleSeconds)); "
        script += "\(marker)clock; \(clock); \(marker)netstat; \(netstat); "
        script += "\(marker)sysctl; sysctl hw.memsize hw.ncpu vm.swapusage kern.boottime vm.loadavg; "
        script += "\(marker)vm_stat; vm_stat; "
        script += "\(marker)df; df -kP; \(marker)dfi; df -i 2>/dev/null; "
        script += "\(marker)ps; ps -A -o pid,ppid,user,%cpu,%mem,rss,command; \(marker)end"
        return script
    }

    /// Reads the probe's output. Samples of the clock and network counters are required; any
    /// other part that could not be read becomes a warning, and the rest is kept.
    public static func parse(_ output: ProbeOutput, sampleSeconds: Double) throws(ParseError) -> MacProbeResult {
        guard output.isComplete else {
            throw ParseError(
                source: "probe", message: "output ended early (no end marker): the host cut the command short")
        }
        var result = MacProbeResult()
        result.probePID = output.section("self").flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }

        let clocks = output.sections(named: "clock")
        let netstats = output.sections(named: "netstat")
        guard !clocks.isEmpty, clocks.count == netstats.count else {
            throw ParseError(
                source: "probe", message: "no clock and netstat samples in the output: is this a macOS host?")
        }
        for (clockText, netstatText) in zip(clocks, netstats) {
            // `inf` or `1e400` would make every rate zero: a clock must be a finite time.
            guard let clock = Double(clockText.trimmingCharacters(in: .whitespacesAndNewlines)), clock.isFinite
            else {
                throw ParseError(source: "probe", message: "`\(clockText.prefix(40))` is not a time in seconds")
            }
            var sample = MacCounterSample(clock: clock)
            do {
                let parsed = try NetstatParser.parse(netstatText)
                sample.network = parsed.value
                if result.samples.isEmpty { result.warnings.append(contentsOf: parsed.warnings) }
            } catch {
                if result.samples.isEmpty { result.warnings.append(error.description) }
            }
            result.samples.append(sample)
        }

        var sysctl: SysctlParser.Values?
        do {
            sysctl = try SysctlParser.parse(output.section("sysctl") ?? "")
            result.warnings.append(contentsOf: sysctl?.warnings ?? [])
        } catch {
            result.warnings.append(error.description)
        }
        result.cores = sysctl?.logicalCPUs
        result.load = sysctl?.load
        result.bootTime = sysctl?.bootTime

        if let text = output.section("top") {
            do {
                let parsed = try MacTopParser.parse(text)
                result.cpu = parsed.value.cpu
                result.cpu?.sampleMs = Double(topSeconds(sampleSeconds)) * 1000
                result.warnings.append(contentsOf: parsed.warnings)
                if result.load == nil { result.load = parsed.value.load }
            } catch {
                result.warnings.append(error.description)
            }
        }

        if let text = output.section("vm_stat") {
            do {
                // The page counts do not add up to the installed memory: hw.memsize is the total.
                let memsize = sysctl?.memoryBytes.map { "\nhw.memsize: \($0)\n" } ?? ""
                var memory = try VmStatParser.parse(text + memsize, warnings: &result.warnings)
                memory.swapTotalBytes = sysctl?.swapTotalBytes
                memory.swapUsedBytes = sysctl?.swapUsedBytes
                result.memory = memory
            } catch {
                result.warnings.append(error.description)
            }
        }

        if let text = output.section("df") {
            do {
                let parsed = try DfParser.parse(text)
                var disks = parsed.value.filter { $0.sizeBytes != 0 }
                if let inodes = output.section("dfi").flatMap({ try? DfParser.parse($0).value }) {
                    disks = LinuxProcProbe.joinInodes(inodes, into: disks).map { disk in
                        // APFS has no fixed inode count and reports ~2^63 free: not a capacity,
                        // and past what JSON readers hold exactly (2^53).
                        var disk = disk
                        if let total = disk.inodesTotal, total >= 1 << 53 { disk.inodesTotal = nil }
                        return disk
                    }
                }
                result.disks = disks
                result.warnings.append(contentsOf: parsed.warnings)
            } catch {
                result.warnings.append(error.description)
            }
        }

        if let text = output.section("ps") {
            do {
                // PsParser's note on %CPU describes Linux ps; macOS's figure is documented above.
                let parsed = try PsParser.parse(text)
                result.processes = parsed.value
                result.warnings.append(contentsOf: parsed.warnings.filter { !$0.hasPrefix("ps %CPU") })
            } catch {
                result.warnings.append(error.description)
            }
        }
        return result
    }
}

/// One read of a macOS host's clock and network counters.
public struct MacCounterSample: Sendable, Equatable {
    /// The host's clock, in seconds since 1970.
    public var clock: Double
    public var network: [NetworkInterfaceStats]

    public init(clock: Double, network: [NetworkInterfaceStats] = []) {
        self.clock = clock
        self.network = network
    }
}

/// Everything one run of the macOS probe yielded.
public struct MacProbeResult: Sendable {
    /// One or two counter samples, oldest first.
    public var samples: [MacCounterSample] = []
    /// CPU shares over `top`'s interval.
    public var cpu: CPUStats?
    public var cores: Int?
    public var memory: MemoryStats?
    public var load: LoadAverage?
    /// `kern.boottime`, in seconds since 1970.
    public var bootTime: Int64?
    public var disks: [DiskStats]?
    /// Every process `ps` listed, the probe's own included.
    public var processes: [ProcessStats]?
    /// The probe's own shell; it and its children are left out of the process list.
    public var probePID: Int?
    public var warnings: [String] = []
}

/// Turns macOS probe results into a snapshot; network rates from the deltas between two counter
/// samples under the rules of ``LinuxSnapshotBuilder`` (none without an earlier sample, none
/// for a counter that went back).
public enum MacSnapshotBuilder {
    /// Fills `snapshot` from `current`, taking network deltas against `previous`.
    public static func build(
        into snapshot: inout Snapshot, result: MacProbeResult, previous: MacCounterSample?,
        current: MacCounterSample, topProcesses: Int
    ) {
        // The clock is printed to the microsecond; rounding to it drops the float noise of
        // subtracting two ~1.7e9 figures (1.1000001430511475).
        let elapsed = previous.map { ((current.clock - $0.clock) * 1e6).rounded() / 1e6 }.flatMap { $0 > 0 ? $0 : nil }
        // A clock past Int64's range (which no host has) gives no uptime rather than a trap.
        if let boot = result.bootTime, let now = Int64(exactly: current.clock.rounded(.down)), now >= boot, boot >= 0 {
            snapshot.uptimeSeconds = Double(now - boot)
        }
        snapshot.load = result.load
        snapshot.memory = result.memory
        var cpu = result.cpu ?? CPUStats()
        cpu.cores = result.cores ?? cpu.cores
        snapshot.cpu = cpu

        let before = Dictionary(
            (previous?.network ?? []).map { ($0.interface, $0) }, uniquingKeysWith: { first, _ in first })
        snapshot.network = current.network.map { interface in
            var stats = interface
            stats.rxBytesPerSecond = nil
            stats.txBytesPerSecond = nil
            if let elapsed, let earlier = before[interface.interface] {
                stats.rxBytesPerSecond = LinuxSnapshotBuilder.rate(earlier.rxBytes, interface.rxBytes, elapsed)
                stats.txBytesPerSecond = LinuxSnapshotBuilder.rate(earlier.txBytes, interface.txBytes, elapsed)
            }
            return stats
        }
        snapshot.disks = result.disks ?? []

        let probe = result.probePID
        var rows = (result.processes ?? []).filter { $0.pid != probe && $0.ppid != probe }
        rows.sort { left, right in
            let leftCPU = left.cpuPercent ?? -1
            let rightCPU = right.cpuPercent ?? -1
            if leftCPU != rightCPU { return leftCPU > rightCPU }
            if (left.rssBytes ?? 0) != (right.rssBytes ?? 0) { return (left.rssBytes ?? 0) > (right.rssBytes ?? 0) }
            return left.pid < right.pid
        }
        snapshot.processes = Array(rows.prefix(max(0, topProcesses)))
        snapshot.warnings.append(contentsOf: result.warnings)
    }
}
