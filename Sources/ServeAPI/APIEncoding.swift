public import Foundation
public import HostStats
public import HostscopeCore
import MetricsExposition
public import OrderedJSON
public import Storage
import ValueFormats

/// The JSON of the API (`/api/v1/…`) and of its events: snake_case keys, RFC 3339 UTC times,
/// records in the `hostscope.snapshot/1` schema as `watch` and `history` print them, except that a
/// process's `command` is cut to its executable's name (as `/metrics` shows it): the arguments of a
/// host's processes may hold secrets (`--db-password=…`), and every HTTP output of `serve` is read by
/// more people than the host's own `ps`.
public enum APIEncoding {
    /// The schema names of the API's own objects.
    public static let hostsSchema = "hostscope.api.hosts/1"
    public static let historySchema = "hostscope.api.history/1"
    public static let spansSchema = "hostscope.api.spans/1"

    /// A host's state, without its record (the `host_state` event).
    public static func hostState(_ state: HostWatchState) -> JSONObject {
        var object = JSONObject()
        object.append("host", .string(state.host))
        object.append("state", .string(stateName(state.phase)))
        object.append("ticks", .number(state.ticks))
        object.append("errors", .number(state.errors))
        object.append("last_tick", .from(state.lastTick) { .string(RFC3339.format($0)) })
        object.append("last_success", .from(state.lastSuccess) { .string(RFC3339.format($0)) })
        object.append("last_error", .from(state.lastError) { .string(ProcessSecrets.scrub($0)) })
        var nextAttempt: Date?
        if case .backingOff(let until) = state.phase { nextAttempt = until }
        object.append("next_attempt", .from(nextAttempt) { .string(RFC3339.format($0)) })
        object.append("cpu_busy_percent", .from(state.cpuBusyPercent.flatMap(finite)) { .number($0) })
        object.append("memory_used_percent", .from(state.memoryUsedPercent.flatMap(finite)) { .number($0) })
        // The fleet file's labels, by name (empty without one).
        object.append(
            "labels", .object(JSONObject(state.labels.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })))
        return object
    }

    /// The API's name of a phase: `connecting`, `ok`, `failing`, `waiting` (backing off).
    public static func stateName(_ phase: HostWatchState.Phase) -> String {
        switch phase {
        case .connecting: "connecting"
        case .up: "ok"
        case .failing: "failing"
        case .backingOff: "waiting"
        }
    }

    /// A host's state and its latest record under `latest` (an element of `GET /api/v1/hosts`).
    public static func host(_ state: HostWatchState) -> JSONValue {
        var object = hostState(state)
        object.append("latest", .from(state.latest, record))
        return .object(object)
    }

    /// `GET /api/v1/hosts`: every watched host, by name. With `summary`, each host's `latest` is cut to
    /// ``summaryRecord(_:)``: what a fleet view shows, about a twentieth of the whole record.
    public static func hosts(_ states: [HostWatchState], generatedAt: Date, summary: Bool = false) -> String {
        JSONValue.object([
            "schema": .string(hostsSchema), "generated_at": .string(RFC3339.format(generatedAt)),
            "hosts": .array(
                states.map { state in
                    guard summary else { return host(state) }
                    var object = hostState(state)
                    object.append("latest", .from(state.latest) { summaryRecord($0.jsonValue) })
                    return .object(object)
                }),
        ]).jsonString + "\n"
    }

    /// The members a summary record keeps, by object: a record's time, host and error; uptime and load;
    /// CPU busy and cores; memory used; each filesystem's kind, mount, size, use and I/O rates; each
    /// interface's rates. No process, no per-core figure, no kernel table.
    static let summaryMembers: [String: Set<String>] = [
        "": ["schema", "host", "collected_at", "error", "uptime_seconds", "load", "cpu", "memory", "disks", "network"],
        "cpu": ["cores", "busy_percent"],
        "memory": ["used_percent"],
        "disks": [
            "filesystem", "type", "mount", "size_bytes", "used_percent", "read_bytes_per_second",
            "write_bytes_per_second",
        ],
        "network": ["interface", "rx_bytes_per_second", "tx_bytes_per_second"],
    ]

    /// A record (`hostscope.snapshot/1` JSON) with only ``summaryMembers``: still a valid record of the
    /// schema (every member is optional there), so a reader of whole records reads it unchanged.
    public static func summaryRecord(_ record: JSONValue) -> JSONValue {
        func keep(_ value: JSONValue, _ path: String) -> JSONValue {
            guard let members = summaryMembers[path] else { return value }
            switch value {
            case .object(let object):
                return .object(
                    JSONObject(object.filter { members.contains($0.key) }.map { ($0.key, keep($0.value, $0.key)) }))
            case .array(let items):
                return .array(
                    items.map { item in
                        guard case .object(let object) = item else { return item }
                        return .object(
                            JSONObject(object.filter { members.contains($0.key) }.map { ($0.key, $0.value) }))
                    })
            default:
                return value
            }
        }
        return keep(record, "")
    }

    /// `GET /api/v1/hosts/{host}/history`: a page of records, oldest first, each as stored.
    public static func history(host: String, page: HistoryPage) -> String {
        var text = "{\"schema\":\"\(historySchema)\",\"host\":" + JSONValue.string(host).jsonString + ",\"records\":["
        for (index, record) in page.records.enumerated() {
            if index > 0 { text += "," }
            // Stored records are the JSON `watch` wrote; they are passed on with their command lines cut.
            text += storedRecord(record.json)
        }
        text += "],\"next_cursor\":" + JSONValue.from(page.next?.token) { .string($0) }.jsonString + "}\n"
        return text
    }

    /// A record as every HTTP output shows it: its processes' commands cut to the executable's name.
    public static func record(_ record: SnapshotRecord) -> JSONValue {
        guard case .snapshot(var snapshot) = record else { return record.jsonValue }
        for index in snapshot.processes.indices {
            snapshot.processes[index].command = HostscopeFamilies.commandName(snapshot.processes[index].command)
        }
        return snapshot.jsonValue
    }

    /// A stored record's JSON with its processes' commands cut as ``record(_:)`` cuts them; a text that
    /// is not a JSON object (never written by hostscope) becomes `null` rather than pass unread.
    public static func storedRecord(_ json: String) -> String {
        // Error records and snapshots without processes need no parsing.
        guard json.contains("\"command\"") else { return json }
        guard case .object(var object)? = try? JSONParser.parse(json) else { return "null" }
        if case .array(let processes)? = object["processes"] {
            object["processes"] = .array(
                processes.map { process in
                    guard case .object(var fields) = process else { return process }
                    if let command = fields["command"]?.stringValue {
                        fields["command"] = .string(HostscopeFamilies.commandName(command))
                    }
                    return .object(fields)
                })
        }
        return JSONValue.object(object).jsonString
    }

    /// `GET /api/v1/spans`: a page of spans, newest first, each as `trace export --format spans` writes it.
    public static func spans(_ page: SpanPage) -> String {
        var text = "{\"schema\":\"\(spansSchema)\",\"spans\":["
        for (index, span) in page.spans.enumerated() {
            if index > 0 { text += "," }
            text += span.json
        }
        text += "],\"next_cursor\":" + JSONValue.from(page.next?.token) { .string($0) }.jsonString + "}\n"
        return text
    }

    /// The data of a `fleet` event: a host joined (`added`) or left (`removed`) the watch, and how many
    /// hosts are watched after the change.
    public static func fleetChange(host: String, change: String, hosts: Int) -> String {
        JSONValue.object(["host": .string(host), "change": .string(change), "hosts": .number(hosts)]).jsonString
    }

    /// The data of a `reset` event: the client missed events and should refetch `/api/v1/hosts`.
    public static func reset(reason: String) -> String {
        JSONValue.object(["reason": .string(reason)]).jsonString
    }

    static func finite(_ value: Double) -> Double? { value.isFinite ? value : nil }
}
