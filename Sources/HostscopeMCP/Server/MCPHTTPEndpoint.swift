public import Foundation
import MCP
import OrderedJSON
import Synchronization
import ValueFormats

/// An HTTP request to the MCP endpoint, as the server library received it (framework-agnostic).
public struct MCPHTTPRequest: Sendable {
    /// `POST`, `GET` or `DELETE`.
    public var method: String
    /// The header fields, by lowercased name.
    public var headers: [String: String]
    /// The body (a POST's JSON-RPC message).
    public var body: Data

    public init(method: String, headers: [String: String], body: Data = Data()) {
        self.method = method
        self.headers = headers
        self.body = body
    }
}

/// The answer of the MCP endpoint.
public struct MCPHTTPResponse: Sendable {
    public enum Body: Sendable {
        case none
        /// A JSON body (a JSON-RPC answer or error).
        case json(Data)
        /// Server-sent events, written as they come; `ended` is called once when the stream is over, saying whether
        /// the client went away before its end (a write failed).
        case events(AsyncStream<Data>, ended: @Sendable (_ clientLeft: Bool) async -> Void)
        /// A JSON body written as it comes (whitespace while the call runs, then the answer); `ended` as for
        /// ``events(_:ended:)``.
        case streamedJSON(AsyncStream<Data>, ended: @Sendable (_ clientLeft: Bool) async -> Void)
    }

    public var status: Int
    /// Header fields to add (`Mcp-Session-Id`, `Allow`).
    public var headers: [String: String]
    public var body: Body
}

/// hostscope's MCP server over Streamable HTTP (the 2025-06-18 and 2025-11-25 revisions), for `serve`'s `/mcp`:
/// `initialize` POSTed without a session opens one (`Mcp-Session-Id` in the answer), each with its own protocol
/// server; later POSTs name it and get their answer as JSON, or as an event stream for a tool call whose client
/// takes one (progress first); a tool call's answer is written as it comes either way, so that a client that goes
/// away cancels the call; GET opens the session's stream of server
/// messages (resource updates); DELETE ends it.
///
/// Sessions are bounded (``maximumSessions``) and one left idle longer than ``idleTimeout`` (no request under way,
/// no GET stream open) is ended when a later request finds it so. The tools, their SSH sessions and the bounds of
/// the configuration are shared by every session; the call budget is each session's own.
public final class MCPHTTPEndpoint: Sendable {
    public let maximumSessions: Int
    public let idleTimeout: Duration
    private let environment: MCPEnvironment
    private let sessions = Lock<[String: HTTPSession]>([:])

    public init(configuration: MCPConfiguration, maximumSessions: Int = 100, idleTimeout: Duration = .seconds(900)) {
        environment = MCPEnvironment(configuration: configuration)
        self.maximumSessions = maximumSessions
        self.idleTimeout = idleTimeout
    }

    /// The sessions open now.
    public var sessionCount: Int { sessions.withLock { $0.count } }

    /// Answers one HTTP request.
    public func handle(_ request: MCPHTTPRequest) async -> MCPHTTPResponse {
        await endIdleSessions()
        switch request.method {
        case "POST": return await post(request)
        case "GET", "DELETE":
            guard let id = request.headers["mcp-session-id"] else {
                return Self.error(400, "this request needs the Mcp-Session-Id header that initialize answered with")
            }
            guard let session = sessions.withLock({ $0[id] }) else { return Self.unknownSession(id) }
            if request.method == "DELETE" {
                await end(id)
                return MCPHTTPResponse(status: 200, headers: [:], body: .none)
            }
            guard request.headers["accept"]?.contains("text/event-stream") ?? false else {
                return Self.error(406, "GET /mcp answers with an event stream: send Accept: text/event-stream")
            }
            guard let stream = await session.transport.openStandalone() else {
                return Self.error(409, "this session's GET stream is open already; one is allowed per session")
            }
            let transport = session.transport
            return MCPHTTPResponse(
                status: 200, headers: ["mcp-session-id": id, "content-type": "text/event-stream"],
                body: .events(stream, ended: { _ in await transport.closeStandalone() }))
        default:
            return MCPHTTPResponse(
                status: 405, headers: ["allow": "GET, POST, DELETE"],
                body: .json(Self.errorBody("/mcp answers POST, GET and DELETE")))
        }
    }

