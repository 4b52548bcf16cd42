public import Foundation
public import HostStats
import SSHTransport
import ValueFormats

/// Where an alert is in its life: inactive → pending (conditions hold, `for` not yet passed) → firing →
/// resolved (conditions stopped holding, `keep_firing_for` passed).
public enum AlertState: String, Sendable, Equatable, CaseIterable {
    case inactive
    case pending
    case firing
    case resolved
}

/// One alert of one rule for one host (and one device of it): pending or firing.
public struct ActiveAlert: Sendable, Equatable {
    /// The rule's identity (name, severity and labels), which stays the same across reloads of its file.
    public var ruleKey: String
    /// The device the alert is about (a mount point, a device, a core), empty for a host-wide alert.
    public var subject: String
    /// `alertname`, `severity`, `instance` (the host), the device's labels and the rule's labels.
    public var labels: [String: String]
    /// The rule's annotations, filled in with the labels and the value.
    public var annotations: [String: String]
    public var state: AlertState
    /// The first condition's figure at the latest evaluation where the conditions held.
    public var value: Double
    /// When the conditions started holding (Prometheus's `activeAt`).
    public var activeAt: Date
    /// When the alert fired, once it has.
    public var firedAt: Date?
    /// The latest evaluation at which the conditions held.
    public var lastHeldAt: Date

    public init(
        ruleKey: String, subject: String, labels: [String: String], annotations: [String: String], state: AlertState,
        value: Double, activeAt: Date, firedAt: Date?, lastHeldAt: Date
    ) {
        self.ruleKey = ruleKey
        self.subject = subject
        self.labels = labels
        self.annotations = annotations
        self.state = state
        self.value = value
        self.activeAt = activeAt
        self.firedAt = firedAt
        self.lastHeldAt = lastHeldAt
    }

    public var name: String { labels["alertname"] ?? "" }
    public var host: String { labels["instance"] ?? "" }
    public var severity: String { labels["severity"] ?? "" }

    /// The labels in one string, sorted by name: the alert's identity (Alertmanager's fingerprint is over the
    /// same set).
    public var fingerprint: String {
        labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
    }
}

/// An alert moving from one state to another.
public struct AlertTransition: Sendable, Equatable {
    /// The alert as it is after the move (for a resolution, as it was when it last fired).
    public var alert: ActiveAlert
    public var from: AlertState
    public var to: AlertState
    public var at: Date

    public init(alert: ActiveAlert, from: AlertState, to: AlertState, at: Date) {
        self.alert = alert
        self.from = from
        self.to = to
        self.at = at
    }
}

/// Evaluates a set of rules on every record of every host: one small state machine per rule × host × device.
///
/// A value type driven from outside: ``evaluate(_:now:)`` takes the time, so tests drive it record by record,
/// and the caller (the core's watch) keeps it behind a lock. Rules over a snapshot's figures are left as they
/// are by a failed record (a host that cannot be reached neither fires nor resolves its disk alerts); rules
/// over the collection itself (`unreachable_records`, …) are evaluated on every record.
public struct AlertEvaluator: Sendable {
    public private(set) var rules: AlertRules
    private var compiled: [CompiledRule]
    /// Pending and firing alerts, by rule and host, then by subject.
    private var active: [RuleHost: [String: ActiveAlert]] = [:]
    private var hosts: [String: HostMemory] = [:]
    private var series: [SeriesKey: TrendSeries] = [:]
    /// The longest window each predicted figure is read over, worked out when the rules are set.
    private var trendWindows: [String: Double]

    public init(rules: AlertRules) {
        self.rules = rules
        self.compiled = rules.rules.map(CompiledRule.init)
        self.trendWindows = Self.windows(of: rules)
    }

    /// Every pending and firing alert, firing first, then by name, host and subject.
    public var alerts: [ActiveAlert] {
        Self.ordered(active.values.flatMap(\.values))
    }

    /// The pending and firing alerts of one host, ordered as ``alerts``: a look-up per rule, so that a record's
    /// evaluation does not sort the alerts of the whole fleet.
    public func alerts(host: String) -> [ActiveAlert] {
        Self.ordered(compiled.flatMap { rule in active[RuleHost(rule: rule.key, host: host)]?.values.map { $0 } ?? [] })
    }

    private static func ordered(_ alerts: [ActiveAlert]) -> [ActiveAlert] {
        // Each key is read once per alert (name, host and severity are look-ups in its labels), not once per
        // comparison: `serve` orders the whole fleet's alerts, hundreds of them, for every document it makes.
        alerts.map { (key: ($0.state == .firing ? 0 : 1, $0.name, $0.host, $0.subject, $0.severity), alert: $0) }
            .sorted { $0.key < $1.key }.map(\.alert)
    }

