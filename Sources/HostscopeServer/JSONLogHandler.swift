import Foundation
import HostStats
import HostscopeCore
public import Logging
import OrderedJSON
import Synchronization
import ValueFormats

/// swift-log's handler for `serve`: one JSON object per line on stderr (`time`, `level`, `message`,
/// then the metadata), ready for journald, Loki or jq. Every message and value passes through the
/// process's secret scrubber first, so a registered secret (the bearer token, OTLP headers) never
/// reaches a log.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String
    private let write: @Sendable (String) -> Void

    /// A handler writing to stderr, or to `write` (tests).
    public init(label: String, write: (@Sendable (String) -> Void)? = nil) {
        self.label = label
        self.write = write ?? { line in FileHandle.standardError.write(Data(line.utf8)) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        // Hummingbird's own start-up line says less than serve's `listening` line (no TLS, auth or hosts).
        if event.message.description.hasPrefix(Self.serverStartedPrefix) { return }
        var object = JSONObject()
        object.append("time", .string(RFC3339.format(Date())))
        object.append("level", .string(event.level.rawValue))
        object.append("logger", .string(label))
        object.append("message", .string(ProcessSecrets.scrub(event.message.description)))
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        for key in merged.keys.sorted() {
            object.append(key, Self.json(merged[key]!))
        }
        write(JSONValue.object(object).jsonString + "\n")
    }

    /// How Hummingbird's start-up line begins (`Server started and listening on 127.0.0.1:9464`): serve logs one
    /// of its own, so that start-up is one line.
    static let serverStartedPrefix = "Server started and listening on "

    static func json(_ value: Logger.Metadata.Value) -> JSONValue {
        switch value {
        case .string(let text): .string(ProcessSecrets.scrub(text))
        // Figures and flags given as values (`.stringConvertible(12.5)`, `.stringConvertible(true)`) stay JSON
        // numbers and booleans, so that `jq '.duration_ms > 100'` works.
        case .stringConvertible(let value as Bool): .bool(value)
        case .stringConvertible(let value as Int): .int(Int64(value))
        case .stringConvertible(let value as Double) where value.isFinite: .double(value)
        case .stringConvertible(let value): .string(ProcessSecrets.scrub(value.description))
        case .array(let values): .array(values.map(json))
        case .dictionary(let values):
            .object(JSONObject(values.keys.sorted().map { ($0, json(values[$0]!)) }))
        }
    }
}
