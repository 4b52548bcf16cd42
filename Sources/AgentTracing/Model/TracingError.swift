/// A failure in the tracing module, with a message a person can act on.
public struct TracingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String

        /// A flat span line is not JSON, or not a span.
        public static let invalidFlatSpan = Code(name: "invalid_flat_span")
        /// A timestamp is not RFC 3339.
        public static let invalidTimestamp = Code(name: "invalid_timestamp")
        /// An OTLP endpoint is not an absolute `http`/`https` URL.
        public static let invalidEndpoint = Code(name: "invalid_endpoint")
        /// The receiver refused a batch for good (a 4xx other than 429), or answered garbage.
        public static let exportRejected = Code(name: "export_rejected")
        /// The receiver could not be reached, or kept answering "try later" until the attempts or the
        /// deadline ran out.
        public static let exportUnavailable = Code(name: "export_unavailable")
        /// An export setting (an option, an `OTEL_EXPORTER_OTLP_*` variable, a headers file) cannot be used.
        public static let invalidSetting = Code(name: "invalid_setting")

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
