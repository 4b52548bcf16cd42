import Foundation
import HTTPTypes
import HostscopeMCP
import Hummingbird
import NIOCore
import ServeAPI
import ServiceLifecycle

/// `/mcp`: hostscope's MCP server over Streamable HTTP (``MCPHTTPEndpoint``), behind the same `Host` check, token
/// and rate limits as every route, plus the `Origin` check the protocol asks for (a page of another site must not
/// reach it through the user's browser) and a body cap.
enum MCPRoutes {
    static let path = "/mcp"

    /// The most bytes of a POSTed JSON-RPC message.
    static let maximumBodyBytes = 1 << 20

    static func add(to router: Router<ServeRequestContext>, endpoint: MCPHTTPEndpoint, policy: HostPolicyBox) {
        let handler: @Sendable (Request, ServeRequestContext) async throws -> Response = { request, _ in
            try await handle(request, endpoint: endpoint, policy: policy.current)
        }
        router.post(RouterPath(path), use: handler)
        router.get(RouterPath(path), use: handler)
        router.delete(RouterPath(path), use: handler)
    }

    static func handle(_ request: Request, endpoint: MCPHTTPEndpoint, policy: HostHeaderPolicy) async throws
        -> Response
    {
        if let origin = request.headers[.origin], !admits(origin: origin, host: request.head.authority, policy) {
            let shown = origin.count > 100 ? origin.prefix(100) + "…" : Substring(origin)
            throw APIError(
                status: 403, code: "forbidden_origin",
                message: "requests from the web origin \(shown) are refused: /mcp answers clients of this server's "
                    + "own origin (start serve with --allowed-hosts naming the host if it is yours)")
        }
        var request = request
        let body = request.method == .post ? try await request.collectBody(upTo: maximumBodyBytes) : ByteBuffer()
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        let answer = await endpoint.handle(
            MCPHTTPRequest(method: request.method.rawValue, headers: headers, body: Data(body.readableBytesView)))
        return response(answer)
    }

    /// Whether a request with `Origin: origin` is answered: the origin is the server's own (the `Host` the request
    /// names), or one the `Host` policy admits.
    static func admits(origin: String, host: String?, _ policy: HostHeaderPolicy) -> Bool {
        guard let separator = origin.range(of: "://") else { return false }
        let authority = String(origin[separator.upperBound...]).lowercased()
        guard !authority.isEmpty, !authority.contains("/") else { return false }
        if let host, authority == host.lowercased() { return true }
        return !policy.admitsAny && policy.admits(authority)
    }

    static func response(_ answer: MCPHTTPResponse) -> Response {
        var headers: HTTPFields = [.cacheControl: "no-store"]
        for (name, value) in answer.headers {
            if let name = HTTPField.Name(name) { headers[name] = value }
        }
        let status = HTTPResponse.Status(code: answer.status)
        switch answer.body {
        case .none:
            return Response(status: status, headers: headers)
        case .json(let data):
            headers[.contentType] = "application/json"
            return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
        case .events(let stream, let ended):
            headers[.contentType] = "text/event-stream"
            return written(stream, ended: ended, status: status, headers: headers)
        case .streamedJSON(let stream, let ended):
            headers[.contentType] = "application/json"
            return written(stream, ended: ended, status: status, headers: headers)
        }
    }

    /// A body written chunk by chunk as `stream` gives them; `ended` learns whether the client went away first.
    private static func written(
        _ stream: AsyncStream<Data>, ended: @escaping @Sendable (Bool) async -> Void, status: HTTPResponse.Status,
        headers: HTTPFields
    ) -> Response {
        var headers = headers
        headers[HTTPField.Name("X-Accel-Buffering")!] = "no"
        let body = ResponseBody { writer in
            for await chunk in stream {
                do {
                    try await writer.write(ByteBuffer(bytes: chunk))
                } catch {
                    await ended(true)
                    throw error
                }
            }
            // A cancelled writer (the connection closed) ends the loop early: the client left too.
            await ended(Task.isCancelled)
            try await writer.finish(nil)
        }
        return Response(status: status, headers: headers, body: body)
    }
}

/// Ends the MCP sessions when `serve` stops: their GET streams close (so that the listener's drain is not held
/// up by them) and the tools' SSH sessions close.
struct MCPSessionsService: Service {
    let endpoint: MCPHTTPEndpoint?

    func run() async throws {
        try? await gracefulShutdown()
        await endpoint?.close()
    }
}
