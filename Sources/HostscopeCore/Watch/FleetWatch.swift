public import Foundation
public import HostStats
import SSHTransport
import Synchronization
import ValueFormats

/// How a watch runs: how often, for how long, with which collector.
public struct WatchPlan: Sendable {
    /// The hosts watched from the start (``FleetWatch/replaceHosts(_:)`` changes them while it runs).
    public var hosts: [ResolvedHost]
    public var interval: Duration
    /// Ticks per host; `nil` runs until ``duration`` ends or the watch is cancelled.
    public var count: Int?
    /// How long to run; `nil` runs until ``count`` ticks or cancellation.
    public var duration: Duration?
    public var collector: CollectorOptions
    /// Labels and group settings of hosts by name (a fleet file's); a host without one takes the plan's settings.
    public var profiles: [String: HostProfile]
    /// The longest wait between reconnect attempts to a failing host.
    public var maximumBackoff: Duration

    public init(
        hosts: [ResolvedHost], interval: Duration, count: Int? = nil, duration: Duration? = nil,
        collector: CollectorOptions = CollectorOptions(), profiles: [String: HostProfile] = [:],
        maximumBackoff: Duration = .seconds(30)
    ) {
        self.hosts = hosts
        self.interval = interval
        self.count = count
        self.duration = duration
        self.collector = collector
        self.profiles = profiles
        self.maximumBackoff = maximumBackoff
    }

    /// Every command and connect must end within a tick, so a slow host yields a timeout
    /// record for its tick instead of pushing its next tick back.
    var tickBudget: Duration { Self.tickBudget(interval) }

    /// The tick budget of a host ticking every `interval`.
    static func tickBudget(_ interval: Duration) -> Duration { interval * 0.8 }

    /// Whether the plan ends by itself (a count or a duration) rather than on cancellation.
    var isFinite: Bool { count != nil || duration != nil }
}

/// One host's live state in a watch.
public struct HostWatchState: Sendable, Equatable {
    /// Where the host's session stands.
    public enum Phase: Sendable, Equatable {
        /// No tick has finished yet.
        case connecting
        /// The last tick gave a snapshot.
        case up
        /// The last tick failed on a session that is still open (a command or its output failed).
        case failing
        /// The connection failed; no attempt is made before this time, and ticks until then are error
        /// records naming the last failure.
        case backingOff(until: Date)
    }

    /// The host as the user named it.
    public var host: String
    public var phase: Phase
    /// Ticks so far, error records included.
    public var ticks = 0
    /// Error records so far.
    public var errors = 0
    /// Error records so far by kind of failure (their sum is ``errors``).
    public var errorsByKind: [FailureKind: Int] = [:]
    /// When the last record was collected.
    public var lastTick: Date?
    /// When the last snapshot was collected.
    public var lastSuccess: Date?
    /// The last failure as `kind: message`, cleared by a snapshot.
    public var lastError: String?
    /// The last record, snapshot or error.
    public var latest: SnapshotRecord?
    /// The host's labels from the fleet file (empty without one).
    public var labels: [String: String] = [:]

    public init(host: String, phase: Phase = .connecting, labels: [String: String] = [:]) {
        self.host = host
        self.phase = phase
        self.labels = labels
    }

    /// CPU busy share of the last snapshot, while the host is up.
    public var cpuBusyPercent: Double? { lastSnapshot?.cpu?.busyPercent }
    /// Memory used share of the last snapshot, while the host is up.
    public var memoryUsedPercent: Double? { lastSnapshot?.memory?.usedPercent }

    private var lastSnapshot: Snapshot? {
        if case .snapshot(let snapshot) = latest, phase == .up { return snapshot }
        return nil
    }
}

/// What a watch tells its subscribers, in the order it happened.
public enum WatchEvent: Sendable, Equatable {
    /// A host's tick gave this record.
    case record(SnapshotRecord)
    /// A host's state changed (a new host starts as `connecting`).
    case state(HostWatchState)
    /// A host left the watch (``FleetWatch/replaceHosts(_:)``).
    case removed(host: String)
    /// This subscriber read too slowly and lost this many events before the next one; the current
    /// state is in ``FleetWatch/states``.
    case missed(Int)
}

