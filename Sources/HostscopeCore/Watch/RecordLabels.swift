import HostStats
import OrderedJSON

/// The fleet file's labels in `watch`'s records: one `label.NAME` column per label name the file gives any
/// host, after the fixed columns of either CSV layout, in name order (a host without the label leaves it
/// empty), and a `labels` object at the end of each JSON and NDJSON record. The columns are fixed for a
/// run, so the header never changes mid-file; a reload changes the values, not the names.
public struct RecordLabels: Sendable, Equatable {
    /// The label names, sorted.
    public var names: [String]
    /// Each host's labels, by the host's name.
    public var byHost: [String: [String: String]]

    /// Whether JSON and NDJSON records carry a `labels` object (a run with a fleet file).
    public var inJSON: Bool

    /// No label columns and no `labels` in JSON (a watch without a fleet file).
    public init() {
        names = []
        byHost = [:]
        inJSON = false
    }

    /// The columns of the labels in `profiles`; `inJSON` adds each host's labels to its JSON records.
    public init(profiles: [String: HostProfile], inJSON: Bool = true) {
        byHost = profiles.mapValues(\.labels).filter { !$0.value.isEmpty }
        names = Set(byHost.values.flatMap(\.keys)).sorted()
        self.inJSON = inJSON
    }

    /// What the header gains: `,label.env,label.role`.
    var headerSuffix: String { names.map { "," + SnapshotCSV.field("label." + $0) }.joined() }

    /// What a row gains: the value of each label of `labels`, in the header's order.
    func rowSuffix(_ labels: [String: String]) -> String {
        names.map { "," + SnapshotCSV.field(labels[$0] ?? "") }.joined()
    }

    /// The labels of `host` as the run began.
    func labels(of host: String) -> [String: String] { byHost[host] ?? [:] }

    /// `rows` (each ending in CRLF) with the fields of `labels` before each line end.
    func rows(_ rows: String, labels: [String: String]) -> String {
        guard !names.isEmpty, !rows.isEmpty else { return rows }
        let suffix = rowSuffix(labels)
        // Split on the CRLF `Character`; every line of `rows` ends in one.
        return rows.split(separator: "\r\n", omittingEmptySubsequences: true).map { String($0) + suffix + "\r\n" }
            .joined()
    }

    /// `header` (ending in CRLF) with the label columns before its line end.
    func header(_ header: String) -> String {
        guard !names.isEmpty else { return header }
        return String(header.unicodeScalars.dropLast(2)) + headerSuffix + "\r\n"
    }

    /// The record's JSON with a `labels` object added at its end (the host's labels by name, `{}` for a host
    /// without any); unchanged without a fleet file.
    func json(_ record: SnapshotRecord, labels: [String: String]) -> JSONValue {
        let value = record.jsonValue
        guard inJSON, case .object(var object) = value else { return value }
        var members = JSONObject()
        for name in labels.keys.sorted() { members.append(name, .string(labels[name] ?? "")) }
        object["labels"] = .object(members)
        return .object(object)
    }
}