    /// Takes back alerts kept from an earlier run (the history database), so that a restart neither forgets a
    /// firing alert nor sends it again as new. Alerts of rules no longer present are dropped.
    public mutating func restore(_ alerts: [ActiveAlert]) {
        let keys = Set(compiled.map(\.key))
        for alert in alerts where keys.contains(alert.ruleKey) && alert.state != .resolved {
            active[RuleHost(rule: alert.ruleKey, host: alert.host), default: [:]][alert.subject] = alert
            hosts[alert.host]?.mayHaveAlerts = []
        }
    }

    /// Replaces the rules (a reload): alerts of rules that stay keep their state; those of rules that are
    /// gone resolve (firing) or end (pending) now, as the transitions returned say.
    public mutating func replaceRules(_ rules: AlertRules, now: Date) -> [AlertTransition] {
        self.rules = rules
        compiled = rules.rules.map(CompiledRule.init)
        trendWindows = Self.windows(of: rules)
        let keys = Set(compiled.map(\.key))
        var transitions: [AlertTransition] = []
        for (ruleHost, alerts) in active where !keys.contains(ruleHost.rule) {
            for alert in alerts.values {
                transitions.append(Self.ended(alert, at: now))
            }
            active[ruleHost] = nil
        }
        // The per-rule memories are by position: worked out again for the new rules.
        for host in hosts.keys {
            hosts[host]?.applies = []
            hosts[host]?.mayHaveAlerts = []
        }
        return transitions.sorted { $0.alert.fingerprint < $1.alert.fingerprint }
    }

    /// Forgets a host that left the fleet: its alerts resolve or end now.
    public mutating func removeHost(_ host: String, now: Date) -> [AlertTransition] {
        hosts[host] = nil
        series = series.filter { $0.key.host != host }
        var transitions: [AlertTransition] = []
        for (ruleHost, alerts) in active where ruleHost.host == host {
            transitions += alerts.values.map { Self.ended($0, at: now) }
            active[ruleHost] = nil
        }
        return transitions
    }

    private static func ended(_ alert: ActiveAlert, at now: Date) -> AlertTransition {
        var alert = alert
        let from = alert.state
        alert.state = from == .firing ? .resolved : .inactive
        return AlertTransition(alert: alert, from: from, to: alert.state, at: now)
    }

    /// Evaluates every rule that applies to the record's host, at `now`, and returns the alerts that moved.
    public mutating func evaluate(_ record: SnapshotRecord, now: Date) -> [AlertTransition] {
        let host = record.host
        var memory = hosts[host] ?? HostMemory()
        memory.failures.record(record)
        var input = FigureInput(snapshot: nil, previous: memory.previous, failures: memory.failures)
        if case .snapshot(let snapshot) = record {
            input.snapshot = snapshot
            memory.previous = snapshot
        }
        var cache = FigureCache(input: input)
        if input.snapshot != nil { updateSeries(host: host, cache: &cache, now: now) }
        var transitions: [AlertTransition] = []
        if memory.applies.count != compiled.count || memory.mayHaveAlerts.count != compiled.count {
            memory.applies = Array(repeating: nil, count: compiled.count)
            memory.mayHaveAlerts = Array(repeating: true, count: compiled.count)
        }
        for (index, rule) in compiled.enumerated() {
            let applies: Bool
            if let known = memory.applies[index] {
                applies = known
            } else {
                applies = rule.applies(to: host)
                memory.applies[index] = applies
            }
            guard applies, rule.collectionOnly || input.snapshot != nil else { continue }
            memory.mayHaveAlerts[index] = evaluate(
                rule, host: host, cache: &cache, now: now, mayHaveAlerts: memory.mayHaveAlerts[index],
                into: &transitions)
        }
        hosts[host] = memory
        return transitions
    }

    private mutating func updateSeries(host: String, cache: inout FigureCache, now: Date) {
        for (figure, window) in trendWindows {
            for value in cache.values(figure) {
                let key = SeriesKey(host: host, figure: figure, subject: value.subject)
                series[key, default: TrendSeries()].add(now.timeIntervalSince1970, value.value, keep: window)
            }
        }
    }

    private static func windows(of rules: AlertRules) -> [String: Double] {
        var windows: [String: Double] = [:]
        for rule in rules.rules {
            for condition in rule.conditions {
                guard let trend = condition.trend else { continue }
                windows[condition.figure] = max(windows[condition.figure] ?? 0, trend.window.inSeconds)
            }
        }
        return windows
    }

