import AgentTracing
import Foundation
import Logging
import MCP
import OrderedJSON
import Synchronization
import ValueFormats

/// What the server learnt of one request from its raw message, before the protocol library decoded it: the
/// method, the client's `traceparent` and progress token from `params._meta`.
struct RequestInfo: Sendable {
    /// The request's id as it was sent (a number, or a string without its quotes).
    var id: String
    var method: String
    var traceParent: String?
    /// `params._meta.progressToken`, as sent (a string or a number).
    var progressToken: JSONValue?
    /// When the transport handed the request over, before it was parsed (nanoseconds since the Unix epoch, the
    /// tracer's clock): the request's span starts there.
    var receivedAt: UInt64?
}

/// The requests under way, by JSON-RPC id (its JSON text, so `1` and `"1"` differ): filled by
/// ``GuardedTransport`` as messages arrive, read by the handlers.
///
/// swift-sdk 0.12.1 keeps a handler's request id to itself (`HandlerContext.id` is `package`); what it does hand a
/// handler is the transport's HTTP context for that id, so ``GuardedTransport`` answers that with a request whose
/// one header, ``idHeader``, carries the key.
final class RequestRegistry: Sendable {
    /// The header of the handler's context that carries its request's key.
    static let idHeader = "x-hostscope-jsonrpc-id"
    private let requests = Lock<[String: RequestInfo]>([:])
    /// The protocol revision agreed at `initialize` (the client's when the library knows it, else its newest).
    let protocolVersion = Lock<String?>(nil)

    func record(_ id: String, _ info: RequestInfo) {
        requests.withLock { requests in
            // A client that never gets answers (unknown methods) cannot grow this without bound.
            if requests.count >= 10_000 { requests.removeAll() }
            requests[id] = info
        }
    }

    func take(_ key: String?) -> RequestInfo? {
        guard let key else { return nil }
        return requests.withLock { $0.removeValue(forKey: key) }
    }

    /// The key of a request id as the library decoded it.
    static func key(_ id: ID) -> String {
        switch id {
        case .string(let text): JSONValue.string(text).jsonString
        case .number(let number): String(number)
        }
    }

    /// The key of a request id as sent, or `nil` for a message that is not a request.
    static func key(_ id: JSONValue?) -> String? {
        if let text = id?.stringValue { return JSONValue.string(text).jsonString }
        if let number = id?.intValue { return String(number) }
        return nil
    }

    /// The key of the request whose handler is running.
    static var current: String? { Server.currentHandlerContext?.httpContext?.header(idHeader) }
}

