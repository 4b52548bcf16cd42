import AgentTracing
import MCP
import Synchronization
import Tracing

/// The span of each request, following OpenTelemetry's MCP conventions: a SERVER span named
/// `{mcp.method.name} {target}` with `mcp.method.name`, `mcp.session.id`, `mcp.protocol.version`,
/// `jsonrpc.request.id` and `network.transport` (`pipe` on stdio, `tcp` over HTTP); a tool call adds `gen_ai.operation.name=execute_tool`,
/// `gen_ai.tool.name` and `gen_ai.tool.call.id`. A `traceparent` in the request's `params._meta` makes the client's
/// span its parent. The handler runs inside the span's context, so the `ssh connect`, `ssh exec` and `files.*`
/// spans it causes are its children, as for the chat's tool calls.
///
/// The span starts when the transport handed the request over, before it was parsed; for `tools/list` and
/// `tools/call` (``DirectAnswers``) it ends once the answer was handed to the transport, so its duration is the
/// server's whole time on the request.
struct RequestTracing: Sendable {
    let sessionID: String
    let registry: RequestRegistry
    /// Whether tool call spans carry arguments and results.
    let captureContent: Bool
    /// `network.transport`: `pipe` for stdio, `tcp` for HTTP.
    let networkTransport: String

    /// Runs `body` inside the span of the request being handled; `target` is the tool, resource or prompt named.
    func withSpan<T: Sendable>(
        _ method: String, target: String?, _ body: (_ info: RequestInfo?, _ span: any Span) async throws -> T
    ) async throws -> T {
        try await withSpan(method, target: target, info: registry.take(RequestRegistry.current), body)
    }

    /// Runs `body` inside the span of the request `info` describes (one answered without the library).
    func withSpan<T: Sendable>(
        _ method: String, target: String?, info: RequestInfo?,
        _ body: (_ info: RequestInfo?, _ span: any Span) async throws -> T
    ) async throws -> T {
        var parent = ServiceContext.topLevel
        if let header = info?.traceParent, let remote = TraceParent.parse(header) { parent.spanContext = remote }
        let name = target.map { "\(method) \($0)" } ?? method
        // From the moment the transport handed the request over, its parsing included.
        let span =
            if let received = info?.receivedAt {
                InstrumentationSystem.tracer.startSpan(
                    name, context: parent, ofKind: .server, at: TraceInstant(nanosecondsSinceEpoch: received))
            } else {
                InstrumentationSystem.tracer.startSpan(name, context: parent, ofKind: .server)
            }
        defer { span.end() }
        span.setAttribute("mcp.method.name", value: .string(method))
        span.setAttribute("mcp.session.id", value: .string(sessionID))
        if let version = registry.protocolVersion.withLock({ $0 }) {
            span.setAttribute("mcp.protocol.version", value: .string(version))
        }
        if let id = info?.id { span.setAttribute("jsonrpc.request.id", value: .string(id)) }
        span.setAttribute("network.transport", value: .string(networkTransport))
        if method == "tools/call", let target {
            span.setAttribute("gen_ai.operation.name", value: "execute_tool")
            span.setAttribute("gen_ai.tool.name", value: .string(target))
            if let id = info?.id { span.setAttribute("gen_ai.tool.call.id", value: .string(id)) }
        }
        do {
            return try await ServiceContext.$current.withValue(span.context) { try await body(info, span) }
        } catch is CancellationError {
            span.setAttribute("error.type", value: "cancelled")
            span.setStatus(SpanStatus(code: .error, message: "the client cancelled the request"))
            throw CancellationError()
        } catch {
            span.setAttribute("error.type", value: .string(String(describing: type(of: error))))
            span.setStatus(SpanStatus(code: .error, message: "\(error)"))
            throw error
        }
    }
}
