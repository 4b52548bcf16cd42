import Foundation
import Logging
import MCP
import OrderedJSON

/// The transport of one Streamable HTTP session: each POSTed request waits here for its answer, which goes back
/// as the POST's JSON body or, for a tool call, as a written stream: the last event of an event stream (with the
/// call's progress before it) when the client takes one, else a JSON body preceded by a newline a second while
/// the call runs, so that a client gone away is noticed either way; other server messages go to the session's
/// GET stream.
///
/// swift-sdk's `StatefulHTTPServerTransport` keeps every message it ever sent for replay, for the life of the
/// session, and always answers with a stream; this one keeps nothing once it is delivered.
actor HTTPSessionTransport: Transport {
    nonisolated let logger = Logger(label: "hostscope.mcp.http", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Where a request's answer goes.
    private enum Waiter {
        case json(CheckedContinuation<Data?, Never>)
        case events(AsyncStream<Data>.Continuation)
        /// A JSON body written as it comes: newlines while the call runs, then the answer.
        case paddedJSON(AsyncStream<Data>.Continuation)
    }

    /// How a streamed answer is written.
    enum Framing: Sendable {
        /// Server-sent events: progress and the answer as events, a comment a second to keep it written to.
        case events
        /// One JSON body: a newline a second (whitespace JSON allows before a value), then the answer.
        case json
    }

    private struct Pending {
        var waiter: Waiter
        /// The id as the client sent it, for a `notifications/cancelled` made on its behalf.
        var id: JSONValue
        /// The key of the request's `progressToken`, whose notifications go to its stream.
        var progressKey: String?
    }

    private let incoming: AsyncThrowingStream<Data, Swift.Error>
    private let incomingContinuation: AsyncThrowingStream<Data, Swift.Error>.Continuation
    private var pending: [String: Pending] = [:]
    private var standalone: AsyncStream<Data>.Continuation?
    private var closed = false

    init() {
        (incoming, incomingContinuation) = AsyncThrowingStream<Data, Swift.Error>.makeStream()
    }

    func connect() async throws {}

    func disconnect() async { close() }

    func receive() -> AsyncThrowingStream<Data, Swift.Error> { incoming }

    /// A message of the server: an answer to its request's waiter, a progress notification to the stream of the
    /// request that asked for it, anything else to the GET stream (dropped when none is open).
    func send(_ data: Data) async throws {
        guard !closed, let message = try? JSONParser.parse(bytes: Array(data)) else { return }
        if message["method"] == nil, let key = RequestRegistry.key(message["id"]) {
            guard let entry = pending.removeValue(forKey: key) else { return }
            switch entry.waiter {
            case .json(let continuation): continuation.resume(returning: data)
            case .events(let continuation):
                continuation.yield(Self.event(data))
                continuation.finish()
            case .paddedJSON(let continuation):
                continuation.yield(data)
                continuation.finish()
            }
            return
        }
        if message["method"]?.stringValue == ProgressNotification.name,
            let token = Self.key(message["params"]?["progressToken"]),
            let entry = pending.values.first(where: { $0.progressKey == token }),
            case .events(let continuation) = entry.waiter
        {
            continuation.yield(Self.event(data))
            return
        }
        standalone?.yield(Self.event(data))
    }

    /// A notification or response of the client, handed to the server.
    func deliver(_ data: Data) {
        guard !closed else { return }
        incomingContinuation.yield(data)
    }

    /// Hands a request to the server and waits for its answer; `nil` when it was cancelled or the session ended.
    func answer(_ data: Data, key: String, id: JSONValue) async -> Data? {
        guard !closed else { return nil }
        return await withCheckedContinuation { continuation in
            pending[key] = Pending(waiter: .json(continuation), id: id)
            incomingContinuation.yield(data)
        }
    }

    /// Hands a request to the server; its answer comes as `framing` says (for events, its progress before). A
    /// comment or a newline every second keeps the stream written to, so that a client gone away is noticed within
    /// a second or two.
    func stream(_ data: Data, key: String, id: JSONValue, progressToken: JSONValue?, framing: Framing = .events)
        -> AsyncStream<Data>
    {
        let (stream, continuation) = AsyncStream<Data>.makeStream()
        guard !closed else {
            continuation.finish()
            return stream
        }
        switch framing {
        case .events:
            pending[key] = Pending(waiter: .events(continuation), id: id, progressKey: Self.key(progressToken))
        case .json:
            pending[key] = Pending(waiter: .paddedJSON(continuation), id: id)
        }
        incomingContinuation.yield(data)
        let keepAlive = Data((framing == .events ? ": keep-alive\n\n" : "\n").utf8)
        Task {
            while case .enqueued = continuation.yield(keepAlive) {
                try? await Task.sleep(for: .seconds(1))
            }
        }
        return stream
    }

    /// Gives up on a request: its waiter is released with nothing and, when `tellServer`, the server is sent a
    /// `notifications/cancelled` for it (the client went away), which ends the tool's SSH and SFTP work.
    func abandon(_ key: String, tellServer: Bool) {
        guard let entry = pending.removeValue(forKey: key) else { return }
        switch entry.waiter {
        case .json(let continuation): continuation.resume(returning: nil)
        case .events(let continuation): continuation.finish()
        case .paddedJSON(let continuation):
            // The body has begun: it ends with the JSON-RPC error a cancelled request gets.
            continuation.yield(MCPHTTPEndpoint.errorBody("the request was cancelled", code: -32800, id: entry.id))
            continuation.finish()
        }
        guard tellServer, !closed else { return }
        let cancelled = JSONValue.object([
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": .object(["requestId": entry.id, "reason": "the client closed the stream"]),
        ])
        incomingContinuation.yield(Data(cancelled.jsonString.utf8))
    }

    /// The session's GET stream for server-initiated messages (and a keep-alive comment every 15 s), or `nil` when
    /// one is open already.
    func openStandalone() -> AsyncStream<Data>? {
        guard standalone == nil, !closed else { return nil }
        let (stream, continuation) = AsyncStream<Data>.makeStream()
        standalone = continuation
        // A comment every 15 s: a client gone away is noticed (and the session can expire) even when nothing is
        // announced, and proxies keep the connection open.
        Task {
            while case .enqueued = continuation.yield(Data(": keep-alive\n\n".utf8)) {
                try? await Task.sleep(for: .seconds(15))
            }
        }
        return stream
    }

    /// Ends the GET stream (its client went away), so that another may be opened.
    func closeStandalone() {
        standalone?.finish()
        standalone = nil
    }

    /// Whether a GET stream is open.
    var hasStandalone: Bool { standalone != nil }

    /// Ends the session: every waiter released, every stream ended, the server's input closed.
    func close() {
        guard !closed else { return }
        closed = true
        for (key, _) in pending { abandon(key, tellServer: false) }
        standalone?.finish()
        standalone = nil
        incomingContinuation.finish()
    }

    /// One server-sent event carrying `data` (a JSON-RPC message is one line).
    static func event(_ data: Data) -> Data {
        var event = Data("event: message\ndata: ".utf8)
        event.append(data)
        event.append(contentsOf: Array("\n\n".utf8))
        return event
    }

    /// A progress token's key (its JSON text).
    static func key(_ token: JSONValue?) -> String? {
        guard let token, token != .null else { return nil }
        return token.jsonString
    }
}
