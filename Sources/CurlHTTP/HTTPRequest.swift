/// An HTTP request: method, absolute URL, headers, body and timeouts.
///
/// Its `description` is `METHOD URL` with userinfo and query values redacted; header values and the body
/// never appear in it.
public struct HTTPRequest: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The request method.
    public var method: HTTPMethod
    /// An absolute `http://` or `https://` URL.
    public var url: String
    /// Header fields sent as given, after the client's additional headers are merged in.
    public var headers: HTTPHeaders
    /// The request body; empty for none.
    public var body: [UInt8]
    /// Connect, idle and total timeouts.
    public var timeouts: HTTPTimeouts

    /// Creates a request.
    public init(
        method: HTTPMethod = .get, url: String, headers: HTTPHeaders = [:], body: [UInt8] = [],
        timeouts: HTTPTimeouts = HTTPTimeouts()
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeouts = timeouts
    }

    /// Creates a `POST` of a JSON document, setting `Content-Type: application/json` unless `headers` has one.
    public static func postJSON(
        url: String, json: some StringProtocol, headers: HTTPHeaders = [:], timeouts: HTTPTimeouts = HTTPTimeouts()
    ) -> HTTPRequest {
        var headers = headers
        if !headers.contains(name: "Content-Type") {
            headers.add(name: "Content-Type", value: "application/json")
        }
        return HTTPRequest(method: .post, url: url, headers: headers, body: Array(json.utf8), timeouts: timeouts)
    }

    /// The URL with credentials and query values replaced by `REDACTED`, fit for `url.full` in a span.
    ///
    /// A URL that does not parse is cut before its userinfo and query.
    public var redactedURL: String {
        (try? RequestURL(parsing: url))?.redacted ?? RequestURL.roughlyRedacted(url)
    }

    /// The host the request goes to (`server.address`), or `nil` when the URL does not parse.
    public var serverAddress: String? {
        (try? RequestURL(parsing: url))?.host
    }

    /// The port the request goes to (`server.port`), explicit or implied by the scheme.
    public var serverPort: Int? {
        (try? RequestURL(parsing: url))?.effectivePort
    }

    /// `METHOD URL`, redacted.
    public var description: String { "\(method) \(redactedURL)" }

    /// The same as `description`, plus the redacted headers and the body's size.
    public var debugDescription: String { "\(description) \(headers) body: \(body.count) bytes" }

    /// A mirror that shows no secret, so `dump(request)` is safe.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "method": method.rawValue, "url": redactedURL, "headers": headers, "bodyBytes": body.count,
                "timeouts": timeouts,
            ])
    }
}
