import Foundation
import HTTPTypes
public import Hummingbird
import Logging
import NIOCore
import ServeAPI
import Synchronization
import ValueFormats

/// The request context of `serve`: Hummingbird's, plus the client's address for rate limits and logs.
public struct ServeRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    public var remoteAddress: SocketAddress? { channel.remoteAddress }

    /// Requests carry no body here; anything sent is refused before it is read.
    public var maxUploadSize: Int { 0 }

    /// The client's IP address, without its port.
    var clientAddress: String { remoteAddress?.ipAddress ?? "unknown" }
}

extension Response {
    /// A response with a text or JSON body.
    static func text(_ text: String, status: HTTPResponse.Status = .ok, contentType: String) -> Response {
        bytes(Array(text.utf8), status: status, contentType: contentType)
    }

    /// A response whose body is `bytes`; a body in another coding than identity names it in
    /// `Content-Encoding` (and `Vary: Accept-Encoding` says the body depends on the request's).
    static func bytes(
        _ bytes: [UInt8], status: HTTPResponse.Status = .ok, contentType: String, coding: ContentCoding? = nil
    ) -> Response {
        var headers: HTTPFields = [.contentType: contentType, .cacheControl: "no-store"]
        if let coding {
            headers[.vary] = "Accept-Encoding"
            if let value = coding.headerValue { headers[.contentEncoding] = value }
        }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func json(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        self.text(text, status: status, contentType: "application/json")
    }

    /// A JSON answer gzip-compressed when the request's `Accept-Encoding` takes it and the body is over 1 KiB
    /// (a fleet's host list or a history page: megabytes that compress to a tenth).
    static func json(_ text: String, for request: Request) -> Response {
        let coding = ContentCoding.negotiate(acceptEncoding: request.headers[.acceptEncoding])
        guard coding == .gzip, text.utf8.count > 1024 else { return json(text) }
        return bytes(coding.encode(Array(text.utf8)), contentType: "application/json", coding: coding)
    }

    /// The JSON error body of ``APIError``, with `Retry-After` and `WWW-Authenticate` where they apply.
    static func error(_ error: APIError) -> Response {
        var response = json(error.body, status: HTTPResponse.Status(code: error.status))
        if let seconds = error.retryAfterSeconds { response.headers[.retryAfter] = String(seconds) }
        if error.status == 401 { response.headers[.wwwAuthenticate] = "Bearer realm=\"hostscope\"" }
        if error.status == 405 { response.headers[.allow] = "GET" }
        return response
    }
}

/// Turns every failure into the API's JSON error and logs each request: method, path (never the
/// query or headers), status, duration and client.
struct ErrorAndLogMiddleware: RouterMiddleware {
    typealias Context = ServeRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let start = ContinuousClock.now
        // A request's head came: the connection's first-request deadline no longer applies.
        context.channel.triggerUserOutboundEvent(RequestArrived(), promise: nil)
        let response: Response
        do {
            response = try await next(request, context)
        } catch let error as APIError {
            response = .error(error)
        } catch let error as HTTPError {
            let status = Int(error.status.code)
            let code = status == 404 ? "not_found" : "http_\(status)"
            let message =
                status == 404
                ? "no such endpoint: \(request.uri.path); see GET / for the list" : error.status.reasonPhrase
            response = .error(APIError(status: status, code: code, message: message))
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(error)"])
            response = .error(APIError(status: 500, code: "internal", message: "the request failed inside hostscope"))
        }
        let elapsed = start.duration(to: .now)
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        let metadata: Logger.Metadata = [
            "method": "\(request.method.rawValue)", "path": "\(request.uri.path)",
            "status": .stringConvertible(Int(response.status.code)),
            "duration_ms": .stringConvertible((milliseconds * 100).rounded() / 100),
            "client": "\(context.clientAddress)",
        ]
        // Scrapes come every few seconds from every scraper: successful ones only at debug level; so are the
        // 503s of /readyz, which a load balancer asks for while the first tick has not finished.
        if response.status.code < 400 || request.uri.path == "/readyz" {
            context.logger.debug("request", metadata: metadata)
        } else {
            context.logger.info("request refused", metadata: metadata)
        }
        return response
    }
}

/// Answers only requests whose `Host` header names this server (``HostHeaderPolicy``), before routing:
/// 421 `misdirected_request` otherwise, so that a page of another site cannot read the API through DNS
/// rebinding. `/healthz` is answered whatever the `Host`, as load balancers name the target in many ways
/// and `ok` tells nothing.
struct HostHeaderMiddleware: RouterMiddleware {
    typealias Context = ServeRequestContext

    let policy: HostPolicyBox

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let host = request.head.authority
        guard request.uri.path == "/healthz" || policy.current.admits(host) else {
            let shown = host.map { $0.count > 100 ? $0.prefix(100) + "…" : $0 } ?? ""
            throw APIError(
                status: 421, code: "misdirected_request",
                message:
                    "this server does not answer for the host name \(shown); use its address, or start serve with "
                    + "--allowed-hosts naming it")
        }
        return try await next(request, context)
    }
}

/// The `Host` policy in force: made once the server is bound (its port is part of it).
final class HostPolicyBox: Sendable {
    private let value: Lock<HostHeaderPolicy>

    init(_ policy: HostHeaderPolicy) { value = Lock(policy) }

    var current: HostHeaderPolicy { value.withLock { $0 } }

