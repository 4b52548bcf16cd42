/// How OTLP/HTTP request bodies are encoded.
public enum OTLPEncoding: String, Sendable, CaseIterable {
    /// Binary protobuf, `application/x-protobuf`: OTLP/HTTP's default, and the only one some receivers take.
    case protobuf
    /// OTLP/JSON, `application/json`.
    case json

    /// The `Content-Type` of such a body.
    public var contentType: String { self == .protobuf ? "application/x-protobuf" : "application/json" }

    /// The encoding an `OTEL_EXPORTER_OTLP_PROTOCOL` value names: `http/protobuf` or `http/json`; `nil` for
    /// anything else (`grpc` among them, which hostscope does not speak).
    public init?(otlpProtocol: String) {
        switch otlpProtocol.lowercased() {
        case "http/protobuf": self = .protobuf
        case "http/json": self = .json
        default: return nil
        }
    }
}

/// How OTLP/HTTP request bodies are compressed.
public enum OTLPCompression: String, Sendable, CaseIterable {
    /// `Content-Encoding: gzip`.
    case gzip
    /// Sent as encoded.
    case none
}
