import AgentTracing
import Foundation
import HostStats
import HostscopeCore
import Testing

/// The kernel files' figures as OTLP metrics under the system semantic conventions' names.
@Suite struct HostMetricsKernelTests {
    @Test func packetsPagingAndProcessesComeUnderTheSemanticConventionsNames() throws {
        var node = NodeFigures()
        node.networkDevices = [
            NetworkDeviceCounters(
                device: "eth0",
                counters: [
                    KernelFigure("receive_packets", 5430), KernelFigure("transmit_packets", 3289),
                    KernelFigure("receive_errs", 1), KernelFigure("transmit_drop", 2),
                ])
        ]
        node.vmstat = [
            KernelFigure("pgfault", 1000), KernelFigure("pgmajfault", 10), KernelFigure("pswpin", 3),
            KernelFigure("pgpgout", 7),
        ]
        node.activity = KernelActivity(contextSwitches: 1, forks: 500, procsRunning: 3, procsBlocked: 1)
        var snapshot = Snapshot(
            host: "web1", collectedAt: Date(timeIntervalSince1970: 1_795_921_229), collector: "proc")
        snapshot.node = node
        let metrics = HostMetrics.resourceMetrics(for: snapshot).metrics
        func values(_ name: String) -> [String: Int64] {
            var result: [String: Int64] = [:]
            for point in metrics.first(where: { $0.name == name })?.points ?? [] {
                let key = point.attributes.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
                if case .int(let value) = point.value { result[key] = value }
            }
            return result
        }
        let packets = values("system.network.packets")
        #expect(packets.count == 2 && packets.values.sorted() == [3289, 5430])
        #expect(values("system.network.errors").count == 1 && values("system.network.dropped").count == 1)
        #expect(values("system.paging.faults").values.sorted() == [10, 990])
        #expect(values("system.paging.operations").values.sorted() == [3, 7])
        #expect(values("system.processes.count").values.sorted() == [1, 3])
        #expect(values("system.processes.created").values.sorted() == [500])
        let created = try #require(metrics.first { $0.name == "system.processes.created" })
        #expect(created.unit == "{process}" && created.kind == .cumulativeSum(monotonic: true))
        // Without the kernel files (macOS, the tools collector) none of them is invented.
        snapshot.node = nil
        #expect(!HostMetrics.resourceMetrics(for: snapshot).metrics.contains { $0.name.hasPrefix("system.paging") })
    }
}
