public import AgentTracing
public import CurlHTTP
import Foundation

/// How one OTLP signal is exported: where to, and in what form.
public struct OTLPSignalSettings: Sendable {
    /// The receiver's URL for the signal, with its headers.
    public var endpoint: OTLPEndpoint
    /// Protobuf or JSON bodies.
    public var encoding: OTLPEncoding
    /// gzip or none.
    public var compression: OTLPCompression
    /// Limits of each request.
    public var timeouts: HTTPTimeouts

    /// Settings with OTLP/HTTP's defaults: protobuf, gzip.
    public init(
        endpoint: OTLPEndpoint, encoding: OTLPEncoding = .protobuf, compression: OTLPCompression = .gzip,
        timeouts: HTTPTimeouts = OTLPHTTPExporter.defaultTimeouts
    ) {
        self.endpoint = endpoint
        self.encoding = encoding
        self.compression = compression
        self.timeouts = timeouts
    }
}

/// OTLP export settings from the command line and the OpenTelemetry exporter environment variables, flags
/// winning: what `trace push`, `watch`, `snapshot` and `chat` export with.
///
/// - Endpoint: the option's value is a base URL for every signal (`/v1/traces`, `/v1/metrics` appended).
///   Without it, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` are used as they
///   are, else `OTEL_EXPORTER_OTLP_ENDPOINT` is a base URL, as the OpenTelemetry specification says.
/// - Headers: the option's `name=value` and `@FILE` values, and `OTEL_EXPORTER_OTLP_{TRACES,METRICS}_HEADERS`
///   else `OTEL_EXPORTER_OTLP_HEADERS` (``HeaderSources``).
/// - Encoding: the option, else `OTEL_EXPORTER_OTLP_{signal}_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`
///   (`http/protobuf`, `http/json`), else protobuf. Compression likewise from `…_COMPRESSION` (`gzip`, `none`),
///   else gzip. `…_TIMEOUT` (milliseconds) limits each request.
///
/// Every credential (userinfo, token query values, header values) is registered with the process's scrubber
/// the moment it is read. Values that cannot be used are one sentence naming the variable or option.
public struct OTLPExportSettings: Sendable {
    /// What the command line gave; `nil` where it gave nothing.
    public struct Arguments: Sendable {
        /// The endpoint option's value: a URL, or `@FILE` naming a private file holding one.
        public var endpoint: String?
        /// The endpoint option's name, for messages: `--otlp-endpoint`, `--endpoint`.
        public var endpointOption: String
        /// The header option's values.
        public var headers: [String]
        /// The header option's name: `--otlp-header`, `--header`.
        public var headerOption: String
        /// The encoding option's value.
        public var encoding: OTLPEncoding?
        /// The compression option's value.
        public var compression: OTLPCompression?

        /// Creates arguments.
        public init(
            endpoint: String?, endpointOption: String, headers: [String] = [], headerOption: String,
            encoding: OTLPEncoding? = nil, compression: OTLPCompression? = nil
        ) {
            self.endpoint = endpoint
            self.endpointOption = endpointOption
            self.headers = headers
            self.headerOption = headerOption
            self.encoding = encoding
            self.compression = compression
        }
    }

    /// Trace export, when an endpoint for traces was given.
    public var traces: OTLPSignalSettings?
    /// Metric export, when an endpoint for metrics was given (and metrics were asked for).
    public var metrics: OTLPSignalSettings?
    /// Sentences for stderr: credentials given on the command line.
    public var warnings: [String] = []

    /// Whether nothing is to be exported.
    public var isEmpty: Bool { traces == nil && metrics == nil }

