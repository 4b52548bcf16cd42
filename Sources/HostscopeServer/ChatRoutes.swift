import Chat
import Foundation
import HTTPTypes
import HostscopeCore
import Hummingbird
import NIOCore
import OrderedJSON
import ServeAPI
import Storage

/// Chat over HTTP (`/api/v1/chat/…`): a turn POSTed for a host streams the chat events of DESIGN.md as
/// server-sent events; a running turn can be stopped and a stored tool call run again; stored conversations are
/// listed and read, to be resumed. The provider, model, base URL and key sources are serve's own options (the key
/// from serve's environment or credentials file): nothing a request says reaches the provider's configuration,
/// and no answer holds a key.
///
/// The POSTs change state, so besides the token (a header, never a cookie) they must be JSON (a page of another
/// site cannot send that without a preflight, which serve never answers) and come from no other origin.
enum ChatRoutes {
    static let prefix = "/api/v1/chat"
    static let turnsPath = prefix + "/turns"

    /// The largest turn body: the message and its two short fields.
    static let maximumTurnBodyBytes = 64 * 1024
    /// The largest body of a stop or a re-run (they need none; `{}` is fine).
    static let maximumCommandBodyBytes = 1024

    /// Whether `path` is one of the chat routes that take a POST.
    static func takesPost(_ path: String) -> Bool {
        path == turnsPath || (path.hasPrefix(prefix + "/conversations/") && isCommand(path))
    }

    /// The most body bytes a POST to `path` may carry.
    static func bodyLimit(_ path: String) -> Int {
        path == turnsPath ? maximumTurnBodyBytes : takesPost(path) ? maximumCommandBodyBytes : 0
    }

    private static func isCommand(_ path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        // /api/v1/chat/conversations/ID/stop, /api/v1/chat/conversations/ID/calls/CALL/rerun
        return (parts.count == 7 && parts[6] == "stop")
            || (parts.count == 9 && parts[6] == "calls" && parts[8] == "rerun")
    }

    static func add(to router: Router<ServeRequestContext>, _ serve: ServeContext) {
        router.get(RouterPath(prefix)) { _, _ in
            let chat = try configured(serve)
            let base = chat.base
            let kind = base.provider ?? .openAI
            let body: JSONValue = .object([
                "provider": .string(kind.rawValue),
                "model": .string(base.model ?? ChatService.defaultModel(kind)),
                "max_turn_seconds": .number(Int(chat.limits.turnTimeLimit.components.seconds)),
                "max_message_bytes": .number(chat.limits.maximumMessageBytes),
            ])
            return Response.json(body.jsonString + "\n")
        }
        router.get(RouterPath(prefix + "/conversations")) { request, _ in
            let chat = try configured(serve)
            let query = try QueryParameters(request.uri.query, allowed: ["limit"])
            let limit = try query["limit"].map(limitValue) ?? 50
            let sessions = try await core { try await chat.conversations(limit: limit) }
            let list = sessions.map { session -> JSONValue in
                guard case .object(var object) = ChatExport.summary(session) else { return .null }
                object.append("running", .bool(chat.isRunning(session.id)))
                return .object(object)
            }
            return Response.json(JSONValue.object(["conversations": .array(list)]).jsonString + "\n", for: request)
        }
        router.get(RouterPath(prefix + "/conversations/:id")) { request, context in
            let chat = try configured(serve)
            _ = try QueryParameters(request.uri.query, allowed: [])
            let id = try parameter(context, "id")
            let conversation = try await core { try await chat.conversation(id) }
            return Response.json(ChatExport.json(conversation).jsonString + "\n", for: request)
        }
        router.post(RouterPath(turnsPath)) { request, _ in
            try await turn(request, serve)
        }
        router.post(RouterPath(prefix + "/conversations/:id/stop")) { request, context in
            let chat = try configured(serve)
            try await checkCommand(request, serve)
            let stopped = await chat.stop(try parameter(context, "id"))
            return Response.json(JSONValue.object(["stopped": .bool(stopped)]).jsonString + "\n")
        }
        router.post(RouterPath(prefix + "/conversations/:id/calls/:call/rerun")) { request, context in
            let chat = try configured(serve)
            try await checkCommand(request, serve)
            let id = try parameter(context, "id")
            let call = try parameter(context, "call")
            let stored = try await core { try await chat.conversation(id) }
            try watched(stored.session.host, serve)
            let result = try await core { try await chat.rerun(conversation: stored.session.id, call: call) }
            return Response.json(ChatEvent.toolResult(result).json.jsonString + "\n")
        }
    }

