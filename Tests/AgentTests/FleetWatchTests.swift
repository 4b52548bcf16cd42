import Agent
import Foundation
import HostStats
import SSHTransport
import Synchronization
import TestSupport
import Testing

/// Collects what a watch emits.
final class WatchLog: Sendable {
    private let records = Mutex<[(SnapshotRecord, ContinuousClock.Instant)]>([])

    func add(_ record: SnapshotRecord) {
        records.withLock { $0.append((record, .now)) }
    }

    func of(_ host: String) -> [SnapshotRecord] {
        records.withLock { $0.filter { $0.0.host == host }.map(\.0) }
    }

    func arrivals(_ host: String) -> [ContinuousClock.Instant] {
        records.withLock { $0.filter { $0.0.host == host }.map(\.1) }
    }
}

func harnessHost(_ server: SSHTestServer) -> ResolvedHost {
    .ssh(
        SSHConnectionOptions(
            displayName: "harness", hostName: server.host, port: server.port, user: server.user,
            identityFiles: [server.keyPath], identitiesOnly: true, knownHostsFiles: [server.knownHostsPath]))
}

@Suite(.serialized) struct FleetWatchTests {
    @Test func everyTickOfEveryHostYieldsOneRecordAtAFixedRate() async throws {
        let server = try SSHTestServer.shared()
        let log = WatchLog()
        let plan = WatchPlan(hosts: [.local, harnessHost(server)], interval: .milliseconds(400), count: 4)
        await FleetWatch(plan: plan).run(record: { log.add($0) })
        for host in ["local", "harness"] {
            let records = log.of(host)
            #expect(records.count == 4)
            guard case .snapshot(let first) = records.first else {
                Issue.record("\(host): first tick failed")
                continue
            }
            #expect(first.cpu?.busyPercent == nil, "the first tick has no earlier counters")
            for case .snapshot(let snapshot) in records.dropFirst() { #expect(snapshot.cpu?.busyPercent != nil) }
            // Ticks are due at start + k × interval: their stamps are 400 ms apart, not drifting.
            let stamps = records.map(\.collectedAt.timeIntervalSince1970)
            for (earlier, later) in zip(stamps, stamps.dropFirst()) {
                #expect(abs((later - earlier) - 0.4) < 0.15, "\(host) ticks \(stamps)")
            }
            #expect(abs((stamps.last! - stamps.first!) - 1.2) < 0.1, "no accumulated lateness")
        }
    }

    @Test func eachHostTicksAtItsOwnPhaseAndItsRecordsNameTheirSlots() async throws {
        let log = WatchLog()
        let interval = Duration.milliseconds(1000)
        let hosts: [ResolvedHost] = [.local, harnessHost(try SSHTestServer.shared())]
        await FleetWatch(plan: WatchPlan(hosts: hosts, interval: interval, count: 3)).run(record: { log.add($0) })
        for name in ["local", "harness"] {
            let schedule = TickSchedule(interval: interval, host: name)
            let records = log.of(name)
            #expect(records.count == 3)
            let slots = records.compactMap(\.slot)
            #expect(slots.count == 3)
            for (earlier, later) in zip(slots, slots.dropFirst()) {
                #expect(abs(later.timeIntervalSince(earlier) - 1) < 0.001)
            }
            // Every slot is the host's phase past a whole second, and its record came after it.
            for (slot, record) in zip(slots, records) {
                #expect(schedule.firstSlot(atOrAfter: slot.addingTimeInterval(-0.0005)) == slot)
                #expect(record.collectedAt >= slot.addingTimeInterval(-0.001))
            }
        }
        #expect(TickSchedule(interval: interval, host: "local").phase != TickSchedule(interval: interval, host: "harness").phase)
    }

    @Test func aDeadHostYieldsAConnectErrorRecordEveryTickTriesAgainEachTickAndDoesNotDelayTheOthers() async throws {
        let log = WatchLog()
        let dead = ResolvedHost.ssh(
            SSHConnectionOptions(displayName: "dead", hostName: "127.0.0.1", port: 1, user: "x", knownHostsFiles: []))
        let plan = WatchPlan(hosts: [.local, dead], interval: .milliseconds(300), count: 6)
        let start = ContinuousClock.now
        await FleetWatch(plan: plan).run(record: { log.add($0) })
        #expect(start.duration(to: .now) < .seconds(4))
        #expect(log.of("local").allSatisfy { if case .snapshot = $0 { true } else { false } })
        let deadRecords = log.of("dead")
        #expect(deadRecords.count == 6)
        let messages = deadRecords.compactMap { record -> String? in
            if case .failure(let failure) = record, failure.kind == .connect { return failure.message }
            return nil
        }
        #expect(messages.count == 6)
        // Each tick made its own attempt: none waits out a backoff.
        #expect(!messages.contains { $0.contains("next attempt in") }, "\(messages)")
    }

    @Test func aHostWhoseHostKeyIsNotTrustedIsRetriedWithBackoff() async throws {
        let server = try SSHTestServer.shared()
        let emptyKnownHosts = NSTemporaryDirectory() + "hostscope-empty-known-hosts-\(UUID().uuidString)"
        FileManager.default.createFile(atPath: emptyKnownHosts, contents: Data())
        defer { try? FileManager.default.removeItem(atPath: emptyKnownHosts) }
        let untrusted = ResolvedHost.ssh(
            SSHConnectionOptions(
                displayName: "untrusted", hostName: server.host, port: server.port, user: server.user,
                identityFiles: [server.keyPath], identitiesOnly: true, knownHostsFiles: [emptyKnownHosts]))
        let log = WatchLog()
        await FleetWatch(plan: WatchPlan(hosts: [untrusted], interval: .milliseconds(300), count: 4)).run(record: {
            log.add($0)
        })
        let failures = log.of("untrusted").compactMap { record -> CollectionFailure? in
            if case .failure(let failure) = record { return failure }
            return nil
        }
        #expect(failures.count == 4)
        #expect(failures.allSatisfy { $0.kind == .hostKey }, "\(failures.map(\.kind))")
        #expect(failures.dropFirst().contains { $0.message.contains("next attempt in") }, "\(failures.map(\.message))")
    }

    /// A host down for many ticks used to be tried again only when its backoff (doubling up to 30 s) ran
    /// out, so it stayed hidden for seconds after it came back; the soak (docs/soak.md) asks for two ticks.
    @Test func aHostDownForManyTicksHasASnapshotWithinTwoTicksOfComingBack() async throws {
        let server = try SSHTestServer.startDedicated()
        defer { server.stop() }
        let log = WatchLog()
        let interval = Duration.milliseconds(300)
        let plan = WatchPlan(hosts: [harnessHost(server)], interval: interval, count: 24)
        let watch = Task { await FleetWatch(plan: plan).run(record: { log.add($0) }) }
        try await Task.sleep(for: .milliseconds(900))
        server.stopSSHD()
        try await Task.sleep(for: .milliseconds(3600))
        try server.resumeSSHD()
        let back = Date()
        await watch.value
        let records = log.of("harness")
        #expect(records.count == 24)
        #expect(records.contains { if case .failure = $0 { true } else { false } }, "the outage was not seen")
        let firstSnapshotAfter = records.compactMap { record -> Date? in
            if case .snapshot = record, let slot = record.slot, slot >= back { return slot }
            return nil
        }.first
        let after = try #require(firstSnapshotAfter, "no snapshot after the sshd came back")
        #expect(after.timeIntervalSince(back) <= 0.6 + 0.05, "back \(after.timeIntervalSince(back)) s after the sshd")
    }

    /// A host whose tick ran past the next slot used to collect for every slot it had missed, back to back:
    /// on a machine too busy for its fleet (the soak, docs/soak.md) fifty hosts doing so kept the one task
    /// that writes records from running, and a minute of ticks gave a few dozen records.
    @Test func aTickReachedAfterItsWholeIntervalIsRecordedAsSkippedInsteadOfCollected() async throws {
        let log = WatchLog()
        let interval = Duration.milliseconds(300)
        let plan = WatchPlan(hosts: [.local], interval: interval, count: 10)
        let watch = Task { await FleetWatch(plan: plan).run(record: { log.add($0) }) }
        try await Task.sleep(for: .milliseconds(700))
        // Hold every thread of the concurrency pool for a second, as a machine too busy for the fleet does.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<max(2, ProcessInfo.processInfo.activeProcessorCount) {
                group.addTask {
                    let end = ContinuousClock.now + .seconds(1)
                    while ContinuousClock.now < end {}
                }
            }
        }
        await watch.value
        let records = log.of("local")
        #expect(records.count == 10)
        let skipped = records.filter { record in
            if case .failure(let failure) = record { failure.message.hasPrefix("skipped:") } else { false }
        }
        #expect(!skipped.isEmpty, "every stale slot was collected")
        #expect(skipped.allSatisfy { if case .failure(let failure) = $0 { failure.kind == .timeout } else { false } })
        let slots = records.compactMap(\.slot)
        #expect(slots.count == 10)
        for (earlier, later) in zip(slots, slots.dropFirst()) {
            #expect(abs(later.timeIntervalSince(earlier) - 0.3) < 0.001, "a slot was lost or repeated")
        }
        #expect(records.last.map { if case .snapshot = $0 { true } else { false } } == true, "no collection after")
    }

    @Test func aHostThatNeverSendsABannerTimesOutWithinItsTicks() async throws {
        let listener = try LoopbackListener()
        let log = WatchLog()
        let silent = ResolvedHost.ssh(
            SSHConnectionOptions(
                displayName: "silent", hostName: "127.0.0.1", port: listener.port, user: "x", knownHostsFiles: []))
        let plan = WatchPlan(hosts: [.local, silent], interval: .milliseconds(500), count: 3)
        let start = ContinuousClock.now
        await FleetWatch(plan: plan).run(record: { log.add($0) })
        #expect(start.duration(to: .now) < .seconds(4), "a silent host must not hang the watch")
        #expect(log.of("local").count == 3)
        let kinds = log.of("silent").compactMap { record -> FailureKind? in
            if case .failure(let failure) = record { return failure.kind }
            return nil
        }
        #expect(kinds.count == 3)
        #expect(kinds.first == .timeout)
        withExtendedLifetime(listener) {}
    }

    @Test func aHostWhoseSSHDStopsAndComesBackRecovers() async throws {
        let server = try SSHTestServer.startDedicated()
        defer { server.stop() }
        let log = WatchLog()
        let plan = WatchPlan(
            hosts: [.local, harnessHost(server)], interval: .milliseconds(400), count: 14,
            maximumBackoff: .milliseconds(800))
        let watch = Task { await FleetWatch(plan: plan).run(record: { log.add($0) }) }
        try await Task.sleep(for: .milliseconds(1300))
        server.stopSSHD()
        try await Task.sleep(for: .milliseconds(1600))
        try server.resumeSSHD()
        await watch.value
        let records = log.of("harness")
        #expect(records.count == 14)
        let outcomes = records.map { record -> Bool in if case .snapshot = record { true } else { false } }
        // Snapshots first, then error records while it is down, then snapshots again.
        #expect(outcomes.first == true)
        #expect(outcomes.contains(false))
        #expect(outcomes.last == true, "no recovery: \(outcomes)")
        #expect(log.of("local").count == 14)
        #expect(log.of("local").allSatisfy { if case .snapshot = $0 { true } else { false } })
    }

    @Test func backoffDoublesUpToItsCapAndResetsOnSuccess() {
        var backoff = ReconnectBackoff(initial: .seconds(5), maximum: .seconds(30))
        let now = ContinuousClock.now
        #expect(backoff.allowsAttempt(at: now))
        var waits: [Duration] = []
        for _ in 0..<5 {
            backoff.failed(at: now)
            waits.append(backoff.current!)
        }
        #expect(waits == [.seconds(5), .seconds(10), .seconds(20), .seconds(30), .seconds(30)])
        #expect(!backoff.allowsAttempt(at: now + .seconds(29)))
        #expect(backoff.allowsAttempt(at: now + .seconds(30)))
        backoff.succeeded()
        #expect(backoff.allowsAttempt(at: now))
        #expect(backoff.current == nil)
    }

    @Test func jitterStretchesEachWaitByUpToItsShareSoHostsThatFailedTogetherRetryApart() {
        let now = ContinuousClock.now
        var early = ReconnectBackoff(initial: .seconds(10), maximum: .seconds(30), jitter: 0.2)
        var late = early
        early.failed(at: now, random: 0)
        late.failed(at: now, random: 0.99)
        #expect(early.nextAttempt == now + .seconds(10))
        #expect(late.nextAttempt! > now + .milliseconds(11_900) && late.nextAttempt! < now + .seconds(12))
        // The doubling works on the wait itself, not on the stretched one.
        late.failed(at: now, random: 0)
        #expect(late.current == .seconds(20))
    }
}
