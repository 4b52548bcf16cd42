import AgentTracing
import Foundation
import HostStats
import HostscopeCore
import SSHTransport
import Synchronization
import TestSupport
import Testing
import Tracing
import ValueFormats

func harnessHost(_ server: SSHTestServer, name: String = "harness") -> ResolvedHost {
    .ssh(
        SSHConnectionOptions(
            displayName: name, hostName: server.host, port: server.port, user: server.user,
            identityFiles: [server.keyPath], identitiesOnly: true, knownHostsFiles: [server.knownHostsPath]))
}

/// A watch on a manual clock, driven slot by slot: whenever every host still ticking sleeps until its next
/// slot, the clock moves to the earliest one. Its events are read by a subscriber of its own.
///
/// A long interval costs a driven watch nothing, as the clock jumps to each slot, but a tick's budget
/// (80 % of the interval) is real time for its connect and commands: tests that reach real hosts use 5-10 s
/// intervals, which a machine whose cores are busy with other work still keeps.
final class DrivenWatch: Sendable {
    let watch: FleetWatch
    let clock: ManualWatchClock
    private let log = EventLog()
    private let reader: Task<Void, Never>
    private let runner: Task<Void, Never>

    /// The events one subscriber read.
    final class EventLog: Sendable {
        let events = Lock<[WatchEvent]>([])
    }

    init(_ plan: WatchPlan, clock: ManualWatchClock = ManualWatchClock()) {
        let watch = FleetWatch(plan: plan, clock: clock, random: { 0 })
        self.watch = watch
        self.clock = clock
        let subscription = watch.subscribe(buffer: 100_000)
        let log = log
        reader = Task {
            for await event in subscription { log.events.withLock { $0.append(event) } }
        }
        runner = Task { await watch.run() }
    }

    /// Hosts whose loop will sleep again: every host of an endless plan, else those short of its count.
    func ticking(count: Int?) -> Int {
        watch.states.filter { state in count.map { state.ticks < $0 } ?? true }.count
    }

    /// Waits until every host still ticking sleeps, then moves the clock to the earliest slot.
    func step(count: Int?) async throws {
        try await settle(count: count)
        if let next = clock.nextDeadline { clock.advance(to: next) }
    }

    /// Waits until every host still ticking sleeps until its next slot: no collection is under way.
    func settle(count: Int?) async throws {
        try await waitUntil("the host loops to sleep: \(watch.states)") {
            clock.sleepers == ticking(count: count)
        }
    }

    /// Steps until every host did `count` ticks, then waits for the watch and its events to end.
    func runToEnd(count: Int) async throws -> [WatchEvent] {
        while ticking(count: count) > 0 { try await step(count: count) }
        await runner.value
        await reader.value
        return log.events.withLock { $0 }
    }

    /// Steps until `condition` holds (on the hosts' states).
    func step(count: Int?, until condition: ([HostWatchState]) -> Bool) async throws {
        while !condition(watch.states) { try await step(count: count) }
    }

    /// Stops an endless watch between ticks and returns its events.
    func cancel() async throws -> [WatchEvent] {
        try await settle(count: nil)
        runner.cancel()
        await runner.value
        await reader.value
        return log.events.withLock { $0 }
    }
}

extension [WatchEvent] {
    func records(of host: String) -> [SnapshotRecord] {
        compactMap { event in
            if case .record(let record) = event, record.host == host { return record }
            return nil
        }
    }
}

extension SnapshotRecord {
    var isSnapshot: Bool {
        if case .snapshot = self { return true }
        return false
    }
}