/// Capped exponential backoff for reconnecting to a failing host: the first retry waits one
/// interval, each further failure doubles the wait up to the cap, a success resets it.
///
/// With `jitter`, each wait is stretched by a random share of itself (up to that fraction), so
/// hosts that failed together (a network blip, a restarted bastion) do not all retry in the same
/// instant.
public struct ReconnectBackoff: Sendable, Equatable {
    public let initial: Duration
    public let maximum: Duration
    /// The largest share of a wait added at random, 0 for none.
    public let jitter: Double
    public private(set) var current: Duration?
    public private(set) var nextAttempt: Date?

    public init(initial: Duration, maximum: Duration, jitter: Double = 0) {
        self.initial = initial
        self.maximum = max(initial, maximum)
        self.jitter = min(1, max(0, jitter))
    }

    /// Whether a connection may be attempted at `now`.
    public func allowsAttempt(at now: Date) -> Bool {
        nextAttempt.map { now >= $0 } ?? true
    }

    /// - Parameter random: a number in 0..<1 that picks the jitter.
    public mutating func failed(at now: Date, random: Double) {
        let wait = current.map { min($0 * 2, maximum) } ?? initial
        current = wait
        nextAttempt = now.addingTimeInterval((wait + wait * (jitter * random)).inSeconds)
    }

    public mutating func succeeded() {
        current = nil
        nextAttempt = nil
    }
}

/// A fleet watch: each host on its own loop of fixed-rate ticks (due at its phase + k × interval, see
/// ``TickSchedule``, so lateness never accumulates and a fleet's probes are spread over the interval),
/// each tick yielding exactly one record — a snapshot or an error record, carrying the slot it was due
/// at — so gaps are visible. A slow or dead host never delays the others. A host that refused the keys or
/// showed a host key not trusted is retried with capped exponential backoff (the ticks in between are
/// error records naming the last failure and the next attempt); one that is down or unreachable is tried
/// again at each tick, so it is back within a tick of coming back. A tick reached only after its whole
/// interval (the one before it overran) gets a `timeout` record starting `skipped:` instead of a
/// collection, so a host that falls behind catches up.
///
/// It is a long-lived service object: ``run()`` collects until the plan ends or the task is cancelled
/// (then every session is closed); meanwhile ``states`` reads each host's live state at any time,
/// ``subscribe(buffer:)`` hands any number of consumers the events (records, state changes), each
/// through a bounded buffer so that a slow one never holds up collection, and ``replaceHosts(_:)``
/// changes the host list (a reload keeps the sessions of the hosts that stay).
public final class FleetWatch: Sendable {
    /// The schedule and collector; its host list is the initial one.
    public let plan: WatchPlan
    private let clock: any WatchClock
    private let random: @Sendable () -> Double
    private let events = EventBroadcast<WatchEvent>(overflow: { .missed($0) })

    private struct Entry {
        var host: ResolvedHost
        var state: HostWatchState
        var profile: HostProfile
        /// Which start of the host this is: a host replaced by one of the same name starts again.
        var generation: Int
        var task: Task<Void, Never>?
    }

    private struct State {
        var order: [String] = []
        var entries: [String: Entry] = [:]
        var nextGeneration = 0
        /// While ``run()`` runs: where new hosts are started, and the first instant of the watch.
        var starter: AsyncStream<(ResolvedHost, Int)>.Continuation?
        var start: Date?
        var running = 0
        var ended = false
        /// ``stop()`` was called, perhaps before ``run()`` set up its starter.
        var stopped = false
    }

    private let state = Lock(State())

    /// A watch of `plan`; `clock` says when ticks are due and stamps records, `random` picks each
    /// backoff's jitter (0..<1).
    public init(
        plan: WatchPlan, clock: any WatchClock = SystemWatchClock(),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.plan = plan
        self.clock = clock
        self.random = random
        state.withLock { state in
            for host in plan.hosts where state.entries[host.displayName] == nil {
                state.order.append(host.displayName)
                let profile = plan.profiles[host.displayName] ?? HostProfile()
                state.entries[host.displayName] = Entry(
                    host: host, state: HostWatchState(host: host.displayName, labels: profile.labels),
                    profile: profile, generation: state.nextGeneration)
                state.nextGeneration += 1
            }
        }
    }

    /// Every host's current state, in the order the hosts were given.
    public var states: [HostWatchState] {
        state.withLock { state in state.order.compactMap { state.entries[$0]?.state } }
    }

    /// Whether ``run()`` has ended (every subscription then ends once read).
    public var hasEnded: Bool { state.withLock { $0.ended } }

