public import Alerting
public import Foundation
public import HostStats
public import Storage
import Synchronization
import ValueFormats

/// The alerts of a running watch: evaluates the rules on every record (``RecordSink`` hands each one over, in
/// order), keeps the states and transitions in the history database, and tells subscribers of each transition.
///
/// Opened with ``start(rules:database:diagnostics:now:)``, which takes back the alerts a previous run left
/// pending or firing, so that a restart neither forgets them nor sends them again as new.
public final class AlertEngine: Sendable {
    private struct State {
        var evaluator: AlertEvaluator
        var subscribers: [Int: AsyncStream<AlertTransition>.Continuation] = [:]
        var nextSubscriber = 0
    }

    private let state: Lock<State>
    private let database: StorageDatabase?
    private let diagnostics: Diagnostics
    private let now: @Sendable () -> Date
    /// Whether the last write to the database failed (said once per run of failures).
    private let storing = Lock(true)

    private init(
        rules: AlertRules, database: StorageDatabase?, diagnostics: Diagnostics, now: @escaping @Sendable () -> Date
    ) {
        state = Lock(State(evaluator: AlertEvaluator(rules: rules)))
        self.database = database
        self.diagnostics = diagnostics
        self.now = now
    }

    /// An engine for `rules`, with the alerts stored in `database` by an earlier run taken back.
    public static func start(
        rules: AlertRules, database: StorageDatabase?, diagnostics: Diagnostics,
        now: @escaping @Sendable () -> Date = { Date() }
    ) async -> AlertEngine {
        let engine = AlertEngine(rules: rules, database: database, diagnostics: diagnostics, now: now)
        if let database {
            do {
                let stored = try await database.alerts.current()
                engine.state.withLock { $0.evaluator.restore(stored.map(ActiveAlert.init(stored:))) }
            } catch {
                diagnostics.warning(
                    "the alerts of the previous run could not be read (\(error.message)); they start anew")
            }
        }
        return engine
    }

    /// The rules in force.
    public var rules: AlertRules { state.withLock { $0.evaluator.rules } }

    /// The pending and firing alerts now, firing first.
    public var alerts: [ActiveAlert] { state.withLock { $0.evaluator.alerts } }

    /// The same alerts in the form the database keeps, for readers that do not know the evaluator's types.
    public var storedAlerts: [StoredAlert] { alerts.map(StoredAlert.init(alert:)) }

    /// Evaluates the rules on `record` at its collection time; stores and announces what moved.
    @discardableResult
    public func observe(_ record: SnapshotRecord) async -> [AlertTransition] {
        let (transitions, current) = state.withLock { state in
            let moved = state.evaluator.evaluate(record, now: record.collectedAt)
            return (moved, state.evaluator.alerts(host: record.host))
        }
        await store(transitions, hosts: [record.host], current: current)
        announce(transitions)
        return transitions
    }

    /// Puts `rules` in force (a reload): alerts of rules that stay keep their state, those of rules that went
    /// away end now.
    @discardableResult
    public func reload(_ rules: AlertRules) async -> [AlertTransition] {
        let at = now()
        let (transitions, current) = state.withLock { state in
            let moved = state.evaluator.replaceRules(rules, now: at)
            let hosts = Set(moved.map(\.alert.host))
            return (moved, state.evaluator.alerts.filter { hosts.contains($0.host) })
        }
        await store(transitions, hosts: Set(transitions.map(\.alert.host)), current: current)
        announce(transitions)
        return transitions
    }

    /// Forgets hosts that left the watch: their alerts end now (firing ones resolve).
    @discardableResult
    public func removeHosts(_ hosts: Set<String>) async -> [AlertTransition] {
        guard !hosts.isEmpty else { return [] }
        let at = now()
        let transitions = state.withLock { state in
            hosts.sorted().flatMap { state.evaluator.removeHost($0, now: at) }
        }
        await store(transitions, hosts: hosts, current: [])
        announce(transitions)
        return transitions
    }

    /// Every transition from now on, until ``finish()``; a subscriber more than `buffer` behind loses the
    /// oldest.
    public func subscribe(buffer: Int = 1024) -> AsyncStream<AlertTransition> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: AlertTransition.self, bufferingPolicy: .bufferingNewest(max(1, buffer)))
        let id = state.withLock { state in
            defer { state.nextSubscriber += 1 }
            state.subscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Ends every subscription.
    public func finish() {
        let subscribers = state.withLock { state in
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        subscribers.forEach { $0.finish() }
    }

    private func announce(_ transitions: [AlertTransition]) {
        guard !transitions.isEmpty else { return }
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers {
            transitions.forEach { subscriber.yield($0) }
        }
    }

    private func store(_ transitions: [AlertTransition], hosts: Set<String>, current: [ActiveAlert]) async {
        guard let database else { return }
        // Only a change is written: an alert that stays pending or firing is stored again when it moves, so
        // a steady fleet writes nothing here.
        guard !transitions.isEmpty else { return }
        do {
            try await database.alerts.record(
                transitions: transitions.map(StoredAlertTransition.init(transition:)), replacing: hosts,
                with: current.map(StoredAlert.init(alert:)))
            if !storing.withLock({ ok in
                defer { ok = true }; return ok
            }) {
                diagnostics.note("storing alerts in the history database again")
            }
        } catch {
            if storing.withLock({ ok in
                defer { ok = false }; return ok
            }) {
                diagnostics.error("alerts could not be stored (\(error.message)); they are still evaluated and sent")
            }
        }
    }
}

extension ActiveAlert {
    /// An alert as the database kept it.
    init(stored: StoredAlert) {
        self.init(
            ruleKey: stored.ruleKey, subject: stored.subject, labels: stored.labels, annotations: stored.annotations,
            state: AlertState(rawValue: stored.state) ?? .pending, value: stored.value, activeAt: stored.activeAt,
            firedAt: stored.firedAt, lastHeldAt: stored.lastHeldAt)
    }
}

extension StoredAlert {
    /// An alert of the evaluator, as the database keeps it.
    public init(alert: ActiveAlert) {
        self.init(
            fingerprint: alert.fingerprint, ruleKey: alert.ruleKey, subject: alert.subject, host: alert.host,
            name: alert.name, severity: alert.severity, state: alert.state.rawValue, value: alert.value,
            activeAt: alert.activeAt, firedAt: alert.firedAt, lastHeldAt: alert.lastHeldAt, labels: alert.labels,
            annotations: alert.annotations)
    }
}

extension StoredAlertTransition {
    /// A transition of the evaluator, as the database keeps it.
    public init(transition: AlertTransition) {
        let alert = transition.alert
        self.init(
            at: transition.at, fingerprint: alert.fingerprint, host: alert.host, name: alert.name,
            severity: alert.severity, from: transition.from.rawValue, to: transition.to.rawValue, value: alert.value,
            labels: alert.labels, annotations: alert.annotations)
    }
}