@Suite(.serialized) struct FleetWatchTests {
    @Test func everyTickOfEveryHostYieldsOneRecordStampedAtItsSlot() async throws {
        let server = try SSHTestServer.shared()
        let interval = Duration.seconds(10)
        let driven = DrivenWatch(WatchPlan(hosts: [.local, harnessHost(server)], interval: interval, count: 4))
        let events = try await driven.runToEnd(count: 4)
        for host in ["local", "harness"] {
            let records = events.records(of: host)
            #expect(records.count == 4)
            guard case .snapshot(let first) = records.first else {
                Issue.record("\(host): first tick failed: \(records)")
                continue
            }
            #expect(first.cpu?.busyPercent == nil, "the first tick has no earlier counters")
            for case .snapshot(let snapshot) in records.dropFirst() { #expect(snapshot.cpu?.busyPercent != nil) }
            // Ticks are due at the host's phase + k × interval, and stamped when they ran: exactly then here.
            let slots = records.compactMap(\.slot)
            #expect(slots.count == 4)
            #expect(records.map(\.collectedAt) == slots)
            for (earlier, later) in zip(slots, slots.dropFirst()) {
                #expect(abs(later.timeIntervalSince(earlier) - interval.inSeconds) < 1e-6)
            }
            let schedule = TickSchedule(interval: interval, host: host)
            #expect(schedule.firstSlot(atOrAfter: slots[0].addingTimeInterval(-0.0005)) == slots[0])
        }
        #expect(
            TickSchedule(interval: interval, host: "local").phase
                != TickSchedule(interval: interval, host: "harness").phase)
    }

    @Test func aDeadHostYieldsAConnectErrorRecordEveryTickTriesAgainEachTickAndDoesNotDelayTheOthers() async throws {
        let dead = ResolvedHost.ssh(
            SSHConnectionOptions(displayName: "dead", hostName: "127.0.0.1", port: 1, user: "x", knownHostsFiles: []))
        let driven = DrivenWatch(WatchPlan(hosts: [.local, dead], interval: .seconds(5), count: 6))
        let events = try await driven.runToEnd(count: 6)
        #expect(events.records(of: "local").count == 6)
        #expect(events.records(of: "local").allSatisfy { $0.isSnapshot }, "\(events.records(of: "local"))")
        let messages = events.records(of: "dead").compactMap { record -> String? in
            if case .failure(let failure) = record, failure.kind == .connect { return failure.message }
            return nil
        }
        #expect(messages.count == 6)
        // Each tick made its own attempt: none waits out a backoff, so the host is back at its first tick up.
        #expect(!messages.contains { $0.contains("next attempt in") }, "\(messages)")
        #expect(driven.watch.states.last?.phase == .failing, "\(driven.watch.states)")
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
        let driven = DrivenWatch(
            WatchPlan(hosts: [untrusted], interval: .seconds(5), count: 6, maximumBackoff: .seconds(60)))
        let events = try await driven.runToEnd(count: 6)
        let failures = events.records(of: "untrusted").compactMap { record -> CollectionFailure? in
            if case .failure(let failure) = record { return failure }
            return nil
        }
        #expect(failures.count == 6)
        #expect(failures.allSatisfy { $0.kind == .hostKey }, "\(failures.map(\.kind))")
        // Attempts at ticks 1, 2 and 4, the waits doubling from one interval (no jitter here); the ticks in
        // between name the last failure and the time left.
        let waits = failures.map { failure in
            failure.message.range(of: "(next attempt in ").map { failure.message[$0.upperBound...] }
        }
        #expect(waits == [nil, nil, "5.0 s)", nil, "15 s)", "10 s)"], "\(failures.map(\.message))")
    }

    /// A host down for many ticks used to be tried again only when its backoff (doubling up to 30 s) ran out,
    /// so it stayed hidden for seconds after it came back; the soak (docs/soak.md) asks for two ticks.
    @Test func aHostDownForManyTicksHasASnapshotAtTheFirstTickAfterItComesBack() async throws {
        let server = try SSHTestServer.startDedicated()
        defer { server.stop() }
        let driven = DrivenWatch(WatchPlan(hosts: [harnessHost(server)], interval: .seconds(10), count: 16))
        try await driven.step(count: 16) { states in (states.last?.ticks ?? 0) >= 2 }
        try await driven.settle(count: 16)
        server.stopSSHD()
        try await driven.step(count: 16) { states in (states.last?.errors ?? 0) >= 8 }
        try await driven.settle(count: 16)
        try server.resumeSSHD()
        let down = driven.watch.states.last?.ticks ?? 0
        let events = try await driven.runToEnd(count: 16)
        let outcomes = events.records(of: "harness").map(\.isSnapshot)
        #expect(outcomes.count == 16)
        #expect(outcomes.dropFirst(down).first == true, "not back at the first tick after: \(outcomes)")
    }