    /// The hosts watched now, in order.
    public var hosts: [ResolvedHost] {
        state.withLock { state in state.order.compactMap { state.entries[$0]?.host } }
    }

    /// One host's current state; `nil` when it is not watched.
    public func state(of host: String) -> HostWatchState? {
        state.withLock { $0.entries[host]?.state }
    }

    /// Starts watching `host` too, at its next slot, unless a host of that name is watched already (a
    /// face that watches hosts as they are first asked for); returns whether it was added.
    @discardableResult
    public func addHost(_ host: ResolvedHost, profile: HostProfile = HostProfile()) -> Bool {
        let added = state.withLock { state -> HostWatchState? in
            let name = host.displayName
            guard state.entries[name] == nil, !state.ended else { return nil }
            let entry = Entry(
                host: host, state: HostWatchState(host: name, labels: profile.labels), profile: profile,
                generation: state.nextGeneration)
            state.nextGeneration += 1
            state.order.append(name)
            state.entries[name] = entry
            state.starter?.yield((host, entry.generation))
            return entry.state
        }
        guard let added else { return false }
        events.yield(.state(added))
        return true
    }

    /// Stops watching the hosts called `names` (their sessions close); names not watched are left alone.
    public func removeHosts(named names: Set<String>) {
        var stopped: [Task<Void, Never>] = []
        var removed: [String] = []
        state.withLock { state in
            for name in names {
                guard let entry = state.entries.removeValue(forKey: name) else { continue }
                if let task = entry.task { stopped.append(task) }
                removed.append(name)
            }
            if !removed.isEmpty { state.order.removeAll { names.contains($0) } }
        }
        for task in stopped { task.cancel() }
        for name in removed { events.yield(.removed(host: name)) }
    }

    /// The events from now on, the current state of every host first. `buffer` events are held for a
    /// slow reader; past that it loses the oldest and reads ``WatchEvent/missed(_:)``. The sequence ends
    /// when the watch ends (after the last events are read) or the reading task is cancelled.
    public func subscribe(buffer: Int = 1024) -> WatchSubscription {
        let current = states.map(WatchEvent.state)
        return WatchSubscription(base: events.subscribe(capacity: max(buffer, current.count + 1), initial: current))
    }

    /// Makes `hosts` the watched hosts: hosts no longer named stop (their sessions close), new ones start
    /// at their next slot, and hosts that stay keep their loop and session, unless where they connect or
    /// how they are collected changed (then they start again); `profiles` gives hosts their labels and
    /// group settings (a host without one takes the plan's settings).
    public func replaceHosts(_ hosts: [ResolvedHost], profiles: [String: HostProfile] = [:]) {
        var stopped: [Task<Void, Never>] = []
        var announce: [WatchEvent] = []
        state.withLock { state in
            var order: [String] = []
            var kept: [String: Entry] = [:]
            for host in hosts where kept[host.displayName] == nil {
                let name = host.displayName
                order.append(name)
                let profile = profiles[name] ?? HostProfile()
                if var entry = state.entries[name], entry.host.sameEndpoint(as: host),
                    !entry.profile.changesCollection(from: profile)
                {
                    if entry.profile.labels != profile.labels {
                        entry.state.labels = profile.labels
                        announce.append(.state(entry.state))
                    }
                    entry.profile = profile
                    kept[name] = entry
                    continue
                }
                let entry = Entry(
                    host: host, state: HostWatchState(host: name, labels: profile.labels), profile: profile,
                    generation: state.nextGeneration)
                state.nextGeneration += 1
                kept[name] = entry
                announce.append(.state(entry.state))
                state.starter?.yield((host, entry.generation))
            }
            for (name, entry) in state.entries where kept[name]?.generation != entry.generation {
                if let task = entry.task { stopped.append(task) }
                if kept[name] == nil { announce.insert(.removed(host: name), at: 0) }
            }
            state.order = order
            state.entries = kept
        }
        for task in stopped { task.cancel() }
        for event in announce { events.yield(event) }
    }