    /// Evaluates one rule on one host; whether the rule has alerts on the host afterwards. Without alerts before
    /// (`mayHaveAlerts` false) and none holding now, nothing is looked up: most rules hold on most records for
    /// no host, and the alerts are keyed by strings that cost a hash each.
    private mutating func evaluate(
        _ rule: CompiledRule, host: String, cache: inout FigureCache, now: Date, mayHaveAlerts: Bool,
        into transitions: inout [AlertTransition]
    ) -> Bool {
        // The subjects whose conditions all hold, with the first condition's value.
        var holding: [String: (labels: [String: String], value: Double)] = [:]
        let first = rule.rule.conditions[0]
        for candidate in values(of: first, host: host, cache: &cache, now: now)
        where first.comparison.holds(candidate.value, first.threshold) {
            var holds = true
            // Each further condition is read for this subject only, and only while the ones before hold: a
            // prediction is worked out for the few filesystems that are already low.
            for condition in rule.rule.conditions.dropFirst() {
                guard let value = value(of: condition, subject: candidate.subject, host: host, cache: &cache, now: now),
                    condition.comparison.holds(value, condition.threshold)
                else {
                    holds = false
                    break
                }
            }
            if holds { holding[candidate.subject] = (candidate.labels, candidate.value) }
        }
        if holding.isEmpty && !mayHaveAlerts { return false }
        let key = RuleHost(rule: rule.key, host: host)
        var alerts = active[key] ?? [:]
        for (subject, found) in holding {
            var labels = rule.rule.labels.merging(found.labels) { rule, _ in rule }
            labels["alertname"] = rule.rule.name
            labels["severity"] = rule.rule.severity.rawValue
            labels["instance"] = host
            let annotations = rule.rule.annotations.mapValues { $0.render(labels: labels, value: found.value) }
            if var alert = alerts[subject] {
                alert.value = found.value
                alert.lastHeldAt = now
                alert.annotations = annotations
                alert.labels = labels
                if alert.state == .pending, now.timeIntervalSince(alert.activeAt) >= rule.forSeconds {
                    alert.state = .firing
                    alert.firedAt = now
                    transitions.append(AlertTransition(alert: alert, from: .pending, to: .firing, at: now))
                }
                alerts[subject] = alert
            } else {
                let fires = rule.forSeconds <= 0
                let alert = ActiveAlert(
                    ruleKey: rule.key, subject: subject, labels: labels, annotations: annotations,
                    state: fires ? .firing : .pending, value: found.value, activeAt: now, firedAt: fires ? now : nil,
                    lastHeldAt: now)
                transitions.append(AlertTransition(alert: alert, from: .inactive, to: alert.state, at: now))
                alerts[subject] = alert
            }
        }
        for (subject, alert) in alerts where holding[subject] == nil {
            if alert.state == .firing, now.timeIntervalSince(alert.lastHeldAt) < rule.keepFiringSeconds { continue }
            transitions.append(Self.ended(alert, at: now))
            alerts[subject] = nil
        }
        active[key] = alerts.isEmpty ? nil : alerts
        return !alerts.isEmpty
    }

    /// A condition's value for one subject now (a host-wide figure's for every subject), memoised per record.
    private func value(
        of condition: AlertCondition, subject: String, host: String, cache: inout FigureCache, now: Date
    ) -> Double? {
        let figure = cache.bySubject(condition.figure)
        guard let found = figure[subject] ?? figure[""] else { return nil }
        guard let trend = condition.trend else { return found.value }
        let key = PredictionKey(figure: condition.figure, subject: found.subject, trend: trend)
        if let known = cache.predictions[key] { return known }
        let predicted = series[SeriesKey(host: host, figure: condition.figure, subject: found.subject)]?.predict(
            at: now.timeIntervalSince1970, window: trend.window.inSeconds, horizon: trend.horizon.inSeconds)
        cache.predictions[key] = predicted
        return predicted
    }

    /// A condition's values for a host now: the figure's, or its prediction.
    private func values(of condition: AlertCondition, host: String, cache: inout FigureCache, now: Date)
        -> [SubjectValue]
    {
        let values = cache.values(condition.figure)
        guard let trend = condition.trend else { return values }
        let at = now.timeIntervalSince1970
        return values.compactMap { value in
            let key = SeriesKey(host: host, figure: condition.figure, subject: value.subject)
            guard
                let predicted = series[key]?.predict(
                    at: at, window: trend.window.inSeconds,
                    horizon: trend.horizon.inSeconds)
            else { return nil }
            return SubjectValue(subject: value.subject, labels: value.labels, value: predicted)
        }
    }
}

/// A rule with what evaluation needs of it worked out once.
private struct CompiledRule: Sendable {
    let rule: AlertRule
    let key: String
    let forSeconds: Double
    let keepFiringSeconds: Double
    let collectionOnly: Bool
    let patterns: String

