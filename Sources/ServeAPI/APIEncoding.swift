import Agent
import Foundation
import HostStats
import OrderedJSON
import Storage

/// What the API knows of one watched host: its live state and its latest record.
public struct HostView: Sendable, Equatable {
    public var status: HostWatchStatus
    /// The latest record, snapshot or error.
    public var latest: SnapshotRecord?
    /// When the last successful collection ended.
    public var lastSuccess: Date?

    public init(status: HostWatchStatus, latest: SnapshotRecord? = nil, lastSuccess: Date? = nil) {
        self.status = status
        self.latest = latest
        self.lastSuccess = lastSuccess
    }
}

/// The JSON of the API (`/api/v1/…`) and of its events: snake_case keys, RFC 3339 UTC times,
/// records in the `hostscope.snapshot/1` schema exactly as `watch` and `history` print them.
public enum APIEncoding {
    /// The schema names of the API's own objects.
    public static let hostsSchema = "hostscope.api.hosts/1"
    public static let historySchema = "hostscope.api.history/1"
    public static let spansSchema = "hostscope.api.spans/1"

    /// A host's state, without its record (the `host_state` event).
    public static func hostState(_ view: HostView) -> JSONObject {
        let status = view.status
        var object = JSONObject()
        object.append("host", .string(status.host))
        object.append("state", .string(status.state.rawValue))
        object.append("ticks", .number(status.ticks))
        object.append("errors", .number(status.errors))
        object.append("last_tick", .from(status.lastTick) { .string(Timestamp.format($0)) })
        object.append("last_success", .from(view.lastSuccess) { .string(Timestamp.format($0)) })
        object.append("last_error", .from(status.lastError) { .string(ProcessSecrets.scrub($0)) })
        object.append("next_attempt", .from(status.nextAttempt) { .string(Timestamp.format($0)) })
        object.append("cpu_busy_percent", .from(status.cpuBusyPercent.flatMap(finite)) { .number($0) })
        object.append("memory_used_percent", .from(status.memoryUsedPercent.flatMap(finite)) { .number($0) })
        return object
    }

    /// A host's state and its latest record under `latest` (an element of `GET /api/v1/hosts`).
    public static func host(_ view: HostView) -> JSONValue {
        var object = hostState(view)
        object.append("latest", .from(view.latest) { $0.jsonValue })
        return .object(object)
    }

    /// `GET /api/v1/hosts`: every watched host, by name.
    public static func hosts(_ views: [HostView], generatedAt: Date) -> String {
        JSONValue.object([
            "schema": .string(hostsSchema), "generated_at": .string(Timestamp.format(generatedAt)),
            "hosts": .array(views.map(host)),
        ]).jsonString + "\n"
    }

    /// `GET /api/v1/hosts/{host}/history`: a page of records, oldest first, each as stored.
    public static func history(host: String, page: HistoryPage) -> String {
        var text = "{\"schema\":\"\(historySchema)\",\"host\":" + JSONValue.string(host).jsonString + ",\"records\":["
        for (index, record) in page.records.enumerated() {
            if index > 0 { text += "," }
            // Stored records are the JSON `watch` wrote; they are passed on as they are.
            text += record.json
        }
        text += "],\"next_cursor\":" + JSONValue.from(page.next?.token) { .string($0) }.jsonString + "}\n"
        return text
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

    /// The data of a `fleet` event: the watched hosts after a start or reload.
    public static func fleet(hosts: [String], reason: String) -> String {
        JSONValue.object(["hosts": .array(hosts.map { .string($0) }), "reason": .string(reason)]).jsonString
    }

    /// The data of a `reset` event: the client missed events and should refetch `/api/v1/hosts`.
    public static func reset(reason: String) -> String {
        JSONValue.object(["reason": .string(reason)]).jsonString
    }

    static func finite(_ value: Double) -> Double? { value.isFinite ? value : nil }
}