    func setPort(_ port: Int) { value.withLock { $0.port = port } }
}

/// Refuses what `serve` never answers before any work is done: methods other than GET (but where a route takes
/// a message, ``otherMethods(for:)``), request bodies (but where a route reads one, ``bodyLimit(for:)``), over-long
/// targets; then clients over their rate; then requests without the token.
///
/// The token is checked before the rate: a request that carries it spends the budget of its address for
/// such requests, any other request (no token, a wrong one, or a server without a token) the budget for
/// those, so anonymous requests from Prometheus's address (a NAT, a shared host) cannot use up its own.
/// `/healthz` spends no budget: a load balancer's checks are never refused for another client's rate.
struct GuardMiddleware: RouterMiddleware {
    typealias Context = ServeRequestContext

    let token: BearerToken?
    let maximumTargetLength: Int
    /// The budget of requests that carry the token.
    let authenticated: RateLimiterBox
    /// The budget of every other request.
    let anonymous: RateLimiterBox

    init(configuration: ServeConfiguration) {
        token = configuration.token
        maximumTargetLength = configuration.maximumTargetLength
        authenticated = RateLimiterBox(
            RequestRateLimiter(ratePerSecond: configuration.requestsPerSecond, burst: configuration.burst))
        anonymous = RateLimiterBox(
            RequestRateLimiter(ratePerSecond: configuration.requestsPerSecond, burst: configuration.burst))
    }

    /// The methods besides GET a path answers: only the routes that take a message.
    static func otherMethods(for path: String) -> Set<HTTPRequest.Method> {
        path == MCPRoutes.path ? [.post, .delete] : ChatRoutes.takesPost(path) ? [.post] : []
    }

    /// The most bytes of body a request may carry: none, except on the routes that read one. The route reads the
    /// body with this same cap, so a chunked body is bounded too.
    static func bodyLimit(for request: Request) -> Int {
        switch (request.method, request.uri.path) {
        case (.post, MCPRoutes.path): MCPRoutes.maximumBodyBytes
        case (.post, let path): ChatRoutes.bodyLimit(path)
        default: 0
        }
    }

    /// Paths answered without the token: liveness and readiness say nothing about hosts.
    static let open: Set<String> = ["/healthz", "/readyz"]

    /// Paths that spend no rate budget.
    static let unlimited: Set<String> = ["/healthz"]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        // HEAD too: no route answers it, and a 404 would say the resource is not there.
        guard request.method == .get || Self.otherMethods(for: request.uri.path).contains(request.method) else {
            throw APIError(
                status: 405, code: "method_not_allowed",
                message: "serve only answers GET here; nothing can be changed through it, and HEAD is not answered")
        }
        let target = request.head.path ?? ""
        guard target.utf8.count <= maximumTargetLength else {
            throw APIError(
                status: 414, code: "target_too_long",
                message: "the request target is \(target.utf8.count) bytes; at most \(maximumTargetLength) are read")
        }
        let bodyLimit = Self.bodyLimit(for: request)
        let length = request.headers[.contentLength].flatMap(Int.init) ?? 0
        if bodyLimit == 0, length > 0 || request.headers[.transferEncoding] != nil {
            throw APIError(status: 413, code: "body_not_accepted", message: "requests to serve carry no body")
        }
        if length > bodyLimit {
            throw APIError(
                status: 413, code: "body_too_large",
                message: "the request body is \(length) bytes; \(request.uri.path) takes at most \(bodyLimit)")
        }
        let authorization = request.headers[.authorization]
        let carriesToken = token?.admits(authorization: authorization) ?? false
        if !Self.unlimited.contains(request.uri.path) {
            let verdict = admit(carriesToken: carriesToken, client: context.clientAddress)
            guard verdict.admitted else {
                throw APIError(
                    status: 429, code: "rate_limited",
                    message: "too many requests from \(context.clientAddress); wait \(verdict.retryAfterSeconds) s",
                    retryAfterSeconds: verdict.retryAfterSeconds)
            }
        }
        if token != nil, !carriesToken, !Self.open.contains(request.uri.path), !WebRoutes.isOpen(request) {
            guard authorization != nil else {
                throw APIError(
                    status: 401, code: "unauthorized",
                    message: "this server needs a bearer token: send Authorization: Bearer <the token file's content>")
            }
            throw APIError(
                status: 401, code: "unauthorized",
                message: "the bearer token is wrong; send the content of serve's --token-file")
        }
        return try await next(request, context)
    }
}

extension GuardMiddleware {
    /// Spends one request of `client`'s budget: the budget of requests with the token, or of any other.
    func admit(carriesToken: Bool, client: String) -> (admitted: Bool, retryAfterSeconds: Int) {
        let now = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
        return (carriesToken ? authenticated : anonymous).state.withLock { $0.admit(client: client, now: now) }
    }

    /// Whether a request with this `Authorization` is within its client's rate, spending one of its budget as the
    /// router would (the page and its assets, answered before routing by ``WebAssetShortcut``).
    func admitsRate(authorization: String?, client: String) -> Bool {
        admit(carriesToken: token?.admits(authorization: authorization) ?? false, client: client).admitted
    }
}

/// The rate limiter every request of the server shares.
final class RateLimiterBox: Sendable {
    let state: Lock<RequestRateLimiter>

    init(_ limiter: RequestRateLimiter) { state = Lock(limiter) }
}