    private func post(_ request: MCPHTTPRequest) async -> MCPHTTPResponse {
        guard request.headers["content-type"]?.lowercased().hasPrefix("application/json") ?? false else {
            return Self.error(415, "POST /mcp takes a JSON-RPC message: send Content-Type: application/json")
        }
        if let version = request.headers["mcp-protocol-version"], !Version.supported.contains(version) {
            return Self.error(
                400,
                "this server does not speak MCP-Protocol-Version \(version); it speaks "
                    + Version.supported.sorted().joined(separator: ", "))
        }
        let message: JSONValue
        do {
            message = try JSONParser.parse(bytes: Array(request.body))
        } catch {
            return Self.error(400, "the body is not JSON (\(error)); send one JSON-RPC message", code: -32700)
        }
        if message.arrayValue != nil {
            return Self.error(
                400,
                "JSON-RPC batches are not part of this protocol revision (2025-06-18 removed them); send each "
                    + "request in a POST of its own")
        }
        guard message.objectValue != nil else {
            return Self.error(400, "the body is not a JSON-RPC object; send one JSON-RPC message")
        }
        let method = message["method"]?.stringValue
        let session: HTTPSession
        if method == "initialize" {
            guard request.headers["mcp-session-id"] == nil else {
                return Self.error(400, "initialize opens a session; send it without Mcp-Session-Id")
            }
            guard let opened = await open() else {
                return MCPHTTPResponse(
                    status: 503, headers: ["retry-after": "30"],
                    body: .json(
                        Self.errorBody(
                            "\(maximumSessions) MCP sessions are open, the most this server keeps; end one with "
                                + "DELETE /mcp or wait for an idle one to expire")))
            }
            session = opened
        } else {
            guard let id = request.headers["mcp-session-id"] else {
                return Self.error(
                    400, "the session is not initialized: POST initialize first, then send its Mcp-Session-Id")
            }
            guard let found = sessions.withLock({ $0[id] }) else { return Self.unknownSession(id) }
            session = found
        }
        let headers = ["mcp-session-id": session.id]
        guard let method, let key = RequestRegistry.key(message["id"]) else {
            // A notification or a response of the client.
            if method == "notifications/cancelled", let id = message["params"]?["requestId"],
                let key = RequestRegistry.key(id)
            {
                await session.transport.abandon(key, tellServer: false)
            }
            await session.transport.deliver(request.body)
            return MCPHTTPResponse(status: 202, headers: headers, body: .none)
        }
        let id = message["id"] ?? .null
        let progressToken = message["params"]?["_meta"]?["progressToken"]
        let streams = request.headers["accept"]?.contains("text/event-stream") ?? false
        if method == "tools/call" {
            let transport = session.transport
            session.began()
            let stream = await transport.stream(
                request.body, key: key, id: id, progressToken: progressToken, framing: streams ? .events : .json)
            let ended: @Sendable (Bool) async -> Void = { clientLeft in
                if clientLeft { await transport.abandon(key, tellServer: true) }
                session.ended()
            }
            var streamHeaders = headers
            streamHeaders["content-type"] = streams ? "text/event-stream" : "application/json"
            return MCPHTTPResponse(
                status: 200, headers: streamHeaders,
                body: streams ? .events(stream, ended: ended) : .streamedJSON(stream, ended: ended))
        }
        session.began()
        defer { session.ended() }
        guard let answer = await session.transport.answer(request.body, key: key, id: id) else {
            return MCPHTTPResponse(
                status: 200, headers: headers,
                body: .json(Self.errorBody("the request was cancelled", code: -32800, id: id)))
        }
        return MCPHTTPResponse(status: 200, headers: headers, body: .json(answer))
    }

    /// A new session with its own protocol server, or `nil` when ``maximumSessions`` are open.
    private func open() async -> HTTPSession? {
        let id = Hex.string((0..<16).map { _ in UInt8.random(in: 0...255) })
        let registry = RequestRegistry()
        let session = MCPSession(
            environment: environment,
            tracing: RequestTracing(
                sessionID: id, registry: registry, captureContent: environment.configuration.captureContent,
                networkTransport: "tcp"))
        let transport = HTTPSessionTransport()
        let server = await MCPServer.makeServer(session)
        let opened = HTTPSession(id: id, session: session, server: server, transport: transport)
        let admitted = sessions.withLock { sessions in
            guard sessions.count < maximumSessions else { return false }
            sessions[id] = opened
            return true
        }
        guard admitted else { return nil }
        do {
            try await server.start(
                transport: GuardedTransport(
                    transport, maxMessageBytes: environment.configuration.maxRequestBytes, registry: registry,
                    direct: session))
        } catch {
            await end(id)
            return nil
        }
        return opened
    }

    /// Ends the session `id`: its streams close, its server stops, its subscriptions end.
    private func end(_ id: String) async {
        guard let session = sessions.withLock({ $0.removeValue(forKey: id) }) else { return }
        await session.close()
    }

    /// Ends the sessions idle for longer than ``idleTimeout``.
    private func endIdleSessions() async {
        let now = ContinuousClock.now
        var idle: [String] = []
        for session in sessions.withLock({ Array($0.values) }) where session.idleSince(now) > idleTimeout {
            if await !session.transport.hasStandalone { idle.append(session.id) }
        }
        for id in idle { await end(id) }
    }

    /// Ends every session and closes the SSH sessions of the tools (`serve` stopping).
    public func close() async {
        for id in sessions.withLock({ Array($0.keys) }) { await end(id) }
        await environment.close()
    }

    static func unknownSession(_ id: String) -> MCPHTTPResponse {
        let shown = id.count > 64 ? id.prefix(64) + "…" : Substring(id)
        return error(404, "there is no MCP session \(shown) (it ended or expired); POST initialize to open a new one")
    }

    static func error(_ status: Int, _ message: String, code: Int = -32600) -> MCPHTTPResponse {
        MCPHTTPResponse(status: status, headers: [:], body: .json(errorBody(message, code: code)))
    }

    static func errorBody(_ message: String, code: Int = -32600, id: JSONValue = .null) -> Data {
        Data(GuardedTransport.error(code: code, id: id, message).utf8)
    }
}

/// One open session: its protocol server and transport, and when it was last busy.
final class HTTPSession: Sendable {
    let id: String
    let session: MCPSession
    let server: Server
    let transport: HTTPSessionTransport
    private let activity = Lock<(busy: Int, since: ContinuousClock.Instant)>((0, .now))

    init(id: String, session: MCPSession, server: Server, transport: HTTPSessionTransport) {
        self.id = id
        self.session = session
        self.server = server
        self.transport = transport
    }

    func began() { activity.withLock { $0.busy += 1 } }

    func ended() { activity.withLock { $0 = ($0.busy - 1, .now) } }

    /// How long it has been idle at `now` (zero while a request is under way).
    func idleSince(_ now: ContinuousClock.Instant) -> Duration {
        activity.withLock { $0.busy > 0 ? .zero : $0.since.duration(to: now) }
    }

    func close() async {
        await transport.close()
        await server.stop()
        session.close()
    }
}
