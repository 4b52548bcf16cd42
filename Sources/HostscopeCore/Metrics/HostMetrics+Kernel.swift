import AgentTracing
import HostStats

/// The metrics of the kernel files the `proc` and `busybox` collectors read besides a snapshot's own
/// figures (``Snapshot/node``), under the system semantic conventions' names, as the Collector's
/// `hostmetrics` receiver gives them:
///
/// | metric | type, unit | attributes | from |
/// |---|---|---|---|
/// | `system.network.packets`, `system.network.errors`, `system.network.dropped` | cumulative monotonic sum, `{packet}`, `{error}` | `network.interface.name`, `network.io.direction` | `/proc/net/dev` |
/// | `system.paging.faults` | cumulative monotonic sum, `{fault}` | `system.paging.type` (`major`, `minor`) | `/proc/vmstat` `pgmajfault`, `pgfault` less it |
/// | `system.paging.operations` | cumulative monotonic sum, `{operation}` | `system.paging.direction` (`in`, `out`), `system.paging.type` (`major`: `pswp*`, `minor`: `pgpg*`) | `/proc/vmstat` |
/// | `system.processes.count` | sum, `{process}` | `process.status` (`running`, `blocked`) | `/proc/stat` |
/// | `system.processes.created` | cumulative monotonic sum, `{process}` | | `/proc/stat` `processes` |
extension HostMetrics {
    static func kernelMetrics(_ snapshot: Snapshot, time: UInt64, boot: UInt64?) -> [Metric] {
        guard let node = snapshot.node else { return [] }
        var metrics: [Metric] = []
        func sum(_ name: String, _ description: String, _ unit: String, monotonic: Bool, _ points: [MetricPoint]) {
            guard !points.isEmpty else { return }
            metrics.append(
                Metric(
                    name: name, description: description, unit: unit, kind: .cumulativeSum(monotonic: monotonic),
                    points: points))
        }
        func point(_ attributes: [(String, String)], _ value: Double?) -> MetricPoint? {
            guard let value, value >= 0 else { return nil }
            return MetricPoint(
                attributes: attributes.map { Attribute($0.0, .string($0.1)) }, startNanoseconds: boot,
                timeNanoseconds: time, value: .int(Int64(clamping: UInt64(min(value, 0x1p63)))))
        }
        func network(_ statistic: String) -> [MetricPoint] {
            node.networkDevices.flatMap { device in
                ["receive", "transmit"].compactMap { direction in
                    point(
                        [("network.interface.name", device.device), ("network.io.direction", direction)],
                        device.counters.first { $0.name == "\(direction)_\(statistic)" }?.value)
                }
            }
        }
        sum(
            "system.network.packets", "Packets each interface received and sent.", "{packet}", monotonic: true,
            network("packets"))
        sum(
            "system.network.errors", "Errors each interface met receiving and sending.", "{error}", monotonic: true,
            network("errs"))
        sum("system.network.dropped", "Packets each interface dropped.", "{packet}", monotonic: true, network("drop"))

        func vmstat(_ name: String) -> Double? { node.vmstat.first { $0.name == name }?.value }
        let major = vmstat("pgmajfault")
        let minor = vmstat("pgfault").flatMap { all in major.map { all - $0 } }
        sum(
            "system.paging.faults", "Page faults, major and minor.", "{fault}", monotonic: true,
            [point([("system.paging.type", "major")], major), point([("system.paging.type", "minor")], minor)]
                .compactMap { $0 })
        sum(
            "system.paging.operations", "Pages swapped (major) and paged (minor) in and out.", "{operation}",
            monotonic: true,
            [
                point([("system.paging.direction", "in"), ("system.paging.type", "major")], vmstat("pswpin")),
                point([("system.paging.direction", "out"), ("system.paging.type", "major")], vmstat("pswpout")),
                point([("system.paging.direction", "in"), ("system.paging.type", "minor")], vmstat("pgpgin")),
                point([("system.paging.direction", "out"), ("system.paging.type", "minor")], vmstat("pgpgout")),
            ].compactMap { $0 })
        if let activity = node.activity {
            sum(
                "system.processes.count", "Processes runnable and blocked on I/O now.", "{process}", monotonic: false,
                [
                    point([("process.status", "running")], activity.procsRunning.map { Double($0) }),
                    point([("process.status", "blocked")], activity.procsBlocked.map { Double($0) }),
                ].compactMap { $0 })
            sum(
                "system.processes.created", "Processes created since boot.", "{process}", monotonic: true,
                [point([], activity.forks.map { Double($0) })].compactMap { $0 })
        }
        return metrics
    }
}