    /// `POST /api/v1/chat/turns` with `{"message": …, "host": …, "conversation": …}`: the turn's events as SSE, the
    /// first one naming the conversation (`{"type":"conversation","id":…,"host":…}`).
    static func turn(_ request: Request, _ serve: ServeContext) async throws -> Response {
        let chat = try configured(serve)
        var request = request
        try checkOrigin(request, serve)
        let buffer = try await request.collectBody(upTo: maximumTurnBodyBytes)
        let body: JSONValue
        do {
            body = try JSONParser.parse(bytes: Array(buffer.readableBytesView))
        } catch {
            throw APIError.badRequest("the body is not JSON; send {\"message\": \"…\", \"host\": \"…\"}")
        }
        guard let object = body.objectValue else {
            throw APIError.badRequest("the body is a JSON object: {\"message\": \"…\", \"host\": \"…\"}")
        }
        for key in object.keys where !["message", "host", "conversation"].contains(key) {
            throw APIError.badRequest("unknown field \(key.prefix(40)); a turn takes message, host and conversation")
        }
        guard let message = object["message"]?.stringValue else {
            throw APIError.badRequest("the turn needs a message: {\"message\": \"…\"}")
        }
        let host = try optionalString(object, "host")
        let conversation = try optionalString(object, "conversation")
        if let conversation, chat.isRunning(conversation) {
            throw APIError(
                status: 409, code: "turn_running",
                message: "conversation \(conversation) has a turn running; wait for it to end or stop it first")
        }
        if let host {
            try watched(host, serve)
        } else if let conversation {
            let stored = try await core { try await chat.conversation(conversation) }
            try watched(stored.session.host, serve)
        } else {
            throw APIError.badRequest("a new conversation needs a host: {\"message\": \"…\", \"host\": \"…\"}")
        }
        let turn = try await core { try await chat.start(message: message, host: host, conversation: conversation) }
        let opening: JSONValue = .object([
            "type": "conversation", "id": .string(turn.conversationID), "host": .string(turn.host),
        ])
        let headers: HTTPFields = [
            .contentType: "text/event-stream", .cacheControl: "no-store", HTTPField.Name("X-Accel-Buffering")!: "no",
        ]
        let stream = ResponseBody { writer in
            try await writer.write(ByteBuffer(string: frame(opening)))
            for await event in turn.events {
                try await writer.write(ByteBuffer(string: frame(event.json)))
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: stream)
    }

    static func frame(_ value: JSONValue) -> String {
        "data: " + value.jsonString + "\n\n"
    }

    static func configured(_ serve: ServeContext) throws -> ChatTurns {
        guard let chat = serve.chat else {
            throw APIError(
                status: 503, code: "chat_not_configured",
                message: "this serve has no chat provider; start it with --chat-provider openai, anthropic, openrouter "
                    + "or gateway (with --chat-base-url and --chat-model as needed, the key in serve's environment)")
        }
        return chat
    }

    /// A stop or a re-run: JSON (an empty body is fine), from no other origin.
    static func checkCommand(_ request: Request, _ serve: ServeContext) async throws {
        try checkOrigin(request, serve)
        var request = request
        _ = try await request.collectBody(upTo: maximumCommandBodyBytes)
    }

    /// Refuses what a page of another site could make a browser send: a body that is not declared JSON (a form or
    /// a "simple" fetch), a foreign `Origin`, or a request the browser marks cross-site.
    static func checkOrigin(_ request: Request, _ serve: ServeContext) throws {
        let type = request.headers[.contentType]?.lowercased() ?? ""
        guard type.hasPrefix("application/json") else {
            throw APIError(
                status: 415, code: "unsupported_media_type",
                message: "chat requests are JSON: send Content-Type: application/json")
        }
        if let origin = request.headers[.origin],
            !MCPRoutes.admits(origin: origin, host: request.head.authority, serve.hostPolicy.current)
        {
            throw APIError(
                status: 403, code: "forbidden_origin",
                message: "requests from another web origin are refused: the chat answers this server's own page")
        }
        if request.headers[HTTPField.Name("Sec-Fetch-Site")!] == "cross-site" {
            throw APIError(
                status: 403, code: "forbidden_origin",
                message: "cross-site requests are refused: the chat answers this server's own page")
        }
    }

    static func watched(_ host: String, _ serve: ServeContext) throws {
        guard serve.board.hostState(host) != nil else {
            throw APIError.notFound(
                "\(host.prefix(100)) is not watched by this serve; the chat reaches only the hosts GET /api/v1/hosts "
                    + "lists")
        }
    }

    static func optionalString(_ object: JSONObject, _ key: String) throws -> String? {
        guard let value = object[key], value != .null else { return nil }
        guard let text = value.stringValue, !text.isEmpty, text.utf8.count <= 512 else {
            throw APIError.badRequest("\(key) is a non-empty string of at most 512 bytes")
        }
        return text
    }

    static func parameter(_ context: ServeRequestContext, _ name: String) throws -> String {
        guard let value = context.parameters.get(name)?.removingPercentEncoding, !value.isEmpty, value.count <= 200
        else { throw APIError.badRequest("the \(name) in the path is not valid percent-encoded UTF-8") }
        return value
    }

    static func limitValue(_ text: String) throws -> Int {
        guard let value = Int(text), (1...500).contains(value) else {
            throw APIError.badRequest("limit is a whole number from 1 to 500")
        }
        return value
    }

    /// Runs a core call, answering its refusals with the API's statuses: a request that cannot be carried out 400,
    /// nothing stored 404, a failure 503; a busy conversation 409 and a busy server 503 with a `Retry-After`.
    static func core<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as CoreError {
            switch error.code {
            case .invalidRequest: throw APIError.badRequest(error.message)
            case .notFound: throw APIError.notFound(error.message)
            case .failed: throw APIError(status: 503, code: "chat_failed", message: error.message)
            }
        } catch let refusal as ChatTurns.Refusal {
            throw APIError(
                status: refusal.serverBusy ? 503 : 409, code: refusal.serverBusy ? "too_many_turns" : "turn_running",
                message: refusal.message, retryAfterSeconds: refusal.serverBusy ? 5 : nil)
        }
    }
}
