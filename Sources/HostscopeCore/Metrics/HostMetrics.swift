public import AgentTracing
import Foundation
public import HostStats
import ValueFormats

/// A snapshot's figures as OpenTelemetry metrics, named and shaped as the system and host semantic conventions
/// say, so that a backend shows them beside the OpenTelemetry Collector's `hostmetrics` receiver's:
///
/// | metric | type, unit | attributes | from |
/// |---|---|---|---|
/// | `system.cpu.time` | cumulative monotonic sum, `s` | `cpu.mode`, `cpu.logical_number` | `/proc/stat` ticks |
/// | `system.cpu.utilization` | gauge, `1` | `cpu.mode` | the tick's CPU shares |
/// | `system.memory.usage` | cumulative sum, `By` | `system.memory.state` (`used`, `free`, `buffers`, `cached`) | memory |
/// | `system.filesystem.usage` | cumulative sum, `By` | `system.device`, `system.filesystem.mountpoint`, `system.filesystem.type`, `system.filesystem.state` (`used`, `free`, `reserved`) | df |
/// | `system.network.io` | cumulative monotonic sum, `By` | `network.interface.name`, `network.io.direction` (`receive`, `transmit`) | `/proc/net/dev` |
/// | `system.disk.io` | cumulative monotonic sum, `By` | `system.device`, `disk.io.direction` (`read`, `write`) | `/proc/diskstats` |
///
/// and, where the collector read the kernel's other files, packets, paging and processes (``kernelMetrics(_:time:boot:)``).
///
/// Counters are the kernel's own, never differenced or reset: their start time is the host's boot. CPU modes
/// follow `cpu.mode`'s values: `irq` and `softirq` are both `interrupt`. A figure the collector did not read
/// (CPU shares on a watch's first tick, disk counters on macOS) is left out, never invented.
///
/// The resource is the host as the user named it (`host.name`), its `os.type` and `host.arch`, over the user's
/// own resource attributes (``ResourceEnvironment``) and `service.name`.
public enum HostMetrics {
    /// The metrics of one collection; `nil` for a failed one (it has no figures).
    public static func resourceMetrics(
        for record: SnapshotRecord, resourceAttributes: [Attribute] = []
    ) -> ResourceMetrics? {
        guard case .snapshot(let snapshot) = record else { return nil }
        return resourceMetrics(for: snapshot, resourceAttributes: resourceAttributes)
    }

    /// The metrics of one snapshot.
    public static func resourceMetrics(for snapshot: Snapshot, resourceAttributes: [Attribute] = []) -> ResourceMetrics
    {
        let time = nanoseconds(snapshot.collectedAt)
        let boot = bootNanoseconds(snapshot)
        var metrics: [Metric] = []
        if let cpuTime = cpuTime(snapshot, time: time, boot: boot) { metrics.append(cpuTime) }
        if let utilization = cpuUtilization(snapshot, time: time) { metrics.append(utilization) }
        if let memory = memoryUsage(snapshot, time: time, boot: boot) { metrics.append(memory) }
        if let filesystems = filesystemUsage(snapshot, time: time, boot: boot) { metrics.append(filesystems) }
        if let network = networkIO(snapshot, time: time, boot: boot) { metrics.append(network) }
        if let disks = diskIO(snapshot, time: time, boot: boot) { metrics.append(disks) }
        metrics += kernelMetrics(snapshot, time: time, boot: boot)
        return ResourceMetrics(resource: resource(for: snapshot, userAttributes: resourceAttributes), metrics: metrics)
    }

    /// `service.name` (the user's, else hostscope), the user's attributes, then the host's own, which win: these
    /// metrics describe the watched host, not the machine hostscope runs on.
    static func resource(for snapshot: Snapshot, userAttributes: [Attribute]) -> TraceResource {
        var host = [Attribute("host.name", .string(snapshot.host))]
        if let family = snapshot.os?.family, !family.isEmpty { host.append(Attribute("os.type", .string(family))) }
        if let arch = snapshot.os?.arch.flatMap(hostArch) { host.append(Attribute("host.arch", .string(arch))) }
        if let name = snapshot.os?.name, !name.isEmpty { host.append(Attribute("os.description", .string(name))) }
        return TraceResource(attributes: [
            Attribute("service.name", .string("hostscope")),
            Attribute("service.version", .string(HostscopeVersion.string)),
        ])
        .merging(userAttributes).merging(host)
    }

