/// A failed HTTP request: what kind of failure, a sentence a person can act on, and the curl code behind it.
///
/// The message names the request as `METHOD URL` with credentials and query values redacted, so it can be
/// printed, logged or put in a span as it is.
public struct HTTPError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure; new kinds may be added, so a `switch` over codes needs a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidRequest = "invalid_request"
            case resolve
            case connect
            case timeout
            case tls
            case send
            case receive
            case closed
            case protocolError = "protocol"
            case tooLarge = "too_large"
            case cancelled
            case shutdown
            case internalError = "internal"
        }

        private let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// The request was refused before any I/O: a malformed or non-HTTP URL, a bad header or method.
        public static let invalidRequest = Code(.invalidRequest)
        /// The host name could not be resolved.
        public static let resolve = Code(.resolve)
        /// No connection could be made (refused, unreachable).
        public static let connect = Code(.connect)
        /// A connect, idle or total timeout expired; the message says which.
        public static let timeout = Code(.timeout)
        /// The TLS handshake or the server's certificate failed.
        public static let tls = Code(.tls)
        /// Sending the request failed.
        public static let send = Code(.send)
        /// Receiving the response failed at the network level.
        public static let receive = Code(.receive)
        /// The server closed the connection before the response was complete.
        public static let closed = Code(.closed)
        /// The server's reply was not valid HTTP (or HTTP/2) for this request.
        public static let protocolError = Code(.protocolError)
        /// The response body was larger than the caller's cap.
        public static let tooLarge = Code(.tooLarge)
        /// The caller cancelled the request (task cancellation or a dropped response body).
        public static let cancelled = Code(.cancelled)
        /// The client was shut down while the request was pending or running.
        public static let shutdown = Code(.shutdown)
        /// Anything else: out of memory, an option the installed libcurl lacks, an unexpected curl state.
        public static let internalError = Code(.internalError)

        /// A stable snake_case name, e.g. `timeout`, `too_large`.
        public var description: String { base.rawValue }
    }

    /// The kind of failure.
    public let code: Code
    /// One sentence (or two) saying what failed and what to do about it; free of secrets.
    public let message: String
    /// The `CURLcode` that reported the failure, when curl reported it.
    public let curlCode: Int?

    /// Creates an error; messages must already be free of secrets.
    public init(code: Code, message: String, curlCode: Int? = nil) {
        self.code = code
        self.message = message
        self.curlCode = curlCode
    }

    /// The message, so that printing an error prints what a person can act on.
    public var description: String { message }
}
