import HostStats

/// The fleet file's labels as CSV columns of `watch`'s wide layout: one `label.NAME` column per label name
/// the file gives any host, after the fixed columns, in name order; a host without the label leaves it
/// empty. Fixed for a run, so the header never changes mid-file.
public struct RecordLabels: Sendable, Equatable {
    /// The label names, sorted.
    public var names: [String]
    /// Each host's labels, by the host's name.
    public var byHost: [String: [String: String]]

    /// No label columns (a watch without a fleet file).
    public init() {
        names = []
        byHost = [:]
    }

    /// The columns of the labels in `profiles`.
    public init(profiles: [String: HostProfile]) {
        byHost = profiles.mapValues(\.labels).filter { !$0.value.isEmpty }
        names = Set(byHost.values.flatMap(\.keys)).sorted()
    }

    /// What the header gains: `,label.env,label.role`.
    var headerSuffix: String { names.map { "," + SnapshotCSV.field("label." + $0) }.joined() }

    /// What a row of `host` gains: its value of each label, in the header's order.
    func rowSuffix(host: String) -> String {
        let labels = byHost[host] ?? [:]
        return names.map { "," + SnapshotCSV.field(labels[$0] ?? "") }.joined()
    }

    /// `row` (ending in CRLF) with the host's label fields before its line end.
    func row(_ row: String, host: String) -> String { inserting(rowSuffix(host: host), into: row) }

    /// `header` (ending in CRLF) with the label columns before its line end.
    func header(_ header: String) -> String { inserting(headerSuffix, into: header) }

    /// `line` with `fields` before its CRLF (one `Character` in Swift, two scalars).
    private func inserting(_ fields: String, into line: String) -> String {
        guard !names.isEmpty else { return line }
        let scalars = line.unicodeScalars
        guard scalars.count >= 2, line.hasSuffix("\r\n") else { return line + fields }
        return String(scalars.dropLast(2)) + fields + "\r\n"
    }
}