/// A transport around another (stdio's or an HTTP session's) that refuses what the protocol does not allow
/// before the library sees it: a JSON-RPC batch (removed in the 2025-06-18 revision), a message longer than the
/// server's bound, and a request other than `ping` before `initialize`, each answered with a JSON-RPC error
/// (`-32600`). It also notes each request's method and `_meta` for its span, and hands the requests that
/// ``DirectAnswers`` takes (`tools/list`, `tools/call`) to it rather than to the library.
actor GuardedTransport: Transport, HTTPContextProviding {
    nonisolated let logger: Logger
    private let inner: any Transport
    private let maxMessageBytes: Int
    let registry: RequestRegistry
    /// Whether `initialize` came: until it does, only `ping` is answered.
    private var initializeSeen = false
    /// What answers `tools/list` and `tools/call` without the library (``DirectAnswers``).
    private let direct: (any DirectAnswers)?
    /// The requests answered directly that are under way, by key: `notifications/cancelled` cancels them.
    private var running: [String: Task<Void, Never>] = [:]

    init(_ inner: any Transport, maxMessageBytes: Int, registry: RequestRegistry, direct: (any DirectAnswers)? = nil) {
        self.inner = inner
        self.maxMessageBytes = maxMessageBytes
        self.registry = registry
        self.direct = direct
        logger = Logger(label: "hostscope.mcp.transport", factory: { _ in SwiftLogNoOpLogHandler() })
    }

    func connect() async throws { try await inner.connect() }

    /// Cancels the directly answered requests still under way and waits for them, so their spans have ended (and
    /// are stored with the rest) before the server returns.
    func disconnect() async {
        let tasks = Array(running.values)
        running = [:]
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        await inner.disconnect()
    }

    func send(_ data: Data) async throws { try await inner.send(data) }

    /// Runs a request answered directly; it sends its answer (none when it was cancelled) itself.
    private func start(_ key: String, _ message: JSONValue, _ info: RequestInfo, _ direct: any DirectAnswers) {
        let inner = inner
        running[key] = Task {
            await direct.answer(message, info: info) { data in try? await inner.send(data) }
            self.finished(key)
        }
    }

    private func finished(_ key: String) { running[key] = nil }

    /// Cancels the directly answered request a `notifications/cancelled` names, if it is under way.
    private func cancel(_ message: JSONValue) {
        guard message["method"]?.stringValue == "notifications/cancelled",
            let key = RequestRegistry.key(message["params"]?["requestId"])
        else { return }
        running.removeValue(forKey: key)?.cancel()
    }

    /// Not an HTTP request: the library's one way to tell a handler which request it serves (``RequestRegistry``).
    func httpRequestContext(for id: ID) async -> HTTPRequest? {
        HTTPRequest(method: "POST", headers: [RequestRegistry.idHeader: RequestRegistry.key(id)])
    }

    func receive() -> AsyncThrowingStream<Data, Swift.Error> {
        let (stream, continuation) = AsyncThrowingStream<Data, Swift.Error>.makeStream()
        let task = Task {
            do {
                for try await data in await inner.receive() {
                    switch route(data) {
                    case .refuse(let refusal): try? await inner.send(Data(refusal.utf8))
                    case .pass: continuation.yield(data)
                    case .answer(let key, let message, let info, let direct): start(key, message, info, direct)
                    case .cancel(let message):
                        cancel(message)
                        continuation.yield(data)
                    }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Where a message goes.
    enum Route {
        /// Answered with this error.
        case refuse(String)
        /// To the library.
        case pass
        /// Answered directly.
        case answer(key: String, message: JSONValue, info: RequestInfo, direct: any DirectAnswers)
        /// A notification that may cancel a directly answered request, then to the library.
        case cancel(JSONValue)
    }

    /// Where `data` goes: refused, answered directly, or on to the library (a request noted for its span first).
    func route(_ data: Data) -> Route {
        let receivedAt = TraceClock.now()
        let message: JSONValue
        switch inspect(data, receivedAt: receivedAt) {
        case .refuse(let refusal): return .refuse(refusal)
        case .message(let parsed): message = parsed
        }
        guard let method = message["method"]?.stringValue else { return .pass }
        guard let key = RequestRegistry.key(message["id"]) else {
            return method == "notifications/cancelled" ? .cancel(message) : .pass
        }
        if let direct, direct.answers(method), let info = registry.take(key) {
            return .answer(key: key, message: message, info: info, direct: direct)
        }
        return .pass
    }

    enum Inspection {
        case refuse(String)
        case message(JSONValue)
    }

    /// The error answer to a message the server refuses, or the message parsed (a request noted first, with the
    /// instant it was received).
    func inspect(_ data: Data, receivedAt: UInt64? = nil) -> Inspection {
        if data.count > maxMessageBytes {
            return .refuse(
                Self.error(
                    id: .null,
                    "the message is longer than \(maxMessageBytes) bytes, the most this server takes in one message; "
                        + "ask for less in one request"))
        }
        let first = data.first { ![0x20, 0x09, 0x0D, 0x0A].contains($0) }
        if first == UInt8(ascii: "[") {
            return .refuse(
                Self.error(
                    id: .null,
                    "JSON-RPC batches are not part of this protocol revision (2025-06-18 removed them); send each "
                        + "request as a message of its own"))
        }
        let message: JSONValue
        do {
            message = try JSONParser.parse(bytes: Array(data))
        } catch {
            return .refuse(
                Self.error(
                    code: -32700, id: .null, "the message is not JSON (\(error)); send one JSON-RPC object per line"))
        }
        guard message.objectValue != nil else {
            return .refuse(
                Self.error(id: .null, "the message is not a JSON-RPC object; send one JSON-RPC object per line"))
        }
        guard let method = message["method"]?.stringValue,
            let key = RequestRegistry.key(message["id"])
        else { return .message(message) }
        // swift-sdk 0.12.1 in strict mode drops such a request without an answer; the client deserves one.
        if !initializeSeen, method != "initialize", method != "ping" {
            return .refuse(
                Self.error(
                    id: message["id"] ?? .null,
                    "the session is not initialized: send initialize first, then \(method)"))
        }
        if method == "initialize" { initializeSeen = true }
        let meta = message["params"]?["_meta"]
        let id = message["id"]?.stringValue ?? key
        var info = RequestInfo(
            id: id, method: method, traceParent: meta?["traceparent"]?.stringValue, receivedAt: receivedAt)
        if let token = meta?["progressToken"], token.stringValue != nil || token.intValue != nil {
            info.progressToken = token
        }
        if method == "initialize", let version = message["params"]?["protocolVersion"]?.stringValue {
            registry.protocolVersion.withLock { $0 = Version.supported.contains(version) ? version : Version.latest }
        }
        // The library answers these itself, with no span to read the entry.
        if method != "initialize", method != "ping" { registry.record(key, info) }
        return .message(message)
    }

    /// A JSON-RPC error answer, by default "invalid request".
    static func error(code: Int = -32600, id: JSONValue, _ message: String) -> String {
        JSONValue.object([
            "jsonrpc": "2.0", "id": id, "error": .object(["code": .number(code), "message": .string(message)]),
        ]).jsonString
    }
}

/// Answers some requests without the protocol library: swift-sdk 0.12.1 encodes a handler's result, decodes that
/// JSON back into its `Value` and encodes it again, which costs more than the 1 ms hostscope allows its MCP layer
/// on a warm `host_snapshot` and the 2 ms of `tools/list` (about 30 ms for the 22 KB tool list). A direct answer
/// is written once, from hostscope's own JSON.
protocol DirectAnswers: Sendable {
    /// Whether requests of `method` are answered directly.
    func answers(_ method: String) -> Bool

    /// Answers `message` through `send`, which also carries its notifications (progress) meanwhile; a request that
    /// was cancelled gets no answer, as the protocol says. A successful answer is sent inside the request's span, so
    /// the span covers the writing of the answer.
    func answer(_ message: JSONValue, info: RequestInfo, send: @escaping @Sendable (Data) async -> Void) async
}
