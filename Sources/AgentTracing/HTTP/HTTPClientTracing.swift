public import CurlHTTP
public import Tracing

/// HTTP client spans and W3C trace-context propagation for requests made through `CurlHTTP`.
///
/// - ``execute(_:on:maxBodyBytes:attributes:context:)`` wraps one request in a client span named after
///   its method, with OpenTelemetry's HTTP client attributes: `http.request.method`, `url.full` (userinfo
///   removed, credential-like query values redacted), `server.address`, `server.port`,
///   `http.response.status_code`, and `error.type` on failure (the status code, or the transport error's
///   code). A status of 400 or more is an error, as the conventions ask of client spans.
/// - ``propagationHeaders`` is the `HTTPClient.Configuration.additionalHeaders` hook that adds the current
///   span's `traceparent` (and `tracestate`); the hook runs on the requesting task, inside the client span,
///   so the header names exactly that span.
public enum HTTPClientTracing {
    /// The attribute that marks spans of telemetry export requests; exporters skip such spans so that
    /// exporting never feeds itself.
    public static let exportMarkerKey = "hostscope.telemetry.export"

    /// The `additionalHeaders` hook: the active instrument's propagation headers for the current context.
    public static let propagationHeaders: @Sendable (HTTPRequest) -> HTTPHeaders = { _ in
        guard let context = ServiceContext.current else { return HTTPHeaders() }
        var headers = HTTPHeaders()
        InstrumentationSystem.instrument.inject(context, into: &headers, using: HTTPHeadersInjector())
        return headers
    }

    /// A client configuration that propagates the current trace context on every request.
    public static func propagatingConfiguration(
        _ configuration: HTTPClient.Configuration = HTTPClient.Configuration()
    ) -> HTTPClient.Configuration {
        var configuration = configuration
        configuration.additionalHeaders = propagationHeaders
        return configuration
    }

    /// Sends `request` in a client span and collects the response body (up to `maxBodyBytes`).
    ///
    /// - Parameters:
    ///   - attributes: extra attributes for the span (e.g. ``exportMarkerKey``).
    ///   - context: the parent context; by default the current one.
    public static func execute(
        _ request: HTTPRequest, on client: HTTPClient, maxBodyBytes: Int = 16 << 20, attributes: [Attribute] = [],
        context: ServiceContext = .current ?? .topLevel
    ) async throws(HTTPError) -> HTTPResponse {
        let result: Result<HTTPResponse, HTTPError> = await withSpan(
            request.method.rawValue, context: context, ofKind: .client
        ) { span in
            describe(request, in: span)
            for attribute in attributes { span.setAttribute(attribute.key, value: attribute.value) }
            do throws(HTTPError) {
                let response = try await client.execute(request, maxBodyBytes: maxBodyBytes)
                record(response.head, in: span)
                return .success(response)
            } catch {
                record(error, in: span)
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Sets the request attributes of an HTTP client span.
    public static func describe(_ request: HTTPRequest, in span: any Span) {
        span.setAttribute("http.request.method", value: .string(request.method.rawValue))
        span.setAttribute("url.full", value: .string(request.redactedURL))
        if let address = request.serverAddress { span.setAttribute("server.address", value: .string(address)) }
        if let port = request.serverPort { span.setAttribute("server.port", value: .int(Int64(port))) }
    }

    /// Records a response head: the status code, and error status from 400 on.
    public static func record(_ head: HTTPResponseHead, in span: any Span) {
        span.setAttribute("http.response.status_code", value: .int(Int64(head.status)))
        if head.status >= 400 {
            span.setAttribute("error.type", value: .string(String(head.status)))
            span.setStatus(SpanStatus(code: .error, message: "HTTP \(head.status)"))
        }
    }

    /// Records a transport failure (no response): `error.type` and an error status with the message.
    public static func record(_ error: HTTPError, in span: any Span) {
        span.setAttribute("error.type", value: .string(error.code.description))
        span.setStatus(SpanStatus(code: .error, message: error.message))
    }
}

/// Writes propagation headers into `CurlHTTP`'s header list, replacing any earlier value.
public struct HTTPHeadersInjector: Injector {
    public init() {}

    public func inject(_ value: String, forKey key: String, into carrier: inout HTTPHeaders) {
        carrier.replaceOrAdd(name: key, value: value)
    }
}
