import Foundation
import HTTPTypes
import HostStats
import HostscopeCore
import HostscopeMCP
import Hummingbird
import MetricsExposition
import NIOCore
import OrderedJSON
import ServeAPI
import Storage
import Synchronization
import ValueFormats

/// What the handlers read: the fleet's live state, the fleet itself, the stored history and spans.
struct ServeContext: Sendable {
    let configuration: ServeConfiguration
    let board: FleetBoard
    let watch: FleetWatch
    /// The current fleet (replaced on reload): who may be probed.
    let fleet: FleetHolder
    let database: StorageDatabase?
    /// The hosts `/probe` added through the fleet's patterns: capped, and expired when no longer probed.
    let probes: ProbeAdmissions
    /// Which `Host` headers are answered.
    let hostPolicy: HostPolicyBox
    /// The MCP server of `/mcp`, if there is one.
    let mcp: MCPHTTPEndpoint?
    /// The alerts of the rules in force, when serve evaluates any.
    var alerts: AlertEngine? = nil
    /// Chat over HTTP, when serve has a chat provider.
    var chat: ChatTurns? = nil
    /// The files of `/api/v1/files…`, under the roots of `--files-root`.
    var files: ServedFiles? = nil
}

/// Every endpoint of `serve`; each handler reads its input, asks the board or the store once and
/// renders.
enum ServeRoutes {
    /// The router; `requestGuard` is shared with ``WebAssetShortcut``, so the page's requests spend the same rate.
    static func router(_ serve: ServeContext, requestGuard: GuardMiddleware) -> Router<ServeRequestContext> {
        let router = Router(context: ServeRequestContext.self)
        router.add(middleware: ErrorAndLogMiddleware())
        router.add(middleware: HostHeaderMiddleware(policy: serve.hostPolicy))
        router.add(middleware: requestGuard)

        router.get("/") { request, _ in WebRoutes.index(request) }
        WebRoutes.add(to: router)
        if let mcp = serve.mcp { MCPRoutes.add(to: router, endpoint: mcp, policy: serve.hostPolicy) }
        router.get("/healthz") { _, _ in Response.text("ok\n", contentType: "text/plain; charset=utf-8") }
        router.get("/readyz") { request, _ in readiness(request, serve) }
        router.get("/metrics") { request, _ in
            let format = ExpositionFormat.negotiate(accept: request.headers[.accept])
            let coding = ContentCoding.negotiate(acceptEncoding: request.headers[.acceptEncoding])
            return Response.bytes(
                await serve.board.metrics(format, coding: coding), contentType: format.contentType, coding: coding)
        }
        router.get("/probe") { request, _ in try await probe(request, serve) }
        addAlertRoutes(router, serve)
        ChatRoutes.add(to: router, serve)
        FilesRoutes.add(to: router, serve)
        router.get("/api/v1/hosts") { request, _ in
            let list = try HostListRequest(query: request.uri.query)
            return Response.json(
                APIEncoding.hosts(serve.board.hostStates(), generatedAt: Date(), summary: list.summary), for: request)
        }
        router.get("/api/v1/hosts/:host") { _, context in
            let host = try hostParameter(context)
            guard let state = serve.board.hostState(host) else { throw notWatched(host) }
            return Response.json(APIEncoding.host(state).jsonString + "\n")
        }
        router.get("/api/v1/hosts/:host/history") { request, context in
            let host = try hostParameter(context)
            let query = try HistoryRequest(host: host, query: request.uri.query)
            let database = try store(serve)
            do {
                let page = try await database.history.page(query.query, after: query.cursor, limit: query.page.limit)
                // A host neither watched now nor ever recorded is unknown, as for /api/v1/hosts/{host}.
                if page.records.isEmpty, serve.board.hostState(host) == nil,
                    try await database.history.page(HistoryQuery(hosts: .exact([host])), limit: 1).records.isEmpty
                {
                    throw APIError.notFound(
                        "\(host) was never watched by this serve and has no history; GET /api/v1/hosts lists the hosts")
                }
                return Response.json(APIEncoding.history(host: host, page: page), for: request)
            } catch let error as APIError {
                throw error
            } catch {
                throw storageFailure(error)
            }
        }
        router.get("/api/v1/spans") { request, _ in
            let query = try SpanListRequest(query: request.uri.query)
            let database = try store(serve)
            do {
                let page = try await database.spans.recentPage(query.filter, until: query.until, after: query.cursor)
                return Response.json(APIEncoding.spans(page), for: request)
            } catch {
                throw storageFailure(error)
            }
        }
        router.get("/api/v1/traces/:trace") { request, context in
            _ = try QueryParameters(request.uri.query, allowed: [])
            let trace = context.parameters.get("trace") ?? ""
            guard trace.utf8.count == 32, trace.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
            else { throw APIError.badRequest("a trace id is 32 lower-case hexadecimal digits") }
            let database = try store(serve)
            do {
                let spans = try await database.spans.trace(trace)
                guard !spans.isEmpty else { throw APIError.notFound("no stored span has trace id \(trace)") }
                return Response.json(APIEncoding.spans(SpanPage(spans: spans, next: nil)))
            } catch let error as APIError {
                throw error
            } catch {
                throw storageFailure(error)
            }
        }
        router.get("/api/v1/events") { request, context in
            try EventStream.response(request, client: context.clientAddress, serve)
        }
        return router
    }

