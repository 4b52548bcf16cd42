import ValueFormats

/// A chat failure: what kind, a sentence saying what to do, and when to retry if the provider said.
///
/// Messages never hold an API key: text taken from a provider's answer is scrubbed of the key in use before it
/// is put in a message.
public struct ChatError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure, written as `kind` in error events; new kinds may be added.
    public struct Kind: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
        /// The snake_case name.
        public var rawValue: String

        /// Creates a kind from its name.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The API key is missing, wrong or not allowed (HTTP 401/403), or its file is unsafe.
        public static let auth = Kind(rawValue: "auth")
        /// The provider does not know the model (HTTP 404).
        public static let modelNotFound = Kind(rawValue: "model_not_found")
        /// Too many requests (HTTP 429); `retryAfter` says when to try again when the provider said.
        public static let rateLimited = Kind(rawValue: "rate_limited")
        /// The provider failed (HTTP 5xx) or reported itself overloaded.
        public static let server = Kind(rawValue: "server")
        /// The provider refused the request as malformed (other 4xx).
        public static let badRequest = Kind(rawValue: "bad_request")
        /// No connection could be made.
        public static let connect = Kind(rawValue: "connect")
        /// Connecting, or waiting for the next bytes, took too long.
        public static let timeout = Kind(rawValue: "timeout")
        /// The stream stopped before its end marker (`[DONE]`, `message_stop`); the text so far is kept.
        public static let truncated = Kind(rawValue: "truncated")
        /// A frame that could not be read was skipped; the stream goes on.
        public static let malformedFrame = Kind(rawValue: "malformed_frame")
        /// The provider sent an error event in the middle of the stream.
        public static let provider = Kind(rawValue: "provider")
        /// The tool loop reached its iteration limit.
        public static let toolLoopLimit = Kind(rawValue: "tool_loop_limit")
        /// The session is busy or was asked for something it cannot do now (retry with no earlier turn).
        public static let invalidState = Kind(rawValue: "invalid_state")
        /// The configuration cannot work (no base URL, an unreadable credentials file).
        public static let configuration = Kind(rawValue: "configuration")
        /// Any other network failure.
        public static let network = Kind(rawValue: "network")

        /// The name.
        public var description: String { rawValue }
    }

    /// The kind of failure.
    public var kind: Kind
    /// What failed and what to do about it.
    public var message: String
    /// How long the provider asked to wait before retrying.
    public var retryAfter: Duration?
    /// The HTTP status behind the failure, when there was one.
    public var httpStatus: Int?

    /// Creates an error; the message must already be free of secrets.
    public init(kind: Kind, message: String, retryAfter: Duration? = nil, httpStatus: Int? = nil) {
        self.kind = kind
        self.message = message
        self.retryAfter = retryAfter
        self.httpStatus = httpStatus
    }

    /// `retryAfter` in whole seconds, rounded up so that a countdown never reaches zero early.
    public var retryAfterSeconds: Int? {
        retryAfter.map(Self.wholeSeconds)
    }

    /// A duration in whole seconds, rounded up.
    static func wholeSeconds(_ duration: Duration) -> Int {
        Int(duration.roundedUpSeconds)
    }

    /// Whether a turn ends with this error (every kind but a skipped malformed frame).
    public var endsTurn: Bool { kind != .malformedFrame }

    /// The message.
    public var description: String { message }
}
