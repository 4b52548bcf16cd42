import CurlHTTP

/// Where OTLP/HTTP trace requests go: the `/v1/traces` URL and any headers the receiver wants.
///
/// An endpoint given as a base URL (`http://collector:4318`, or a path prefix such as Langfuse's
/// `…/api/public/otel`) gets `/v1/traces` appended, as OpenTelemetry's `OTEL_EXPORTER_OTLP_ENDPOINT`
/// does; a URL whose path already ends in `/v1/traces` is used as it is. The query is kept.
public struct OTLPEndpoint: Sendable {
    /// The URL requests are posted to, credentials included (never printed: see ``redactedURL``).
    public let tracesURL: String
    /// Extra request headers (`Authorization`, tenant ids …), sent as given.
    public let headers: [(name: String, value: String)]

    /// Reads an endpoint; throws ``TracingError/Code/invalidEndpoint`` for anything but an absolute
    /// `http`/`https` URL with a host.
    public init(_ text: String, headers: [(name: String, value: String)] = []) throws(TracingError) {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let trimmed = String(text.drop(while: blank).reversed().drop(while: blank).reversed())
        let lowered = trimmed.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else {
            throw TracingError(
                code: .invalidEndpoint,
                message: "OTLP endpoint \(Redaction.url(trimmed)) is not an http:// or https:// URL "
                    + "(e.g. http://localhost:4318)")
        }
        let schemeEnd = trimmed.firstRange(of: "://")!.upperBound
        let rest = trimmed[schemeEnd...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let hostPart = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? ""
        guard !hostPart.isEmpty, !hostPart.hasPrefix(":") else {
            throw TracingError(
                code: .invalidEndpoint, message: "OTLP endpoint \(Redaction.url(trimmed)) names no host")
        }
        var remainder = rest[authorityEnd...]
        if let hash = remainder.firstIndex(of: "#") { remainder = remainder[..<hash] }
        var path = Substring("")
        var query = Substring("")
        if let question = remainder.firstIndex(of: "?") {
            path = remainder[..<question]
            query = remainder[question...]
        } else {
            path = remainder
        }
        var fullPath = String(path)
        if !fullPath.hasSuffix("/v1/traces") {
            while fullPath.hasSuffix("/") { fullPath.removeLast() }
            fullPath += "/v1/traces"
        }
        tracesURL = String(trimmed[..<schemeEnd]) + authority + fullPath + query
        self.headers = headers
    }

    /// The URL without userinfo and with credential-like query values redacted: what messages show.
    public var redactedURL: String { Redaction.url(tracesURL) }

    /// The values that must never appear in output: userinfo, credential-like query values, and the
    /// value of every header. The composition root registers them with the ``SecretScrubber``.
    public var secrets: [String] {
        var found = Redaction.urlSecrets(tracesURL)
        // Every header value the user passes is a secret, whatever its name (`x-honeycomb-team`, a tenant key).
        for header in headers {
            found += Redaction.headerValueSecrets(header.value)
        }
        return found.filter { !$0.isEmpty }
    }
}
