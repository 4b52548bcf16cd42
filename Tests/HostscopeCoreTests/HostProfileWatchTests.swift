import AgentTracing
import Foundation
import HostStats
import HostscopeCore
import TestSupport
import Testing
import Tracing

/// A watch's host profiles (a fleet file's groups): each host ticks at its group's interval with its group's
/// collector settings, carries its labels in its state, and a reload changes labels without a new session.
@Suite struct HostProfileWatchTests {
    @Test func eachHostTicksAtItsProfilesIntervalAndCarriesItsLabels() async throws {
        let server = try SSHTestServer.shared()
        let plan = WatchPlan(
            hosts: [.local, harnessHost(server)], interval: .seconds(10), count: 3,
            profiles: [
                "local": HostProfile(labels: ["env": "prod"], interval: .seconds(60), top: 2),
                "harness": HostProfile(labels: ["env": "staging"]),
            ])
        let driven = DrivenWatch(plan)
        let events = try await driven.runToEnd(count: 3)
        for (host, interval) in [("local", 60.0), ("harness", 10.0)] {
            let slots = events.records(of: host).compactMap(\.slot)
            #expect(slots.count == 3)
            for (earlier, later) in zip(slots, slots.dropFirst()) {
                #expect(abs(later.timeIntervalSince(earlier) - interval) < 1e-6, "\(host)")
            }
        }
        guard case .snapshot(let local)? = events.records(of: "local").last else {
            Issue.record("local failed: \(events.records(of: "local"))")
            return
        }
        #expect(local.processes.count <= 2)
        #expect(driven.watch.state(of: "local")?.labels == ["env": "prod"])
        #expect(driven.watch.state(of: "harness")?.labels == ["env": "staging"])
    }

    @Test func aReloadChangingOnlyLabelsKeepsTheSessionAndOneChangingTheIntervalStartsAgain() async throws {
        let server = try SSHTestServer.shared()
        let tracer = RingBufferTracer(capacity: 10_000, resource: TraceRuntime.resource)
        try await withTracer(tracer) {
            let driven = DrivenWatch(
                WatchPlan(
                    hosts: [harnessHost(server)], interval: .seconds(10),
                    profiles: ["harness": HostProfile(labels: ["env": "prod"])]))
            try await driven.step(count: nil) { states in states.allSatisfy { $0.ticks >= 2 } }
            let connects = { tracer.finishedSpans().filter { $0.name.hasPrefix("ssh connect harness") }.count }
            #expect(connects() == 1)

            driven.watch.replaceHosts([harnessHost(server)], profiles: ["harness": HostProfile(labels: ["env": "dev"])])
            #expect(driven.watch.state(of: "harness")?.labels == ["env": "dev"])
            let ticks = try #require(driven.watch.state(of: "harness")?.ticks)
            try await driven.step(count: nil) { states in states.allSatisfy { $0.ticks >= ticks + 1 } }
            #expect(connects() == 1, "a change of labels alone keeps the session")
            #expect(driven.watch.state(of: "harness")?.labels == ["env": "dev"])

            driven.watch.replaceHosts(
                [harnessHost(server)],
                profiles: ["harness": HostProfile(labels: ["env": "dev"], interval: .seconds(20))])
            #expect(driven.watch.state(of: "harness")?.ticks == 0, "a new interval starts the host again")
            try await driven.step(count: nil) { states in states.allSatisfy { $0.ticks >= 1 } }
            let events = try await driven.cancel()
            #expect(
                events.contains { if case .state(let state) = $0 { state.labels == ["env": "dev"] } else { false } })
        }
    }
}