    /// A host whose tick ran past the next slot used to collect for every slot it had missed, back to back:
    /// on a machine too busy for its fleet (the soak, docs/soak.md) fifty hosts doing so kept the records
    /// from being written, and two minutes of ticks gave a few dozen records.
    @Test func aTickReachedAfterItsWholeIntervalIsRecordedAsSkippedInsteadOfCollected() async throws {
        let interval = Duration.seconds(2)
        let driven = DrivenWatch(WatchPlan(hosts: [.local], interval: interval, count: 6))
        try await driven.step(count: 6)
        try await driven.step(count: 6)
        // The host sleeps until its third slot; it wakes two and a half intervals after it, as one whose tick
        // overran would.
        try await driven.settle(count: 6)
        let due = try #require(driven.clock.nextDeadline)
        driven.clock.advance(to: due.addingTimeInterval(5))
        let events = try await driven.runToEnd(count: 6)
        let records = events.records(of: "local")
        #expect(records.count == 6)
        let skipped = records.map { record -> Bool in
            if case .failure(let failure) = record {
                return failure.kind == .timeout && failure.message.hasPrefix("skipped:")
            }
            return false
        }
        // Slots 3 and 4 are past their interval when reached, slot 5 is not: it is collected.
        #expect(skipped == [false, false, true, true, false, false], "\(records)")
        #expect(records.map(\.isSnapshot) == [true, true, false, false, true, true])
        let slots = records.compactMap(\.slot)
        for (earlier, later) in zip(slots, slots.dropFirst()) {
            #expect(abs(later.timeIntervalSince(earlier) - 2) < 1e-6, "a slot was lost or repeated")
        }
    }

    @Test func aHostThatNeverSendsABannerTimesOutWithinItsTicks() async throws {
        let listener = try LoopbackListener()
        let silent = ResolvedHost.ssh(
            SSHConnectionOptions(
                displayName: "silent", hostName: "127.0.0.1", port: listener.port, user: "x", knownHostsFiles: []))
        let driven = DrivenWatch(WatchPlan(hosts: [.local, silent], interval: .milliseconds(500), count: 3))
        let started = ContinuousClock.now
        let events = try await driven.runToEnd(count: 3)
        // Each attempt gives up within the tick budget (80 % of the interval), in real time.
        #expect(started.duration(to: .now) < .seconds(20), "a silent host must not hang the watch")
        #expect(events.records(of: "local").count == 3)
        let kinds = events.records(of: "silent").compactMap { record -> FailureKind? in
            if case .failure(let failure) = record { return failure.kind }
            return nil
        }
        #expect(kinds.count == 3)
        #expect(kinds.first == .timeout)
        withExtendedLifetime(listener) {}
    }

    @Test func hostsWaitingBehindManySilentHostsForAHandshakeSlotHaveARecordEveryTickAndConnectInTurn() async throws {
        // Three times as many hosts that never complete a TCP handshake as the engine lets connect at
        // once: each holds a slot for its whole connect timeout, and the good hosts queue behind them.
        let server = try SSHTestServer.shared()
        let listener = try LoopbackListener()
        let slots = SSHEngine.shared.handshakes.limit
        let silent = (0..<(3 * slots)).map { index in
            ResolvedHost.ssh(
                SSHConnectionOptions(
                    displayName: "silent-\(index)", hostName: "127.0.0.1", port: listener.port, user: "x",
                    knownHostsFiles: []))
        }
        let good = (0..<3).map { harnessHost(server, name: "good-\($0)") }
        let interval = Duration.seconds(2)
        let watch = FleetWatch(plan: WatchPlan(hosts: silent + good, interval: interval, count: 6))
        let arrivals = Lock<[(record: SnapshotRecord, at: Date)]>([])
        let subscription = watch.subscribe(buffer: 100_000)
        let reader = Task {
            for await event in subscription {
                if case .record(let record) = event { arrivals.withLock { $0.append((record, Date())) } }
            }
        }
        await watch.run()
        await reader.value
        let received = arrivals.withLock { $0 }
        for host in (silent + good).map(\.displayName) {
            let records = received.filter { $0.record.host == host }
            #expect(records.count == 6, "\(host): \(records.count) records")
            // A tick waits for its connect no longer than its budget (80 % of the interval): its record
            // comes within the interval, whatever the line for slots looks like. (A second of slack for a
            // busy machine.)
            for (record, at) in records {
                let late = at.timeIntervalSince(record.slot ?? at)
                #expect(late < interval.inSeconds + 1, "\(host): a record \(late) s after its slot: \(record)")
            }
        }
        for host in good.map(\.displayName) {
            let records = received.filter { $0.record.host == host }.map(\.record)
            // Waiting in line shows as timeouts naming the line; then the host is up for good.
            #expect(records.last?.isSnapshot == true, "\(host): \(records)")
            for case .failure(let failure) in records {
                #expect(failure.kind == .timeout && failure.message.contains("not connected after"), "\(failure)")
            }
        }
        #expect(received.filter { $0.record.host.hasPrefix("silent-") }.allSatisfy { !$0.record.isSnapshot })
        withExtendedLifetime(listener) {}
    }