    /// `host.arch`'s values for `uname -m`'s names.
    static func hostArch(_ machine: String) -> String? {
        switch machine.lowercased() {
        case "x86_64", "amd64": "amd64"
        case "aarch64", "arm64": "arm64"
        case "i386", "i486", "i586", "i686", "x86": "x86"
        case "ppc64", "ppc64le": "ppc64"
        case "ppc": "ppc32"
        case "s390x": "s390x"
        case let other where other.hasPrefix("armv"): "arm32"
        default: nil
        }
    }

    /// When the host booted: `btime` of `/proc/stat` when read (whole seconds, the same every tick, so that a
    /// backend never mistakes a new start time for a counter reset), else collection time less uptime, rounded to
    /// the second for the same reason.
    static func bootNanoseconds(_ snapshot: Snapshot) -> UInt64? {
        // Both figures come from the host: clamped, so that a hostile one cannot trap the conversion.
        if let bootTime = snapshot.counters?.cpu?.bootTime, bootTime > 0 {
            return UInt64(clamping: Double(bootTime) * 1e9)
        }
        guard let uptime = snapshot.uptimeSeconds else { return nil }
        let seconds = (snapshot.collectedAt.timeIntervalSince1970 - uptime).rounded()
        return seconds > 0 ? UInt64(clamping: seconds * 1e9) : nil
    }

    private static func nanoseconds(_ date: Date) -> UInt64 {
        let seconds = date.timeIntervalSince1970
        return seconds > 0 ? UInt64(clamping: (seconds * 1_000_000).rounded()) &* 1_000 : 0
    }

    private static func cpuTime(_ snapshot: Snapshot, time: UInt64, boot: UInt64?) -> Metric? {
        guard let counters = snapshot.counters, let cpu = counters.cpu else { return nil }
        let perSecond = counters.ticksPerSecond
        var points: [MetricPoint] = []
        func add(_ ticks: CPUTicks, core: Int?) {
            let modes: [(String, UInt64)] = [
                ("user", ticks.user), ("nice", ticks.nice), ("system", ticks.system), ("idle", ticks.idle),
                ("iowait", ticks.iowait), ("interrupt", ticks.irq + ticks.softirq), ("steal", ticks.steal),
            ]
            for (mode, count) in modes {
                var attributes = [Attribute("cpu.mode", .string(mode))]
                if let core { attributes.append(Attribute("cpu.logical_number", .int(Int64(core)))) }
                points.append(
                    MetricPoint(
                        attributes: attributes, startNanoseconds: boot, timeNanoseconds: time,
                        value: .double(Double(count) / perSecond)))
            }
        }
        if cpu.perCore.isEmpty {
            add(cpu.total, core: nil)
        } else {
            for core in cpu.perCore { add(core.ticks, core: core.core) }
        }
        return Metric(
            name: "system.cpu.time", description: "Seconds each logical CPU spent in each mode.", unit: "s",
            kind: .cumulativeSum(monotonic: true), points: points)
    }

    private static func cpuUtilization(_ snapshot: Snapshot, time: UInt64) -> Metric? {
        guard let cpu = snapshot.cpu else { return nil }
        let irq = [cpu.irqPercent, cpu.softirqPercent].compactMap { $0 }
        let modes: [(String, Double?)] = [
            ("user", cpu.userPercent), ("nice", cpu.nicePercent), ("system", cpu.systemPercent),
            ("idle", cpu.idlePercent), ("iowait", cpu.iowaitPercent),
            ("interrupt", irq.isEmpty ? nil : irq.reduce(0, +)), ("steal", cpu.stealPercent),
        ]
        let points = modes.compactMap { mode, percent in
            percent.map {
                MetricPoint(
                    attributes: [Attribute("cpu.mode", .string(mode))], timeNanoseconds: time,
                    value: .double($0 / 100))
            }
        }
        guard !points.isEmpty else { return nil }
        return Metric(
            name: "system.cpu.utilization",
            description: "Share of CPU time in each mode over the last sampling window, all CPUs together.",
            unit: "1", kind: .gauge, points: points)
    }