    /// Reads the options and the environment for the given signals.
    public static func resolve(
        _ arguments: Arguments, signals: Set<OTLPSignal>, environment: [String: String]
    ) throws(TracingError) -> OTLPExportSettings {
        func variable(_ name: String) -> String? {
            guard let value = environment[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
                return nil
            }
            return value
        }
        var settings = OTLPExportSettings()
        var base: (url: String, fromFile: Bool)?
        if let option = arguments.endpoint {
            do {
                base = try ArgumentSecrets.url(option, option: arguments.endpointOption)
            } catch {
                throw TracingError(code: .invalidSetting, message: error.message)
            }
        } else if !arguments.headers.isEmpty, !signals.contains(where: { endpointVariable($0, variable) != nil }) {
            throw TracingError(
                code: .invalidSetting,
                message: "\(arguments.headerOption) needs \(arguments.endpointOption) (or OTEL_EXPORTER_OTLP_ENDPOINT)")
        }
        for signal in OTLPSignal.allCases where signals.contains(signal) {
            let name = signal.rawValue.uppercased()
            let endpoint: OTLPEndpoint
            let headers = try Self.headers(arguments, signal: signal, environment: environment, into: &settings)
            if let base {
                endpoint = try OTLPEndpoint(base.url, signal: signal, headers: headers)
            } else if let exact = variable("OTEL_EXPORTER_OTLP_\(name)_ENDPOINT") {
                endpoint = try Self.checked("OTEL_EXPORTER_OTLP_\(name)_ENDPOINT") { () throws(TracingError) in
                    try OTLPEndpoint(signalURL: exact, signal: signal, headers: headers)
                }
            } else if let general = variable("OTEL_EXPORTER_OTLP_ENDPOINT") {
                endpoint = try Self.checked("OTEL_EXPORTER_OTLP_ENDPOINT") { () throws(TracingError) in
                    try OTLPEndpoint(general, signal: signal, headers: headers)
                }
            } else {
                continue
            }
            for secret in Redaction.urlSecrets(endpoint.url) { ProcessSecrets.register(secret) }
            for secret in endpoint.secrets { ProcessSecrets.register(secret) }
            var chosen = OTLPSignalSettings(endpoint: endpoint)
            if let encoding = arguments.encoding {
                chosen.encoding = encoding
            } else if let (source, text) = Self.first(
                ["OTEL_EXPORTER_OTLP_\(name)_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"], variable)
            {
                guard let encoding = OTLPEncoding(otlpProtocol: text) else {
                    throw TracingError(
                        code: .invalidSetting,
                        message: "\(source) is '\(text)'; hostscope sends OTLP over HTTP: set it to http/protobuf or "
                            + "http/json, with the receiver's OTLP/HTTP port (usually 4318)")
                }
                chosen.encoding = encoding
            }
            if let compression = arguments.compression {
                chosen.compression = compression
            } else if let (source, text) = Self.first(
                ["OTEL_EXPORTER_OTLP_\(name)_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION"], variable)
            {
                guard let compression = OTLPCompression(rawValue: text.lowercased()) else {
                    throw TracingError(
                        code: .invalidSetting, message: "\(source) is '\(text)'; it takes gzip or none")
                }
                chosen.compression = compression
            }
            if let (source, text) = Self.first(
                ["OTEL_EXPORTER_OTLP_\(name)_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"], variable)
            {
                guard let milliseconds = Int64(text), milliseconds > 0 else {
                    throw TracingError(
                        code: .invalidSetting,
                        message: "\(source) is '\(text)'; it takes a whole number of milliseconds, e.g. 10000")
                }
                chosen.timeouts.total = .milliseconds(milliseconds)
                chosen.timeouts.connect = min(chosen.timeouts.connect, .milliseconds(milliseconds))
                if let idle = chosen.timeouts.idle { chosen.timeouts.idle = min(idle, .milliseconds(milliseconds)) }
            }
            if signal == .traces { settings.traces = chosen } else { settings.metrics = chosen }
        }
        if let base, !base.fromFile, !settings.isEmpty,
            let warning = ArgumentSecrets.urlWarning(
                base.url, option: arguments.endpointOption,
                saferForm: "send them as a header (OTEL_EXPORTER_OTLP_HEADERS or \(arguments.headerOption) @FILE), "
                    + "or give the URL as \(arguments.endpointOption) @FILE")
        {
            settings.warnings.append(warning)
        }
        return settings
    }

    private static func endpointVariable(_ signal: OTLPSignal, _ variable: (String) -> String?) -> String? {
        variable("OTEL_EXPORTER_OTLP_\(signal.rawValue.uppercased())_ENDPOINT")
            ?? variable("OTEL_EXPORTER_OTLP_ENDPOINT")
    }

    private static func first(_ names: [String], _ variable: (String) -> String?) -> (String, String)? {
        for name in names {
            if let value = variable(name) { return (name, value) }
        }
        return nil
    }

    /// The endpoint a variable names, its errors saying which variable it was.
    private static func checked(
        _ name: String, _ make: () throws(TracingError) -> OTLPEndpoint
    ) throws(TracingError) -> OTLPEndpoint {
        do {
            return try make()
        } catch {
            throw TracingError(code: error.code, message: "\(name): \(error.message)")
        }
    }

    private static func headers(
        _ arguments: Arguments, signal: OTLPSignal, environment: [String: String],
        into settings: inout OTLPExportSettings
    ) throws(TracingError) -> [(name: String, value: String)] {
        do {
            let resolved = try HeaderSources.otlp(
                option: arguments.headerOption, arguments: arguments.headers, environment: environment, signal: signal
            ).resolve()
            for warning in resolved.warnings where !settings.warnings.contains(warning) {
                settings.warnings.append(warning)
            }
            return resolved.headers
        } catch {
            throw TracingError(code: .invalidSetting, message: error.message)
        }
    }
}
