/// A failure in the tracing module, with a message a person can act on.
public struct TracingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String

        /// A flat span line is not JSON, or not a span.
        public static let invalidFlatSpan = Code(name: "invalid_flat_span")
        /// A timestamp is not RFC 3339.
        public static let invalidTimestamp = Code(name: "invalid_timestamp")

        public var description: String { name }
    }

    public var code: Code
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