    /// Collects until the plan ends (every host did its count, or the duration passed) or the task is
    /// cancelled, then closes every session and ends the subscriptions. A plan without an end runs
    /// until cancelled, even while it has no hosts. Call once.
    public func run() async {
        let start = clock.now()
        let (starts, starter) = AsyncStream<(ResolvedHost, Int)>.makeStream()
        let (initial, stopped) = state.withLock { state -> ([(ResolvedHost, Int)], Bool) in
            state.start = start
            state.starter = starter
            return (
                state.order.compactMap { name in state.entries[name].map { ($0.host, $0.generation) } }, state.stopped
            )
        }
        for host in initial { starter.yield(host) }
        if (initial.isEmpty && plan.isFinite) || stopped { starter.finish() }
        await withTaskGroup(of: Void.self) { group in
            for await (host, generation) in starts {
                state.withLock { $0.running += 1 }
                group.addTask { await self.supervise(host, generation: generation, start: start) }
            }
            group.cancelAll()
        }
        state.withLock { state in
            state.starter = nil
            state.ended = true
        }
        events.finish()
    }

    /// Ends a running watch as cancelling it would (every session closed, the subscriptions ended), for a
    /// reason that is not the caller's own cancellation: the reader of its records went away, or a signal
    /// came. Callable from any thread, a signal handler's included: each host's loop is cancelled here, at
    /// once, rather than when a task of the watch next runs, so a busy process stops collecting without
    /// waiting for its turn; the records already published stay in the subscriptions.
    public func stop() {
        let (starter, tasks) = state.withLock { state in
            state.stopped = true
            return (state.starter, state.entries.values.compactMap(\.task))
        }
        starter?.finish()
        for task in tasks { task.cancel() }
    }

    /// Runs one host's loop as a task of its own, so that ``replaceHosts(_:)`` can stop it alone; a
    /// cancelled watch cancels it too.
    private func supervise(_ host: ResolvedHost, generation: Int, start: Date) async {
        let name = host.displayName
        let task = Task { await self.runHost(host, generation: generation, start: start) }
        let stillWatched = state.withLock { state -> Bool in
            guard state.entries[name]?.generation == generation, !state.stopped else { return false }
            state.entries[name]?.task = task
            return true
        }
        if !stillWatched { task.cancel() }
        await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
        let finished = state.withLock { state -> AsyncStream<(ResolvedHost, Int)>.Continuation? in
            if state.entries[name]?.generation == generation { state.entries[name]?.task = nil }
            state.running -= 1
            return state.running == 0 && plan.isFinite ? state.starter : nil
        }
        finished?.finish()
    }

    private func runHost(_ host: ResolvedHost, generation: Int, start: Date) async {
        let name = host.displayName
        let profile = state.withLock { $0.entries[name]?.profile } ?? HostProfile()
        let interval = profile.interval(in: plan)
        let tickBudget = WatchPlan.tickBudget(interval)
        var options = profile.collector(in: plan)
        options.commandTimeout = min(options.commandTimeout, tickBudget)
        // A tick waits for its host's connect no longer than its budget: with hundreds of hosts
        // connecting at once, one may wait for a handshake slot across several ticks, and each of those
        // gets its record on time while the connect keeps its place in line.
        let (runner, connection) = tuned(host, interval: interval).commandRunner(connectWait: tickBudget)
        let clock = clock
        let collector = HostCollector(host: name, runner: runner, options: options, now: { clock.now() })
        var backoff = ReconnectBackoff(initial: interval, maximum: plan.maximumBackoff, jitter: 0.2)
        var lastFailure: CollectionFailure?
        var current = HostWatchState(host: name)
        let schedule = TickSchedule(interval: interval, host: name)
        // A host added later starts at its first slot after it was added.
        let firstSlot = schedule.firstSlot(atOrAfter: max(start, clock.now()).addingTimeInterval(0.01))
        let end = plan.duration.map { start.addingTimeInterval($0.inSeconds) }
        var tick = 0
        while !Task.isCancelled {
            if let count = plan.count, tick >= count { break }
            let slot = schedule.slot(tick, after: firstSlot)
            if let end, slot > end { break }
            do {
                try await clock.sleep(until: slot)
            } catch {
                break
            }
            tick += 1
            let now = clock.now()
            var result: SnapshotRecord
            if TickSchedule.isOverrun(slot: slot, now: now, interval: interval) {
                // The previous tick ran past this slot's whole interval: collecting for it now would only
                // fall further behind, and a host that keeps collecting back to back starves the writer
                // of every host's records. The slot gets its record at once; the next one is collected.
                let late = Self.describe(now.timeIntervalSince(slot))
                result = .failure(
                    CollectionFailure(
                        host: name, collectedAt: now, kind: .timeout,
                        message: "skipped: the previous tick ran past this one's slot (\(late) late); the host "
                            + "or the machine running hostscope is too slow for --every "
                            + Self.describe(interval.inSeconds)))
            } else if let failure = lastFailure, !backoff.allowsAttempt(at: now), let next = backoff.nextAttempt {
                result = .failure(
                    CollectionFailure(
                        host: name, collectedAt: now, kind: failure.kind,
                        message: "\(failure.message) (next attempt in \(Self.describe(next.timeIntervalSince(now))))"))
            } else {
                result = await SnapshotTracing.collect(host: name, options: options, mode: "tick") {
                    await collector.tick()
                }
                switch result {
                case .snapshot:
                    backoff.succeeded()
                    lastFailure = nil
                case .failure(let failure):
                    let connected = await connection?.isConnected ?? true
                    if !connected {
                        await collector.reset()
                        if Self.backsOff(after: failure.kind) {
                            backoff.failed(at: clock.now(), random: random())
                            lastFailure = failure
                        }
                    }
                }
            }
            result.slot = slot
            current.ticks += 1
            current.lastTick = result.collectedAt
            current.latest = result
            switch result {
            case .snapshot:
                current.phase = .up
                current.lastError = nil
                current.lastSuccess = result.collectedAt
            case .failure(let failure):
                current.errors += 1
                current.errorsByKind[failure.kind, default: 0] += 1
                current.lastError = "\(failure.kind.rawValue): \(failure.message)"
                if lastFailure != nil, let next = backoff.nextAttempt {
                    current.phase = .backingOff(until: next)
                } else {
                    current.phase = .failing
                }
            }
            publish(result, current, generation: generation)
        }
        await connection?.close()
    }

