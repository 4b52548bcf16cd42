import AgentTracing
import Foundation
import HostStats
import HostscopeCore
import Testing

@Suite struct HostMetricsTests {
    /// A host's `btime` and uptime are its own to say: a hostile or broken one must not trap their conversion
    /// to the start time of OTLP's cumulative points.
    @Test(
        arguments: [
            (Int64.max, 1e300), (Int64(99_999_999_999_999), -1e300), (Int64(1), Double.infinity),
            (Int64(-5), Double.nan),
        ] as [(Int64, Double)])
    func boundlessBootTimesAndUptimesFromAHostNeverTrap(bootTime: Int64, uptime: Double) {
        var snapshot = Snapshot(
            host: "web-1", collectedAt: Date(timeIntervalSince1970: 1_800_000_000), collector: "proc",
            uptimeSeconds: uptime)
        snapshot.counters = KernelCounters(cpu: CPUCounters(total: CPUTicks(user: 10, idle: 90), bootTime: bootTime))
        #expect(!HostMetrics.resourceMetrics(for: snapshot).metrics.isEmpty)
        // Without btime, the boot time is the collection time less the uptime; no figure here to report.
        snapshot.counters = nil
        #expect(HostMetrics.resourceMetrics(for: snapshot).metrics.isEmpty)
    }
}
