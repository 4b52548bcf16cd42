public import Foundation
import GRDB
import OrderedJSON

/// A pending or firing alert as stored, so that a restart takes it back.
public struct StoredAlert: Sendable, Equatable {
    /// The alert's labels in one string: its identity.
    public var fingerprint: String
    /// The identity of the rule it belongs to (name, severity, labels).
    public var ruleKey: String
    /// The device it is about, empty for a host-wide alert.
    public var subject: String
    public var host: String
    public var name: String
    public var severity: String
    /// `pending` or `firing`.
    public var state: String
    public var value: Double
    public var activeAt: Date
    public var firedAt: Date?
    public var lastHeldAt: Date
    public var labels: [String: String]
    public var annotations: [String: String]

    public init(
        fingerprint: String, ruleKey: String, subject: String, host: String, name: String, severity: String,
        state: String, value: Double, activeAt: Date, firedAt: Date?, lastHeldAt: Date, labels: [String: String],
        annotations: [String: String]
    ) {
        self.fingerprint = fingerprint
        self.ruleKey = ruleKey
        self.subject = subject
        self.host = host
        self.name = name
        self.severity = severity
        self.state = state
        self.value = value
        self.activeAt = activeAt
        self.firedAt = firedAt
        self.lastHeldAt = lastHeldAt
        self.labels = labels
        self.annotations = annotations
    }
}

/// One move of an alert from a state to another, as stored.
public struct StoredAlertTransition: Sendable, Equatable {
    /// The row id: insertion order (0 before it is stored).
    public var id: Int64
    public var at: Date
    public var fingerprint: String
    public var host: String
    public var name: String
    public var severity: String
    public var from: String
    public var to: String
    public var value: Double
    public var labels: [String: String]
    public var annotations: [String: String]

    public init(
        id: Int64 = 0, at: Date, fingerprint: String, host: String, name: String, severity: String, from: String,
        to: String, value: Double, labels: [String: String], annotations: [String: String]
    ) {
        self.id = id
        self.at = at
        self.fingerprint = fingerprint
        self.host = host
        self.name = name
        self.severity = severity
        self.from = from
        self.to = to
        self.value = value
        self.labels = labels
        self.annotations = annotations
    }
}

/// The alerts of the history database: the pending and firing ones now, and every transition.
public struct AlertStore: Sendable {
    let database: StorageDatabase

    /// In one transaction: stores `transitions`, replaces the stored alerts of `hosts` with `current` (those of
    /// other hosts stay), so the table always holds what the evaluator holds.
    public func record(
        transitions: [StoredAlertTransition], replacing hosts: Set<String>, with current: [StoredAlert]
    ) async throws(StorageError) {
        guard !transitions.isEmpty || !hosts.isEmpty else { return }
        try await database.write { db in
            for host in hosts {
                try db.execute(sql: "DELETE FROM alert_state WHERE host = ?", arguments: [host])
            }
            let insert = try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO alert_state
                        (fingerprint, rule_key, subject, host, name, severity, state, value, active_at, fired_at,
                         last_held_at, labels, annotations)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            for alert in current {
                try insert.execute(arguments: [
                    alert.fingerprint, alert.ruleKey, alert.subject, alert.host, alert.name, alert.severity,
                    alert.state, alert.value, Self.milliseconds(alert.activeAt), alert.firedAt.map(Self.milliseconds),
                    Self.milliseconds(alert.lastHeldAt), Self.json(alert.labels), Self.json(alert.annotations),
                ])
            }
            let append = try db.cachedStatement(
                sql: """
                    INSERT INTO alert_transition
                        (at, fingerprint, host, name, severity, from_state, to_state, value, labels, annotations)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            for transition in transitions {
                try append.execute(arguments: [
                    Self.milliseconds(transition.at), transition.fingerprint, transition.host, transition.name,
                    transition.severity, transition.from, transition.to, transition.value,
                    Self.json(transition.labels), Self.json(transition.annotations),
                ])
            }
        }
    }

    /// The pending and firing alerts stored, by name, host and subject.
    public func current() async throws(StorageError) -> [StoredAlert] {
        try await database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT fingerprint, rule_key, subject, host, name, severity, state, value, active_at, fired_at,
                           last_held_at, labels, annotations
                    FROM alert_state ORDER BY name, host, subject, severity
                    """
            ).map { row in
                StoredAlert(
                    fingerprint: row[0], ruleKey: row[1], subject: row[2], host: row[3], name: row[4],
                    severity: row[5], state: row[6], value: row[7], activeAt: Self.date(row[8]),
                    firedAt: (row[9] as Int64?).map(Self.date), lastHeldAt: Self.date(row[10]),
                    labels: Self.map(row[11]), annotations: Self.map(row[12]))
            }
        }
    }

    /// The transitions at or after `since` (all when nil), oldest first, at most the newest `limit`.
    public func transitions(since: Date? = nil, host: String? = nil, limit: Int = 1000) async throws(StorageError)
        -> [StoredAlertTransition]
    {
        try await database.read { db in
            var conditions: [String] = []
            var arguments: [any DatabaseValueConvertible] = []
            if let since {
                conditions.append("at >= ?")
                arguments.append(Self.milliseconds(since))
            }
            if let host {
                conditions.append("host = ?")
                arguments.append(host)
            }
            arguments.append(max(1, limit))
            let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM (
                        SELECT id, at, fingerprint, host, name, severity, from_state, to_state, value, labels,
                               annotations
                        FROM alert_transition \(filter) ORDER BY at DESC, id DESC LIMIT ?
                    ) ORDER BY at, id
                    """, arguments: StatementArguments(arguments)
            ).map { row in
                StoredAlertTransition(
                    id: row[0], at: Self.date(row[1]), fingerprint: row[2], host: row[3], name: row[4],
                    severity: row[5],
                    from: row[6], to: row[7], value: row[8], labels: Self.map(row[9]), annotations: Self.map(row[10]))
            }
        }
    }

    /// Cut to the millisecond as `RFC3339.format` prints a time (within 50 µs below one counts as it), so an
    /// alert's `activeAt` and `firedAt` read back after a restart print as they did before it.
    static func milliseconds(_ date: Date) -> Int64 {
        let cut = (date.timeIntervalSince1970 * 1000 + 0.05).rounded(.down)
        return cut.isFinite ? Int64(min(max(cut, -9e15), 9e15)) : 0
    }

    static func date(_ milliseconds: Int64) -> Date { HistoryStore.date(milliseconds: milliseconds) }

    static func json(_ map: [String: String]) -> String {
        JSONWriter().string(.object(JSONObject(map.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })))
    }

    static func map(_ text: String) -> [String: String] {
        guard let object = (try? JSONParser.parse(text))?.objectValue else { return [:] }
        var map: [String: String] = [:]
        for (key, value) in object { map[key] = value.stringValue ?? "" }
        return map
    }
}