    @Test func aHostWhoseSSHDStopsAndComesBackRecovers() async throws {
        let server = try SSHTestServer.startDedicated()
        defer { server.stop() }
        let plan = WatchPlan(
            hosts: [.local, harnessHost(server)], interval: .seconds(5), count: 14, maximumBackoff: .seconds(10))
        let driven = DrivenWatch(plan)
        try await driven.step(count: 14) { states in (states.last?.ticks ?? 0) >= 3 }
        server.stopSSHD()
        try await driven.step(count: 14) { states in (states.last?.errors ?? 0) >= 2 }
        try server.resumeSSHD()
        let events = try await driven.runToEnd(count: 14)
        let outcomes = events.records(of: "harness").map(\.isSnapshot)
        #expect(outcomes.count == 14)
        // Snapshots first, then error records while it is down, then snapshots again.
        #expect(Array(outcomes.prefix(3)) == [true, true, true])
        #expect(outcomes.contains(false))
        #expect(outcomes.last == true, "no recovery: \(outcomes)")
        #expect(events.records(of: "local").count == 14)
        #expect(events.records(of: "local").allSatisfy { $0.isSnapshot })
    }

    @Test func aSubscriberThatReadsNothingHoldsUpNoOneAndIsToldWhatItMissed() async throws {
        let driven = DrivenWatch(WatchPlan(hosts: [.local], interval: .seconds(1), count: 6))
        // Two events per tick (the record and the state), and the initial state: 13 in all, 3 kept.
        let stalled = driven.watch.subscribe(buffer: 3)
        let events = try await driven.runToEnd(count: 6)
        #expect(events.records(of: "local").count == 6, "the watch went on while a subscriber read nothing")
        var late: [WatchEvent] = []
        for await event in stalled { late.append(event) }
        #expect(late.count == 4)
        #expect(late.first == .missed(10))
        #expect(late.last == .state(try #require(driven.watch.states.first)))
    }

    @Test func statesSayWhereEachHostStandsAtAnyTime() async throws {
        let dead = ResolvedHost.ssh(
            SSHConnectionOptions(displayName: "dead", hostName: "127.0.0.1", port: 1, user: "x", knownHostsFiles: []))
        let driven = DrivenWatch(WatchPlan(hosts: [.local, dead], interval: .seconds(5)))
        #expect(driven.watch.states.map(\.phase) == [.connecting, .connecting])
        try await driven.step(count: nil) { states in states.allSatisfy { $0.ticks >= 1 } }
        let states = driven.watch.states
        #expect(states.map(\.host) == ["local", "dead"])
        #expect(states[0].phase == .up)
        #expect(states[0].latest?.isSnapshot == true)
        #expect(states[0].cpuBusyPercent == nil, "one tick has no CPU share yet")
        #expect(states[0].memoryUsedPercent != nil)
        // A host that is down is tried again at its next tick, without a backoff.
        #expect(states[1].phase == .failing)
        #expect(states[1].lastError?.hasPrefix("connect: ") == true)
        _ = try await driven.cancel()
    }