    init(_ rule: AlertRule) {
        self.rule = rule
        key = AlertRuleKey.of(rule)
        forSeconds = rule.forDuration.inSeconds
        keepFiringSeconds = rule.keepFiringFor.inSeconds
        collectionOnly = rule.conditions.allSatisfy { AlertFigure.all[$0.figure]?.scope == .collection }
        patterns = rule.hosts.joined(separator: ",")
    }

    func applies(to host: String) -> Bool {
        patterns.isEmpty || HostPattern.matches(hostName: host, patternList: patterns)
    }
}

/// The identity of a rule across reloads: its name, severity and labels.
enum AlertRuleKey {
    static func of(_ rule: AlertRule) -> String {
        ([rule.name, rule.severity.rawValue] + rule.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })
            .joined(separator: "/")
    }
}

private struct RuleHost: Hashable, Sendable {
    var rule: String
    var host: String
}

private struct PredictionKey: Hashable {
    var figure: String
    var subject: String
    var trend: AlertCondition.Trend
}

private struct SeriesKey: Hashable, Sendable {
    var host: String
    var figure: String
    var subject: String
}

/// What the evaluator keeps of a host between its records.
private struct HostMemory: Sendable {
    var previous: Snapshot?
    var failures = FailureRun()
    /// Whether each rule's host patterns admit the host, worked out on first use; by the rule's position.
    var applies: [Bool?] = []
    /// Whether each rule may have alerts on the host (false once an evaluation left it none); by position.
    var mayHaveAlerts: [Bool] = []
}

/// One value of a figure with the identity of its device.
struct SubjectValue: Sendable {
    var subject: String
    var labels: [String: String]
    var value: Double
}

/// The figures of one record, each read once however many rules use it.
private struct FigureCache {
    let input: FigureInput
    var read: [String: [SubjectValue]] = [:]
    var indexed: [String: [String: SubjectValue]] = [:]
    var predictions: [PredictionKey: Double?] = [:]

    /// A figure's values by subject.
    mutating func bySubject(_ name: String) -> [String: SubjectValue] {
        if let known = indexed[name] { return known }
        let index = Dictionary(values(name).map { ($0.subject, $0) }, uniquingKeysWith: { first, _ in first })
        indexed[name] = index
        return index
    }

    init(input: FigureInput) { self.input = input }

    mutating func values(_ name: String) -> [SubjectValue] {
        if let known = read[name] { return known }
        guard let figure = AlertFigure.all[name] else { return [] }
        let values = figure.read(input).map { value in
            SubjectValue(subject: figure.scope.subject(of: value.labels), labels: value.labels, value: value.value)
        }
        read[name] = values
        return values
    }
}

extension AlertFigure.Scope {
    /// The label that tells one device from another.
    func subject(of labels: [String: String]) -> String {
        switch self {
        case .host, .collection: ""
        case .filesystem: labels["mountpoint"] ?? ""
        case .interface, .disk: labels["device"] ?? ""
        case .core: labels["cpu"] ?? ""
        }
    }
}

/// A figure's recent samples, for `predict_linear`.
struct TrendSeries: Sendable {
    private var times: [Double] = []
    private var values: [Double] = []
    /// The first sample still in the window: samples before it are dropped in bulk, not one by one.
    private var start = 0

    mutating func add(_ time: Double, _ value: Double, keep window: Double) {
        times.append(time)
        values.append(value)
        let oldest = time - window
        while start < times.count, times[start] < oldest { start += 1 }
        if start > 64, start * 2 > times.count {
            times.removeFirst(start)
            values.removeFirst(start)
            start = 0
        }
    }

    /// The least-squares line through the samples of the last `window` seconds, read `horizon` seconds after
    /// `at`, as PromQL's `predict_linear`; nil with fewer than two samples.
    func predict(at: Double, window: Double, horizon: Double) -> Double? {
        var n = 0.0
        var sumX = 0.0
        var sumY = 0.0
        var sumXY = 0.0
        var sumX2 = 0.0
        for index in start..<times.count where times[index] >= at - window {
            let (time, value) = (times[index], values[index])
            // Times relative to `at`, so that the sums stay small and the intercept is the value at `at`.
            let x = time - at
            n += 1
            sumX += x
            sumY += value
            sumXY += x * value
            sumX2 += x * x
        }
        guard n >= 2 else { return nil }
        let covariance = sumXY - sumX * sumY / n
        let variance = sumX2 - sumX * sumX / n
        guard variance > 0 else { return nil }
        let slope = covariance / variance
        let intercept = sumY / n - slope * sumX / n
        return intercept + slope * horizon
    }
}
