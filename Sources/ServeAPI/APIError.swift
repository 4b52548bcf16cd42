public import OrderedJSON

/// A request the API refuses or cannot answer: an HTTP status, a stable code and one sentence
/// saying what happened and what to do.
///
/// The body is the error shape of the gateway contract, `{"error":{"code":…,"message":…,"status":…}}`,
/// so one client-side handler reads every hostscope error.
public struct APIError: Error, Sendable, Equatable {
    /// The HTTP status.
    public var status: Int
    /// What went wrong, for programs: `bad_request`, `unauthorized`, `not_found`, …
    public var code: String
    /// What went wrong and what to do, for people.
    public var message: String
    /// Seconds to wait before retrying (429, 503), sent as `Retry-After`.
    public var retryAfterSeconds: Int?

    public init(status: Int, code: String, message: String, retryAfterSeconds: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// 400: the query is malformed.
    public static func badRequest(_ message: String) -> APIError {
        APIError(status: 400, code: "bad_request", message: message)
    }

    /// 404: no such resource.
    public static func notFound(_ message: String) -> APIError {
        APIError(status: 404, code: "not_found", message: message)
    }

    /// The JSON body.
    public var jsonValue: JSONValue {
        .object([
            "error": .object([
                "code": .string(code), "message": .string(message), "status": .number(status),
            ])
        ])
    }

    /// The JSON body as UTF-8 text, with a final newline.
    public var body: String { jsonValue.jsonString + "\n" }
}
