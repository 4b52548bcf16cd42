public import Foundation
import HostStats
import HostscopeCore
public import Storage
import ValueFormats

/// The common parts of a listing request: a time range, a page size and where to continue.
public struct PageRequest: Sendable, Equatable {
    /// The largest page.
    public static let maximumLimit = 1000
    /// The page size when none is asked for.
    public static let defaultLimit = 100

    public var since: Date?
    public var until: Date?
    public var limit: Int
    /// The `next_cursor` of the page before, as the client sent it back.
    public var cursor: String?

    /// Reads `since`, `until` (RFC 3339, or a duration back from `now`: `30m`, `2h`, `7d`), `limit`
    /// (1 to ``maximumLimit``) and `cursor`.
    init(_ query: QueryParameters, now: Date) throws(APIError) {
        since = try Self.time(query["since"], name: "since", now: now)
        until = try Self.time(query["until"], name: "until", now: now)
        if let since, let until, since > until {
            throw APIError.badRequest("since is after until; give a range whose start comes first")
        }
        if let text = query["limit"] {
            guard let value = Int(text), (1...Self.maximumLimit).contains(value) else {
                throw APIError.badRequest("limit must be a whole number from 1 to \(Self.maximumLimit)")
            }
            limit = value
        } else {
            limit = Self.defaultLimit
        }
        cursor = query["cursor"]
    }

    static let parameterNames: Set<String> = ["since", "until", "limit", "cursor"]

    static func time(_ text: String?, name: String, now: Date) throws(APIError) -> Date? {
        guard let text else { return nil }
        if let date = RFC3339.parse(text) { return date }
        if let duration = DurationText.parse(text) {
            let (seconds, attoseconds) = duration.components
            return now.addingTimeInterval(-(Double(seconds) + Double(attoseconds) / 1e18))
        }
        throw APIError.badRequest(
            "\(name) must be an RFC 3339 time (2026-11-21T08:00:00Z) or a duration back from now (30m, 2h, 7d)")
    }
}

/// `GET /api/v1/hosts/{host}/history`: one host's records over a time range, oldest first.
public struct HistoryRequest: Sendable, Equatable {
    public var host: String
    public var page: PageRequest
    /// Where to continue, decoded from the page's cursor.
    public var cursor: HistoryCursor?

    /// `step`: one record per interval of this length (`1m`, `10m`), the last of each; `nil` for every record.
    public var stepMilliseconds: Int64?

    public init(host: String, query: String?, now: Date = Date()) throws(APIError) {
        self.host = host
        let parameters = try QueryParameters(query, allowed: PageRequest.parameterNames.union(["step"]))
        page = try PageRequest(parameters, now: now)
        if let text = parameters["step"] {
            guard let step = DurationText.parse(text), step >= .seconds(1), step <= .seconds(86_400) else {
                throw APIError.badRequest("step must be a duration from 1s to 24h (1m, 10m), one record per step")
            }
            stepMilliseconds = step.roundedUpMilliseconds
        }
        if let token = page.cursor {
            guard let cursor = HistoryCursor(token: token) else {
                throw APIError.badRequest("cursor is not one this API gave; pass the next_cursor of the page before")
            }
            self.cursor = cursor
        }
    }

    /// The storage query.
    public var query: HistoryQuery {
        HistoryQuery(hosts: .exact([host]), since: page.since, until: page.until, stepMilliseconds: stepMilliseconds)
    }
}

/// `GET /api/v1/hosts`: `view=full` (the default) gives each host's whole latest record, `view=summary`
/// only the figures a fleet view shows (``APIEncoding/summaryRecord(_:)``).
public struct HostListRequest: Sendable, Equatable {
    public var summary = false

    public init(query: String?) throws(APIError) {
        summary = try Self.summary(try QueryParameters(query, allowed: ["view"]))
    }

    /// `view`: whether the records are asked for as summaries (`/api/v1/hosts` and `/api/v1/events`).
    public static func summary(_ parameters: QueryParameters) throws(APIError) -> Bool {
        switch parameters["view"] {
        case nil, "full": false
        case "summary": true
        case _?: throw APIError.badRequest("view must be full or summary; leave it out for whole records")
        }
    }
}

/// `GET /api/v1/spans`: stored spans, newest first, narrowed by host, name prefix, kind and status.
public struct SpanListRequest: Sendable, Equatable {
    public var filter: SpanFilter
    public var until: Date?
    public var cursor: SpanCursor?

    public init(query: String?, now: Date = Date()) throws(APIError) {
        let parameters = try QueryParameters(
            query, allowed: PageRequest.parameterNames.union(["host", "name", "kind", "status"]))
        let page = try PageRequest(parameters, now: now)
        if let kind = parameters["kind"], SpanCategory(rawValue: kind) == nil {
            throw APIError.badRequest(
                "kind must be one of \(SpanCategory.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var filter = SpanFilter(
            since: page.since, host: parameters["host"], namePrefix: parameters["name"], kind: parameters["kind"],
            limit: page.limit)
        switch parameters["status"] {
        case nil, "any"?: break
        case "error"?: filter.errorsOnly = true
        default: throw APIError.badRequest("status must be error or any")
        }
        self.filter = filter
        until = page.until
        if let token = page.cursor {
            guard let cursor = SpanCursor(token: token) else {
                throw APIError.badRequest("cursor is not one this API gave; pass the next_cursor of the page before")
            }
            self.cursor = cursor
        }
    }
}

/// `GET /probe?target=HOST`: which host to show.
public struct ProbeRequest: Sendable, Equatable {
    public var target: String

    public init(query: String?) throws(APIError) {
        let parameters = try QueryParameters(query, allowed: ["target"])
        guard let target = parameters["target"], !target.isEmpty else {
            throw APIError.badRequest("name the host to probe: /probe?target=HOST")
        }
        guard target.utf8.count <= 255, !target.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f })
        else {
            throw APIError.badRequest("target is not a host name: at most 255 bytes, no control characters")
        }
        self.target = target
    }

    /// How long a probe of a host without a record waits for its first one: `standard`, or the scrape
    /// timeout the scraper sends (`X-Prometheus-Scrape-Timeout-Seconds`) less half a second for the answer
    /// when that is shorter. The header is the client's: any number it holds (huge, infinite, NaN, negative,
    /// not a number) gives a wait from zero to `standard`, never a trap.
    public static func firstRecordWait(scrapeTimeout header: String?, standard: Duration) -> Duration {
        guard let header, let seconds = Double(header), seconds > 0.5 else { return standard }
        return min(standard, .seconds(inSeconds: seconds - 0.5))
    }
}
