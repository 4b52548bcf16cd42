import Foundation
import HostStats
import SSHTransport

/// What `watch` runs: which hosts, how often, for how long.
public struct WatchPlan: Sendable {
    public var hosts: [ResolvedHost]
    public var interval: Duration
    /// Ticks per host; `nil` runs until ``duration`` ends or the watch is cancelled.
    public var count: Int?
    /// How long to run; `nil` runs until ``count`` ticks or cancellation.
    public var duration: Duration?
    public var collector: CollectorOptions
    /// The longest wait between reconnect attempts to a failing host.
    public var maximumBackoff: Duration

    public init(
        hosts: [ResolvedHost], interval: Duration, count: Int? = nil, duration: Duration? = nil,
        collector: CollectorOptions = CollectorOptions(), maximumBackoff: Duration = .seconds(30)
    ) {
        self.hosts = hosts
        self.interval = interval
        self.count = count
        self.duration = duration
        self.collector = collector
        self.maximumBackoff = maximumBackoff
    }

    /// Every command and connect must end within a tick, so a slow host yields a timeout
    /// record for its tick instead of pushing its next tick back.
    var tickBudget: Duration { interval * 0.8 }
}

/// One host's state for a live status display.
public struct HostWatchStatus: Sendable, Equatable {
    public enum State: String, Sendable {
        case connecting, ok, failing, waiting
    }

    public var host: String
    public var state: State
    public var ticks = 0
    public var errors = 0
    public var lastTick: Date?
    public var cpuBusyPercent: Double?
    public var memoryUsedPercent: Double?
    public var lastError: String?
    /// When the next connection attempt of a failing host is due.
    public var nextAttempt: Date?

    public init(
        host: String, state: State, ticks: Int = 0, errors: Int = 0, lastTick: Date? = nil,
        cpuBusyPercent: Double? = nil, memoryUsedPercent: Double? = nil, lastError: String? = nil,
        nextAttempt: Date? = nil
    ) {
        self.host = host
        self.state = state
        self.ticks = ticks
        self.errors = errors
        self.lastTick = lastTick
        self.cpuBusyPercent = cpuBusyPercent
        self.memoryUsedPercent = memoryUsedPercent
        self.lastError = lastError
        self.nextAttempt = nextAttempt
    }
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
    public private(set) var nextAttempt: ContinuousClock.Instant?

    public init(initial: Duration, maximum: Duration, jitter: Double = 0) {
        self.initial = initial
        self.maximum = max(initial, maximum)
        self.jitter = min(1, max(0, jitter))
    }

    /// Whether a connection may be attempted at `now`.
    public func allowsAttempt(at now: ContinuousClock.Instant) -> Bool {
        nextAttempt.map { now >= $0 } ?? true
    }

    /// - Parameter random: a number in 0..<1 that picks the jitter (injected by tests).
    public mutating func failed(at now: ContinuousClock.Instant, random: Double = Double.random(in: 0..<1)) {
        let wait = current.map { min($0 * 2, maximum) } ?? initial
        current = wait
        nextAttempt = now + wait + wait * (jitter * random)
    }

    public mutating func succeeded() {
        current = nil
        nextAttempt = nil
    }
}

/// Runs `watch`: each host on its own loop of fixed-rate ticks (due at its phase + k × interval,
/// see ``TickSchedule``, so lateness never accumulates and a fleet's probes are spread over the
/// interval), each tick yielding exactly one record — a snapshot or an error record, carrying
/// the slot it was due at — so gaps are visible. A slow or dead host never delays the others; a host whose
/// connection fails is retried with capped exponential backoff, and the ticks in between are
/// error records naming the last failure and the next attempt.
public struct FleetWatch: Sendable {
    public let plan: WatchPlan

    public init(plan: WatchPlan) {
        self.plan = plan
    }