    /// Stores a host's new state and tells the subscribers, unless the host left the watch meanwhile.
    private func publish(_ record: SnapshotRecord, _ hostState: HostWatchState, generation: Int) {
        let published = state.withLock { state -> HostWatchState? in
            guard let entry = state.entries[hostState.host], entry.generation == generation else { return nil }
            // The labels as the last reload gave them.
            var published = hostState
            published.labels = entry.profile.labels
            state.entries[hostState.host]?.state = published
            return published
        }
        guard let published else { return }
        events.yield(.record(record))
        events.yield(.state(published))
    }

    /// The host with connect and keepalive limits fitted to the interval.
    private func tuned(_ host: ResolvedHost, interval: Duration) -> ResolvedHost {
        guard case .ssh(var options) = host else { return host }
        options.connectTimeout = min(options.connectTimeout, WatchPlan.tickBudget(interval))
        options.keepaliveInterval = options.keepaliveInterval ?? max(interval, .seconds(15))
        return .ssh(options)
    }

    /// Whether a lost connection that failed this way waits out the backoff before the next attempt.
    ///
    /// Refused keys or passwords and a changed host key stay so until someone acts, and each attempt
    /// costs the host a handshake (and may count against fail2ban or MaxAuthTries): those back off.
    /// A host that is down, unreachable, stopped or too slow is tried again at its next tick, because
    /// each attempt is bounded by the tick budget and costs no more than the tick's error record, and
    /// waiting would keep a host that came back hidden for up to the backoff's cap (30 s) instead of
    /// the next tick.
    static func backsOff(after kind: FailureKind) -> Bool {
        kind == .auth || kind == .hostKey
    }

    static func describe(_ seconds: TimeInterval) -> String {
        let value = max(0, seconds)
        return value < 10 ? String(format: "%.1f s", value) : "\(Int(value.rounded())) s"
    }
}

/// The events of a ``FleetWatch`` for one subscriber (see ``FleetWatch/subscribe(buffer:)``).
public struct WatchSubscription: AsyncSequence, Sendable {
    let base: EventBroadcast<WatchEvent>.Subscription

    public func makeAsyncIterator() -> Iterator {
        Iterator(base: base.makeAsyncIterator())
    }

    public struct Iterator: AsyncIteratorProtocol {
        var base: EventBroadcast<WatchEvent>.Subscription.Iterator

        public mutating func next() async -> WatchEvent? {
            await base.next()
        }
    }
}

extension ResolvedHost {
    /// Whether two hosts reach the same place the same way (a reload keeps the session of such a host).
    func sameEndpoint(as other: ResolvedHost) -> Bool {
        switch (self, other) {
        case (.local, .local): true
        case (.ssh(let a), .ssh(let b)):
            a.hostName == b.hostName && a.port == b.port && a.user == b.user && a.identityFiles == b.identityFiles
                && a.route.isSame(as: b.route)
        default: false
        }
    }
}
