import AgentTracing
import CurlHTTP
import Foundation
import HostscopeCore
import Testing

/// How export settings come from options and the OpenTelemetry exporter variables, flags winning.
@Suite struct OTLPExportSettingsTests {
    static func arguments(
        endpoint: String? = nil, headers: [String] = [], encoding: OTLPEncoding? = nil,
        compression: OTLPCompression? = nil
    ) -> OTLPExportSettings.Arguments {
        OTLPExportSettings.Arguments(
            endpoint: endpoint, endpointOption: "--otlp-endpoint", headers: headers, headerOption: "--otlp-header",
            encoding: encoding, compression: compression)
    }

    static func resolve(
        _ arguments: OTLPExportSettings.Arguments = arguments(), signals: Set<OTLPSignal> = [.traces, .metrics],
        _ environment: [String: String] = [:]
    ) throws -> OTLPExportSettings {
        try OTLPExportSettings.resolve(arguments, signals: signals, environment: environment)
    }

    static func resolve(_ environment: [String: String]) throws -> OTLPExportSettings {
        try resolve(arguments(), signals: [.traces, .metrics], environment)
    }

    static func message(_ body: () throws -> OTLPExportSettings) -> String? {
        do {
            _ = try body()
            return nil
        } catch let error as TracingError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func anEndpointOptionIsTheBaseOfBothSignalsWithOTLPHTTPsDefaults() throws {
        let settings = try Self.resolve(Self.arguments(endpoint: "http://collector:4318/otel/"))
        #expect(settings.traces?.endpoint.url == "http://collector:4318/otel/v1/traces")
        #expect(settings.metrics?.endpoint.url == "http://collector:4318/otel/v1/metrics")
        #expect(settings.traces?.encoding == .protobuf)
        #expect(settings.traces?.compression == .gzip)
        // A base given with a signal's path serves the other signal too.
        let named = try Self.resolve(Self.arguments(endpoint: "http://collector:4318/v1/traces?tenant=a"))
        #expect(named.metrics?.endpoint.url == "http://collector:4318/v1/metrics?tenant=a")
    }

    @Test func withoutAnOptionTheSignalVariablesAreUsedAsTheyAreAndTheGeneralOneAsABase() throws {
        let settings = try Self.resolve(
            signals: [.traces, .metrics],
            [
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://base:4318",
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://traces:4318/custom/path",
            ])
        #expect(settings.traces?.endpoint.url == "http://traces:4318/custom/path")
        #expect(settings.metrics?.endpoint.url == "http://base:4318/v1/metrics")
        let metricsOnly = try Self.resolve(["OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://m:4318/v1/metrics"])
        #expect(metricsOnly.traces == nil)
        #expect(metricsOnly.metrics?.endpoint.url == "http://m:4318/v1/metrics")
        #expect(try Self.resolve().isEmpty)
    }

    @Test func theOptionWinsOverEveryEndpointVariable() throws {
        let settings = try Self.resolve(
            Self.arguments(endpoint: "http://flag:4318"),
            [
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://base:4318",
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://traces:4318/x",
            ])
        #expect(settings.traces?.endpoint.url == "http://flag:4318/v1/traces")
        #expect(settings.metrics?.endpoint.url == "http://flag:4318/v1/metrics")
    }

    @Test func protocolCompressionAndTimeoutComeFromTheMostSpecificVariableUnlessAnOptionSays() throws {
        let environment = [
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://base:4318",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/protobuf",
            "OTEL_EXPORTER_OTLP_COMPRESSION": "none",
            "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "2500",
        ]
        let settings = try Self.resolve(environment)
        #expect(settings.traces?.encoding == .json)
        #expect(settings.metrics?.encoding == .protobuf)
        #expect(settings.traces?.compression == OTLPCompression.none)
        #expect(settings.metrics?.compression == OTLPCompression.none)
        #expect(settings.traces?.timeouts.total == .milliseconds(2500))
        #expect(settings.traces?.timeouts.connect == .milliseconds(2500))
        #expect(settings.metrics?.timeouts.total == OTLPHTTPExporter.defaultTimeouts.total)
        let flagged = try Self.resolve(Self.arguments(encoding: .protobuf, compression: .gzip), environment)
        #expect(flagged.traces?.encoding == .protobuf)
        #expect(flagged.traces?.compression == .gzip)
    }

    @Test func unusableValuesAreOneSentenceNamingTheVariable() {
        let base = ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://base:4318"]
        let grpc = Self.message { try Self.resolve(base.merging(["OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"]) { $1 }) }
        #expect(grpc?.contains("OTEL_EXPORTER_OTLP_PROTOCOL is 'grpc'") == true)
        #expect(grpc?.contains("http/protobuf") == true)
        let compression = Self.message {
            try Self.resolve(base.merging(["OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "zstd"]) { $1 })
        }
        #expect(compression == "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION is 'zstd'; it takes gzip or none")
        let timeout = Self.message { try Self.resolve(base.merging(["OTEL_EXPORTER_OTLP_TIMEOUT": "10s"]) { $1 }) }
        #expect(timeout?.hasPrefix("OTEL_EXPORTER_OTLP_TIMEOUT is '10s'") == true)
        let endpoint = Self.message { try Self.resolve(["OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"]) }
        #expect(endpoint?.hasPrefix("OTEL_EXPORTER_OTLP_ENDPOINT: OTLP endpoint collector:4318 is not") == true)
        let headers = Self.message { try Self.resolve(Self.arguments(headers: ["x-tenant=a"])) }
        #expect(headers == "--otlp-header needs --otlp-endpoint (or OTEL_EXPORTER_OTLP_ENDPOINT)")
        // Without an endpoint nothing is exported, so other programs' settings are not judged.
        #expect(Self.message { try Self.resolve(["OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"]) } == nil)
    }

    @Test func eachSignalReadsItsOwnHeadersVariableElseTheGeneralOneAndOptionsAddToBoth() throws {
        let settings = try Self.resolve(
            Self.arguments(endpoint: "http://flag:4318", headers: ["x-tenant=ops"]),
            [
                "OTEL_EXPORTER_OTLP_HEADERS": "x-general=g",
                "OTEL_EXPORTER_OTLP_METRICS_HEADERS": "x-metrics=m%20key",
            ])
        let traces = settings.traces?.endpoint.headers.map { "\($0.name)=\($0.value)" }
        let metrics = settings.metrics?.endpoint.headers.map { "\($0.name)=\($0.value)" }
        #expect(traces == ["x-general=g", "x-tenant=ops"])
        #expect(metrics == ["x-metrics=m key", "x-tenant=ops"])
    }

    @Test func resourceAttributesComeFromTheVariablesWithTheServiceNameAlsoPhoenixsProject() throws {
        #expect(try ResourceEnvironment.attributes([:]).isEmpty)
        let attributes = try ResourceEnvironment.attributes([
            "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=prod, service.name=ignored,team=site%20ops",
            "OTEL_SERVICE_NAME": "fleet-watch",
        ])
        #expect(
            attributes == [
                Attribute("deployment.environment", "prod"), Attribute("service.name", "fleet-watch"),
                Attribute("team", "site ops"), Attribute("openinference.project.name", "fleet-watch"),
            ])
        let explicit = try ResourceEnvironment.attributes([
            "OTEL_RESOURCE_ATTRIBUTES": "openinference.project.name=triage", "OTEL_SERVICE_NAME": "hostscope-ci",
        ])
        #expect(explicit["openinference.project.name"] == "triage")
        #expect(throws: TracingError.self) { try ResourceEnvironment.attributes(["OTEL_RESOURCE_ATTRIBUTES": "a=1,b"]) }
        let merged = TraceRuntime.resource.merging(attributes)
        #expect(merged.attributes["service.name"] == "fleet-watch")
        #expect(merged.attributes["service.version"] != nil)
    }

    @Test func contentCaptureFollowsTheOptionElseTheConventionsVariable() throws {
        let variable = GenAIContentCapture.variable
        #expect(try GenAIContentCapture.enabled(option: nil, environment: [:]) == false)
        #expect(try GenAIContentCapture.enabled(option: nil, environment: [variable: "true"]))
        #expect(try GenAIContentCapture.enabled(option: nil, environment: [variable: "SPAN_ONLY"]))
        #expect(try GenAIContentCapture.enabled(option: nil, environment: [variable: "no_content"]) == false)
        #expect(try GenAIContentCapture.enabled(option: false, environment: [variable: "true"]) == false)
        #expect(try GenAIContentCapture.enabled(option: true, environment: [:]))
        #expect(throws: TracingError.self) {
            try GenAIContentCapture.enabled(option: nil, environment: [variable: "maybe"])
        }
    }
}