    /// Runs to the end of the plan or until the task is cancelled. `record` receives every
    /// record from one task at a time, in the order they complete; `status` every change of a
    /// host's state.
    public func run(
        record: @escaping @Sendable (SnapshotRecord) async -> Void,
        status: @escaping @Sendable (HostWatchStatus) async -> Void = { _ in }
    ) async {
        let (stream, continuation) = AsyncStream<Event>.makeStream()
        // One reading of both clocks: slots are wall-clock instants, sleeps use the monotonic clock.
        let start = (wall: Date(), monotonic: ContinuousClock.now)
        let hosts = plan.hosts
        let producers = Task {
            await withTaskGroup(of: Void.self) { group in
                for host in hosts {
                    group.addTask { await runHost(host, start: start, events: continuation) }
                }
            }
            continuation.finish()
        }
        // One consumer keeps writes to files and the database in a single order.
        for await event in stream {
            switch event {
            case .record(let value): await record(value)
            case .status(let value): await status(value)
            }
        }
        producers.cancel()
    }

    enum Event: Sendable {
        case record(SnapshotRecord)
        case status(HostWatchStatus)
    }

    private func runHost(
        _ host: ResolvedHost, start: (wall: Date, monotonic: ContinuousClock.Instant),
        events: AsyncStream<Event>.Continuation
    ) async {
        var options = plan.collector
        options.commandTimeout = min(options.commandTimeout, plan.tickBudget)
        let name = host.displayName
        let connection: HostConnection?
        let runner: any CommandRunner
        switch host {
        case .local:
            connection = nil
            runner = LocalCommandRunner()
        case .ssh(var ssh):
            ssh.connectTimeout = min(ssh.connectTimeout, plan.tickBudget)
            ssh.keepaliveInterval = ssh.keepaliveInterval ?? max(plan.interval, .seconds(15))
            let made = HostConnection(options: ssh)
            connection = made
            runner = made
        }
        let collector = HostCollector(host: name, runner: runner, options: options)
        var backoff = ReconnectBackoff(initial: plan.interval, maximum: plan.maximumBackoff, jitter: 0.2)
        var lastFailure: CollectionFailure?
        var state = HostWatchStatus(host: name, state: .connecting)
        events.yield(.status(state))
        let schedule = TickSchedule(interval: plan.interval, host: name)
        let firstSlot = schedule.firstSlot(atOrAfter: start.wall.addingTimeInterval(0.01))
        let end = plan.duration.map { start.wall.addingTimeInterval(Self.seconds($0)) }
        var tick = 0
        while !Task.isCancelled {
            if let count = plan.count, tick >= count { break }
            let slot = schedule.slot(tick, after: firstSlot)
            if let end, slot > end { break }
            let due = start.monotonic + .nanoseconds(Int64((slot.timeIntervalSince(start.wall) * 1e9).rounded()))
            do {
                try await Task.sleep(until: due, clock: .continuous)
            } catch {
                break
            }
            tick += 1
            let now = ContinuousClock.now
            var result: SnapshotRecord
            if let failure = lastFailure, !backoff.allowsAttempt(at: now), let next = backoff.nextAttempt {
                let wait = now.duration(to: next)
                result = .failure(
                    CollectionFailure(
                        host: name, collectedAt: Date(), kind: failure.kind,
                        message: "\(failure.message) (next attempt in \(Self.describe(wait)))"))
            } else {
                result = await SnapshotTracing.collect(host: name, options: options, mode: "tick") { await collector.tick() }
                switch result {
                case .snapshot:
                    backoff.succeeded()
                    lastFailure = nil
                case .failure(let failure):
                    let connected = await connection?.isConnected ?? true
                    if !connected {
                        backoff.failed(at: .now)
                        lastFailure = failure
                        await collector.reset()
                    }
                }
            }
            result.slot = slot
            state.ticks += 1
            state.lastTick = result.collectedAt
            switch result {
            case .snapshot(let snapshot):
                state.state = .ok
                state.cpuBusyPercent = snapshot.cpu?.busyPercent
                state.memoryUsedPercent = snapshot.memory?.usedPercent
                state.lastError = nil
                state.nextAttempt = nil
            case .failure(let failure):
                state.errors += 1
                state.state = lastFailure == nil ? .failing : .waiting
                state.lastError = "\(failure.kind.rawValue): \(failure.message)"
                state.nextAttempt = backoff.nextAttempt.map { Date().addingTimeInterval(Self.seconds(ContinuousClock.now.duration(to: $0))) }
            }
            events.yield(.record(result))
            events.yield(.status(state))
        }
        await connection?.close()
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func describe(_ duration: Duration) -> String {
        let value = max(0, seconds(duration))
        return value < 10 ? String(format: "%.1f s", value) : "\(Int(value.rounded())) s"
    }
}
