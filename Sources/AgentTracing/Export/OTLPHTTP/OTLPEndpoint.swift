import CurlHTTP

/// The two OTLP signals hostscope sends.
public enum OTLPSignal: String, Sendable, CaseIterable {
    case traces
    case metrics

    /// The path OTLP/HTTP gives the signal under a base URL: `/v1/traces`, `/v1/metrics`.
    public var path: String { "/v1/" + rawValue }

    /// What one item of the signal is called in messages: `span(s)`, `data point(s)`.
    public var items: String { self == .traces ? "span(s)" : "data point(s)" }
}

/// Where OTLP/HTTP requests of one signal go: the URL and any headers the receiver wants.
///
/// A base URL (`http://collector:4318`, or a path prefix such as Langfuse's `…/api/public/otel`) gets the
/// signal's path (`/v1/traces`, `/v1/metrics`) appended, as OpenTelemetry's `OTEL_EXPORTER_OTLP_ENDPOINT`
/// does; a base that already ends in a signal path (`…/v1/traces`) has that path replaced, so one value serves
/// both signals. A signal-specific URL (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is used as it is
/// (``init(signalURL:signal:headers:)``). The query is kept.
public struct OTLPEndpoint: Sendable {
    /// The URL requests are posted to, credentials included (never printed: see ``redactedURL``).
    public let url: String
    /// The signal the URL receives.
    public let signal: OTLPSignal
    /// Extra request headers (`Authorization`, tenant ids …), sent as given.
    public let headers: [(name: String, value: String)]

    /// An endpoint from a base URL: the signal's path is appended. Throws
    /// ``TracingError/Code/invalidEndpoint`` for anything but an absolute `http`/`https` URL with a host.
    public init(
        _ text: String, signal: OTLPSignal = .traces, headers: [(name: String, value: String)] = []
    ) throws(TracingError) {
        let parts = try Self.parse(text)
        var path = parts.path
        while path.hasSuffix("/") { path.removeLast() }
        for known in OTLPSignal.allCases where path.hasSuffix(known.path) {
            path.removeLast(known.path.count)
            break
        }
        url = parts.prefix + path + signal.path + parts.query
        self.signal = signal
        self.headers = headers
    }

    /// An endpoint from a signal-specific URL, used as it is (as `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` and
    /// `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` are).
    public init(
        signalURL text: String, signal: OTLPSignal, headers: [(name: String, value: String)] = []
    ) throws(TracingError) {
        let parts = try Self.parse(text)
        url = parts.prefix + (parts.path.isEmpty ? "/" : parts.path) + parts.query
        self.signal = signal
        self.headers = headers
    }

    /// The same receiver for another signal (the base URL's other path), with the given headers.
    public func sibling(_ other: OTLPSignal, headers: [(name: String, value: String)]) -> OTLPEndpoint {
        // The URL parsed once already; only its path changes.
        (try? OTLPEndpoint(url, signal: other, headers: headers)) ?? self
    }

    /// `scheme://authority`, the path, and `?query` (fragment dropped) of a checked URL.
    private static func parse(_ text: String) throws(TracingError) -> (prefix: String, path: String, query: String) {
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
        guard let question = remainder.firstIndex(of: "?") else {
            return (String(trimmed[..<schemeEnd] + authority), String(remainder), "")
        }
        return (
            String(trimmed[..<schemeEnd] + authority), String(remainder[..<question]), String(remainder[question...])
        )
    }

    /// The URL without userinfo and with credential-like query values redacted: what messages show.
    public var redactedURL: String { Redaction.url(url) }

    /// The values that must never appear in output: userinfo, credential-like query values, and the
    /// header values that may be credentials (``Redaction/headerSecrets(name:value:)``: every value of a
    /// credential header, and every other value of 8 characters or more, whatever its name, as
    /// `x-honeycomb-team`'s key). The composition root registers them with the ``SecretScrubber``.
    public var secrets: [String] {
        var found = Redaction.urlSecrets(url)
        for header in headers {
            found += Redaction.headerSecrets(name: header.name, value: header.value)
        }
        return found.filter { !$0.isEmpty }
    }
}
