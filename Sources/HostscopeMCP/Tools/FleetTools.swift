import Foundation
import HostStats
import HostscopeCore
import OrderedJSON
import Storage
import ValueFormats

/// The fleet as hostscope's database knows it: the hosts this server may reach with their stored history
/// (`list_hosts`), and one host's figures over a range, downsampled (`host_history`). Neither reaches a host.
enum FleetTools {
    static func register(_ environment: MCPEnvironment) -> [MCPTool] {
        [listHosts(environment), hostHistory(environment)]
    }

    // MARK: - list_hosts

    static func listHosts(_ environment: MCPEnvironment) -> MCPTool {
        MCPTool(
            name: "list_hosts", title: "List hosts",
            description: "The hosts this server may reach (the host argument of every host tool), whether each is "
                + "reached over SSH or is this machine, its labels (env, role… from the fleet file), and what hostscope's history database holds for it (first "
                + "and last record, records, failed collections). Also the ssh_config patterns that admit further "
                + "host names. Reads only the database.",
            inputSchema: Schema.object([
                "limit": Schema.integer(1, 1000, "the most hosts to return (default 100)")
            ]),
            outputSchema: Schema.result(
                [
                    "hosts": Schema.array(
                        of: Schema.object(
                            [
                                "name": Schema.string("the host, as tools take it"),
                                "transport": .object([
                                    "type": "string", "enum": ["ssh", "local"], "description": "how it is reached",
                                ]),
                                "first_record": Schema.nullable("string", "the first stored record (RFC 3339)"),
                                "last_record": Schema.nullable("string", "the last stored record (RFC 3339)"),
                                "records": Schema.integer(0, Int.max, "stored records"),
                                "failed_records": Schema.integer(0, Int.max, "stored failed collections"),
                                "labels": .object([
                                    "type": "object", "additionalProperties": .object(["type": "string"]),
                                    "description": "the host's labels from the fleet file (env, role…), by name",
                                ]),
                            ],
                            required: [
                                "name", "transport", "first_record", "last_record", "records", "failed_records",
                                "labels",
                            ]
                        ), "the hosts, in the order given"),
                    "patterns": Schema.array(of: Schema.string("a pattern"), "patterns admitting further names"),
                    "total": Schema.integer(0, Int.max, "how many hosts there are"),
                    "has_more": Schema.boolean("whether more hosts than returned exist"),
                ], required: ["hosts", "patterns", "total", "has_more"]),
            reachesHost: false
        ) { arguments, _ in
            let limit = arguments["limit"]?.intValue ?? 100
            // No database yet is no history, not a failure.
            let stored = (try? await environment.history.hosts()) ?? []
            let byName = Dictionary(stored.map { ($0.host, $0) }) { first, _ in first }
            let hosts = environment.configuration.fleet.hosts
            let rows: [JSONValue] = hosts.prefix(limit).map { host in
                let summary = byName[host.displayName]
                let transport: JSONValue = if case .local = host { "local" } else { "ssh" }
                return .object([
                    "name": .string(host.displayName), "transport": transport,
                    "first_record": JSONValue.from(summary?.firstCollectedAt) { .string(RFC3339.format($0)) },
                    "last_record": JSONValue.from(summary?.lastCollectedAt) { .string(RFC3339.format($0)) },
                    "records": .number(summary?.recordCount ?? 0), "failed_records": .number(summary?.errorCount ?? 0),
                    "labels": .object(
                        JSONObject(
                            environment.configuration.fleet.profile(of: host.displayName).labels.sorted {
                                $0.key < $1.key
                            }.map { ($0.key, .string($0.value)) })),
                ])
            }
            let hasMore = hosts.count > limit
            var result: JSONObject = [
                "hosts": .array(rows),
                "patterns": .array(environment.configuration.fleet.patterns.map(JSONValue.string)),
                "total": .number(hosts.count), "has_more": .bool(hasMore), "truncated": .bool(hasMore),
            ]
            if hasMore { result.append("note", "truncated: ask for more with a larger limit (up to 1000)") }
            return .structured(result)
        }
    }

    // MARK: - host_history

    /// The figures `host_history` gives per point.
    static let figures = [
        "cpu_percent", "memory_used_percent", "load1", "fullest_disk_used_percent", "network_receive_bytes_per_s",
        "network_transmit_bytes_per_s",
    ]

