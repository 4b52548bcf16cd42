import Foundation
import HostStats
import Synchronization

/// A fleet watch that runs until stopped and whose host list can be changed while it runs (what
/// `serve` needs): hosts can be added, removed or replaced as a whole, and a host that stays keeps
/// its loop, its session and its schedule.
///
/// Each host runs as a one-host ``FleetWatch`` of its own, so it ticks exactly as under `watch`
/// (its own phase, backoff, one record per tick). Events of every host come out of ``run(_:)`` one
/// at a time, in the order they happen.
public final class LiveWatch: Sendable {
    /// Something that happened in the watch.
    public enum Event: Sendable {
        /// A host's record for one tick.
        case record(SnapshotRecord)
        /// A change of a host's state.
        case status(HostWatchStatus)
        /// The host list changed: the hosts now watched, by name, and which were added and removed.
        case hostsChanged(hosts: [String], added: [String], removed: [String])
    }

    /// The schedule and collection settings every host uses.
    public let interval: Duration
    public let collector: CollectorOptions
    public let maximumBackoff: Duration

    private struct State {
        var hosts: [String: (host: ResolvedHost, task: Task<Void, Never>)] = [:]
        var order: [String] = []
        var stopped = false
    }

    private let state = Mutex(State())
    private let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation

    public init(interval: Duration, collector: CollectorOptions, maximumBackoff: Duration = .seconds(30)) {
        self.interval = interval
        self.collector = collector
        self.maximumBackoff = maximumBackoff
        (events, continuation) = AsyncStream<Event>.makeStream()
    }

    /// The hosts watched now, in the order they were given.
    public var hostNames: [String] { state.withLock { $0.order } }

    /// Whether `name` is watched now.
    public func contains(_ name: String) -> Bool { state.withLock { $0.hosts[name] != nil } }

    /// Hands every event to `handle`, one at a time, until ``stop()`` and the last host's last event.
    public func run(_ handle: @Sendable (Event) async -> Void) async {
        for await event in events { await handle(event) }
    }

    /// Watches `hosts` from now on: hosts not in the list stop (their sessions close), new ones
    /// start, and hosts in both go on untouched. Returns the names added and removed.
    @discardableResult
    public func replaceHosts(_ hosts: [ResolvedHost]) -> (added: [String], removed: [String]) {
        var wanted: [String: ResolvedHost] = [:]
        var order: [String] = []
        for host in hosts where wanted[host.displayName] == nil {
            wanted[host.displayName] = host
            order.append(host.displayName)
        }
        let change = state.withLock { state -> (added: [String], removed: [String], order: [String])? in
            guard !state.stopped else { return nil }
            let removed = state.order.filter { wanted[$0] == nil }
            for name in removed { state.hosts.removeValue(forKey: name)?.task.cancel() }
            var added: [String] = []
            for name in order where state.hosts[name] == nil {
                state.hosts[name] = (wanted[name]!, start(wanted[name]!))
                added.append(name)
            }
            state.order = order
            return (added, removed, order)
        }
        guard let change else { return ([], []) }
        if !change.added.isEmpty || !change.removed.isEmpty {
            continuation.yield(.hostsChanged(hosts: change.order, added: change.added, removed: change.removed))
        }
        return (change.added, change.removed)
    }

    /// Starts watching one more host, unless it is watched already; returns whether it was added.
    @discardableResult
    public func add(_ host: ResolvedHost) -> Bool {
        let name = host.displayName
        let order = state.withLock { state -> [String]? in
            guard !state.stopped, state.hosts[name] == nil else { return nil }
            state.hosts[name] = (host, start(host))
            state.order.append(name)
            return state.order
        }
        guard let order else { return false }
        continuation.yield(.hostsChanged(hosts: order, added: [name], removed: []))
        return true
    }

    /// Stops every host (sessions closed) and ends ``run(_:)`` once their last events are handled.
    public func stop() async {
        let tasks = state.withLock { state -> [Task<Void, Never>] in
            state.stopped = true
            defer {
                state.hosts = [:]
                state.order = []
            }
            return state.hosts.values.map(\.task)
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        continuation.finish()
    }

    private func start(_ host: ResolvedHost) -> Task<Void, Never> {
        let plan = WatchPlan(hosts: [host], interval: interval, collector: collector, maximumBackoff: maximumBackoff)
        let continuation = continuation
        return Task {
            await FleetWatch(plan: plan).run(
                record: { continuation.yield(.record($0)) }, status: { continuation.yield(.status($0)) })
        }
    }
}