    /// `GET /`: what this server answers, for a person with curl.
    static let index =
        JSONValue.object([
            "service": "hostscope serve",
            "endpoints": .array(
                [
                    "/metrics", "/probe?target=HOST", "/healthz", "/readyz", "/api/v1/hosts", "/api/v1/hosts/{host}",
                    "/api/v1/hosts/{host}/history", "/api/v1/spans", "/api/v1/traces/{trace_id}", "/api/v1/events",
                    "/api/v1/alerts", "/api/v1/chat", "/api/v1/files", "/mcp",
                ].map { .string($0) }),
        ]).jsonString + "\n"

    /// `/readyz`, answered without the token: a request without it on a token-protected serve reads counts
    /// only (`waiting_for_first_record` a number); the names of the hosts waiting need the token.
    static func readiness(_ request: Request, _ serve: ServeContext) -> Response {
        let waiting = serve.board.hostsWithoutRecord()
        let ready = waiting.isEmpty
        let namesShown =
            serve.configuration.token.map { token in
                request.headers[.authorization].map(token.admits(authorization:)) ?? false
            } ?? true
        let body =
            JSONValue.object([
                "ready": .bool(ready), "hosts": .number(serve.board.hostNames.count),
                "waiting_for_first_record": namesShown
                    ? .array(waiting.prefix(20).map { .string($0) }) : .number(waiting.count),
            ]).jsonString + "\n"
        return Response.json(body, status: ready ? .ok : .serviceUnavailable)
    }

    /// `/probe?target=HOST`: the host's families, once it has a record. A host of the fleet that is not
    /// watched yet (one a pattern admits) starts being watched, and the first probe waits for its first
    /// record within the scrape's timeout.
    static func probe(_ request: Request, _ serve: ServeContext) async throws -> Response {
        var target = try ProbeRequest(query: request.uri.query).target
        let format = ExpositionFormat.negotiate(accept: request.headers[.accept])
        let now = ContinuousClock.now
        if serve.watch.state(of: target) != nil {
            serve.probes.touch(target, now: now)
        } else {
            switch serve.fleet.current.admission(of: target) {
            case nil:
                serve.board.countProbeRefusal(.notInFleet)
                throw APIError(
                    status: 403, code: "target_not_in_fleet",
                    message:
                        "\(target) is not a host of this serve's fleet; probe only hosts it watches or its patterns admit"
                )
            case .named(let host)?:
                target = host.displayName
                serve.watch.addHost(host, profile: serve.fleet.current.profile(of: target))
            case .pattern(let host)?:
                // The name as admitted (lower-cased, without a trailing dot) is the host's name.
                target = host.displayName
                guard serve.probes.admit(target, now: now) else {
                    serve.board.countProbeRefusal(.limit)
                    throw APIError(
                        status: 503, code: "probe_limit_reached",
                        message:
                            "\(serve.probes.maximumHosts) hosts added by probes are watched already; raise "
                            + "--probe-max-hosts, or wait until those no longer probed expire",
                        retryAfterSeconds: 60)
                }
                serve.watch.addHost(host, profile: serve.fleet.current.profile(of: target))
            }
        }
        if !serve.board.hasRecord(target) {
            let wait = ProbeRequest.firstRecordWait(
                scrapeTimeout: request.headers[HTTPField.Name("X-Prometheus-Scrape-Timeout-Seconds")!],
                standard: serve.configuration.firstProbeWait)
            let deadline = ContinuousClock.now + wait
            while !serve.board.hasRecord(target), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        let coding = ContentCoding.negotiate(acceptEncoding: request.headers[.acceptEncoding])
        guard let bytes = serve.board.probe(target, format: format, coding: coding) else {
            throw notWatched(target)
        }
        return Response.bytes(bytes, contentType: format.contentType, coding: coding)
    }

    static func hostParameter(_ context: ServeRequestContext) throws -> String {
        let raw = context.parameters.get("host") ?? ""
        guard let host = raw.removingPercentEncoding, !host.isEmpty else {
            throw APIError.badRequest("the host in the path is not valid percent-encoded UTF-8")
        }
        return host
    }

    static func notWatched(_ host: String) -> APIError {
        APIError.notFound("\(host) is not watched by this serve; GET /api/v1/hosts lists the hosts it watches")
    }

    static func store(_ serve: ServeContext) throws -> StorageDatabase {
        guard let database = serve.database else {
            throw APIError(
                status: 404, code: "no_history",
                message: "this serve keeps no history (--no-history); restart it without that option to query history")
        }
        return database
    }

    static func storageFailure(_ error: any Error) -> APIError {
        let message = (error as? StorageError)?.message ?? "\(error)"
        return APIError(status: 503, code: "storage_unavailable", message: "the history database failed: \(message)")
    }
}

/// The fleet in force, replaced by a reload.
final class FleetHolder: Sendable {
    private let value: Lock<ResolvedFleet>

    init(_ fleet: ResolvedFleet) { value = Lock(fleet) }

    var current: ResolvedFleet { value.withLock { $0 } }

    func replace(_ fleet: ResolvedFleet) { value.withLock { $0 = fleet } }
}