    @Test func replacingHostsKeepsTheSessionsOfHostsThatStayAndStopsTheOthers() async throws {
        let server = try SSHTestServer.shared()
        let tracer = RingBufferTracer(capacity: 10_000, resource: TraceRuntime.resource)
        try await withTracer(tracer) {
            let driven = DrivenWatch(
                WatchPlan(hosts: [harnessHost(server), harnessHost(server, name: "second")], interval: .seconds(10)))
            try await driven.step(count: nil) { states in states.allSatisfy { $0.ticks >= 2 } }
            let connects = { tracer.finishedSpans().filter { $0.name.hasPrefix("ssh connect harness") }.count }
            #expect(connects() == 1)

            driven.watch.replaceHosts([harnessHost(server), .local])
            #expect(driven.watch.states.map(\.host) == ["harness", "local"])
            let harnessTicks = driven.watch.states[0].ticks
            try await driven.step(count: nil) { states in states.allSatisfy { $0.ticks >= harnessTicks + 1 } }
            let events = try await driven.cancel()
            #expect(connects() == 1, "the host that stayed kept its session")
            #expect(events.contains(.removed(host: "second")))
            let second = events.records(of: "second")
            let removedAt = try #require(events.firstIndex(of: .removed(host: "second")))
            #expect(
                !events[removedAt...].contains {
                    if case .record(let record) = $0 { record.host == "second" } else { false }
                })
            #expect(second.count >= 2)
            #expect(events.records(of: "local").count >= 1)
            #expect(events.records(of: "harness").allSatisfy { $0.isSnapshot }, "\(events.records(of: "harness"))")
        }
    }

    @Test func aHostAddedWhileTheWatchRunsStartsOnceAndKeepsItsCounts() async throws {
        let dead = ResolvedHost.ssh(
            SSHConnectionOptions(displayName: "dead", hostName: "127.0.0.1", port: 1, user: "x", knownHostsFiles: []))
        let driven = DrivenWatch(WatchPlan(hosts: [], interval: .seconds(5)))
        #expect(driven.watch.addHost(.local))
        #expect(!driven.watch.addHost(.local), "a host of that name is watched already")
        #expect(driven.watch.addHost(dead))
        #expect(driven.watch.hosts.map(\.displayName) == ["local", "dead"])
        try await driven.step(count: nil) { states in states.allSatisfy { $0.ticks >= 2 } }
        let local = try #require(driven.watch.state(of: "local"))
        #expect(local.lastSuccess == local.lastTick)
        #expect(local.errorsByKind.isEmpty)
        let failing = try #require(driven.watch.state(of: "dead"))
        #expect(failing.lastSuccess == nil)
        #expect(failing.errorsByKind[.connect] == failing.errors)
        #expect(driven.watch.state(of: "elsewhere") == nil)
        #expect(!driven.watch.hasEnded)
        let events = try await driven.cancel()
        #expect(driven.watch.hasEnded)
        #expect(!driven.watch.addHost(harnessHost(try SSHTestServer.shared())), "an ended watch takes no host")
        #expect(events.records(of: "local").count >= 2)
    }

    @Test func backoffDoublesUpToItsCapAndResetsOnSuccess() {
        var backoff = ReconnectBackoff(initial: .seconds(5), maximum: .seconds(30))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(backoff.allowsAttempt(at: now))
        var waits: [Duration] = []
        for _ in 0..<5 {
            backoff.failed(at: now, random: 0.5)
            waits.append(backoff.current!)
        }
        #expect(waits == [.seconds(5), .seconds(10), .seconds(20), .seconds(30), .seconds(30)])
        #expect(!backoff.allowsAttempt(at: now.addingTimeInterval(29)))
        #expect(backoff.allowsAttempt(at: now.addingTimeInterval(30)))
        backoff.succeeded()
        #expect(backoff.allowsAttempt(at: now))
        #expect(backoff.current == nil)
    }

    @Test func jitterStretchesEachWaitByUpToItsShareSoHostsThatFailedTogetherRetryApart() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        var early = ReconnectBackoff(initial: .seconds(10), maximum: .seconds(30), jitter: 0.2)
        var late = early
        early.failed(at: now, random: 0)
        late.failed(at: now, random: 0.99)
        #expect(early.nextAttempt == now.addingTimeInterval(10))
        #expect(late.nextAttempt! > now.addingTimeInterval(11.9) && late.nextAttempt! < now.addingTimeInterval(12))
        // The doubling works on the wait itself, not on the stretched one.
        late.failed(at: now, random: 0)
        #expect(late.current == .seconds(20))
    }
}