    private static func memoryUsage(_ snapshot: Snapshot, time: UInt64, boot: UInt64?) -> Metric? {
        guard let memory = snapshot.memory else { return nil }
        let states: [(String, UInt64?)] = [
            ("used", memory.usedBytes), ("free", memory.freeBytes), ("buffers", memory.buffersBytes),
            ("cached", memory.cachedBytes),
        ]
        let points = states.compactMap { state, bytes in
            bytes.map {
                MetricPoint(
                    attributes: [Attribute("system.memory.state", .string(state))], startNanoseconds: boot,
                    timeNanoseconds: time, value: .int(Int64(clamping: $0)))
            }
        }
        guard !points.isEmpty else { return nil }
        return Metric(
            name: "system.memory.usage", description: "Bytes of memory in each state.", unit: "By",
            kind: .cumulativeSum(monotonic: false), points: points)
    }

    private static func filesystemUsage(_ snapshot: Snapshot, time: UInt64, boot: UInt64?) -> Metric? {
        var points: [MetricPoint] = []
        for disk in snapshot.disks {
            var attributes = [
                Attribute("system.device", .string(disk.filesystem)),
                Attribute("system.filesystem.mountpoint", .string(disk.mount)),
            ]
            if let type = disk.type { attributes.append(Attribute("system.filesystem.type", .string(type))) }
            var states: [(String, UInt64)] = []
            if let used = disk.usedBytes { states.append(("used", used)) }
            if let available = disk.availableBytes { states.append(("free", available)) }
            // Blocks kept for root count as neither used nor available (df's arithmetic).
            if let size = disk.sizeBytes, let used = disk.usedBytes, let available = disk.availableBytes,
                size > used + available
            {
                states.append(("reserved", size - used - available))
            }
            for (state, bytes) in states {
                points.append(
                    MetricPoint(
                        attributes: attributes + [Attribute("system.filesystem.state", .string(state))],
                        startNanoseconds: boot, timeNanoseconds: time, value: .int(Int64(clamping: bytes))))
            }
        }
        guard !points.isEmpty else { return nil }
        return Metric(
            name: "system.filesystem.usage", description: "Bytes of each filesystem in each state.", unit: "By",
            kind: .cumulativeSum(monotonic: false), points: points)
    }

    private static func networkIO(_ snapshot: Snapshot, time: UInt64, boot: UInt64?) -> Metric? {
        var points: [MetricPoint] = []
        for interface in snapshot.network {
            for (direction, bytes) in [("receive", interface.rxBytes), ("transmit", interface.txBytes)] {
                guard let bytes else { continue }
                points.append(
                    MetricPoint(
                        attributes: [
                            Attribute("network.interface.name", .string(interface.interface)),
                            Attribute("network.io.direction", .string(direction)),
                        ], startNanoseconds: boot, timeNanoseconds: time, value: .int(Int64(clamping: bytes))))
            }
        }
        guard !points.isEmpty else { return nil }
        return Metric(
            name: "system.network.io", description: "Bytes each interface received and sent.", unit: "By",
            kind: .cumulativeSum(monotonic: true), points: points)
    }

    private static func diskIO(_ snapshot: Snapshot, time: UInt64, boot: UInt64?) -> Metric? {
        guard let disks = snapshot.counters?.disks else { return nil }
        var points: [MetricPoint] = []
        for disk in disks {
            // A counter past what bytes can hold is left out rather than wrapped.
            for (direction, bytes) in [("read", disk.readBytes), ("write", disk.writtenBytes)] {
                guard let bytes else { continue }
                points.append(
                    MetricPoint(
                        attributes: [
                            Attribute("system.device", .string(disk.device)),
                            Attribute("disk.io.direction", .string(direction)),
                        ], startNanoseconds: boot, timeNanoseconds: time, value: .int(Int64(clamping: bytes))))
            }
        }
        guard !points.isEmpty else { return nil }
        return Metric(
            name: "system.disk.io", description: "Bytes each block device read and wrote.", unit: "By",
            kind: .cumulativeSum(monotonic: true), points: points)
    }
}