    static func hostHistory(_ environment: MCPEnvironment) -> MCPTool {
        var point: JSONObject = ["time": Schema.string("the end of the point's interval (RFC 3339)")]
        point.append("samples", Schema.integer(0, Int.max, "records averaged into this point"))
        point.append("failures", Schema.integer(0, Int.max, "failed collections in this interval"))
        for figure in figures { point.append(figure, Schema.nullable("number", "the interval's mean")) }
        return MCPTool(
            name: "host_history", title: "Host history",
            description: "A host's stored figures over the last minutes (CPU busy %, memory used %, 1-minute load, "
                + "the fullest filesystem's use %, network receive and transmit rates), as at most max_points points, "
                + "each the mean of the records in its share of the range. Reads only hostscope's history database "
                + "(what `hostscope watch` or `serve` stored).",
            inputSchema: Schema.object(
                [
                    "host": Schema.string("the host, one list_hosts names", maxLength: 1024),
                    "minutes": Schema.integer(1, 10080, "how far back to look (default 60, at most a week)"),
                    "max_points": Schema.integer(1, 500, "the most points to return (default 60)"),
                ], required: ["host"]),
            outputSchema: Schema.result(
                [
                    "host": Schema.string("the host"),
                    "since": Schema.string("the start of the range (RFC 3339)"),
                    "until": Schema.string("the end of the range (RFC 3339)"),
                    "records": Schema.integer(0, Int.max, "records in the range"),
                    "points": Schema.array(
                        of: Schema.object(point, required: ["time", "samples", "failures"] + figures),
                        "oldest first; intervals without records are left out"),
                ], required: ["host", "since", "until", "records", "points"]),
            reachesHost: false
        ) { arguments, _ in
            let host = try environment.host(named: arguments["host"]?.stringValue ?? "")
            let minutes = arguments["minutes"]?.intValue ?? 60
            let maxPoints = arguments["max_points"]?.intValue ?? 60
            let until = Date()
            let since = until.addingTimeInterval(-Double(minutes) * 60)
            var buckets = HistoryBuckets(since: since, until: until, count: maxPoints)
            // A host with no history yet (or no database yet) has no points; one that cannot be read is a failure.
            let stored = (try? await environment.history.hosts()) ?? []
            if stored.contains(where: { $0.host == host.displayName }) {
                do {
                    try await environment.history.read(host: host.displayName, since: since, until: until) { page in
                        for stored in page { buckets.add(stored) }
                    }
                } catch {
                    throw MCPToolFailure((error as? CoreError)?.message ?? "\(error)")
                }
            }
            return .structured([
                "host": .string(host.displayName), "since": .string(RFC3339.format(since)),
                "until": .string(RFC3339.format(until)), "records": .number(buckets.records),
                "points": .array(buckets.points), "truncated": false,
            ])
        }
    }
}

/// Records placed into equal shares of a time range, each share's figures averaged: memory bounded by the number
/// of points however many records the range holds.
struct HistoryBuckets {
    struct Bucket {
        var samples = 0
        var failures = 0
        var sums = [Double](repeating: 0, count: FleetTools.figures.count)
        var counts = [Int](repeating: 0, count: FleetTools.figures.count)
    }

    let since: Date
    let width: TimeInterval
    private(set) var buckets: [Bucket]
    private(set) var records = 0

    init(since: Date, until: Date, count: Int) {
        self.since = since
        width = max(0.001, until.timeIntervalSince(since) / Double(count))
        buckets = Array(repeating: Bucket(), count: count)
    }

    mutating func add(_ stored: StoredRecord) {
        records += 1
        let index = min(buckets.count - 1, max(0, Int(stored.collectedAt.timeIntervalSince(since) / width)))
        guard stored.kind == .snapshot, case .snapshot(let snapshot)? = try? stored.record() else {
            buckets[index].failures += 1
            return
        }
        buckets[index].samples += 1
        let values: [Double?] = [
            stored.cpuBusyPercent, stored.memoryUsedPercent, snapshot.load?.one, snapshot.fullestDiskUsedPercent,
            snapshot.networkReceiveRate, snapshot.networkTransmitRate,
        ]
        for (figure, value) in values.enumerated() {
            guard let value, value.isFinite else { continue }
            buckets[index].sums[figure] += value
            buckets[index].counts[figure] += 1
        }
    }

    /// The points of the shares that hold records, oldest first.
    var points: [JSONValue] {
        buckets.enumerated().compactMap { index, bucket in
            guard bucket.samples + bucket.failures > 0 else { return nil }
            var point: JSONObject = [
                "time": .string(RFC3339.format(since.addingTimeInterval(width * Double(index + 1)))),
                "samples": .number(bucket.samples), "failures": .number(bucket.failures),
            ]
            for (figure, name) in FleetTools.figures.enumerated() {
                let count = bucket.counts[figure]
                point.append(name, count > 0 ? .number(bucket.sums[figure] / Double(count)) : .null)
            }
            return .object(point)
        }
    }
}
