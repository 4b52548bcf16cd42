import AgentTracing
import Foundation
import HostscopeCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Request headers from options, headers files and OpenTelemetry's environment variables.
@Suite struct HeaderSourcesTests {
    static func pairs(_ resolved: ResolvedHeaders) -> [String] {
        resolved.headers.map { "\($0.name)=\($0.value)" }
    }

    /// A file in /tmp with this text and mode, removed by the caller.
    static func file(_ text: String, mode: mode_t) throws -> String {
        let path = NSTemporaryDirectory() + "hostscope-headers-\(UUID().uuidString)"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, mode)
        return path
    }

    @Test func theOpenTelemetryVariableIsACommaListWithPercentDecodedPartsAndTheTracesOneWins() throws {
        let general = "Authorization=Bearer%20abc%2Cdef , x-tenant = acme%3Dcorp,,x-plus=a+b"
        let sources = HeaderSources.otlp(
            option: "--otlp-header", arguments: [], environment: ["OTEL_EXPORTER_OTLP_HEADERS": general])
        let scrubber = SecretScrubber()
        #expect(
            Self.pairs(try sources.resolve(registeringWith: scrubber)) == [
                "Authorization=Bearer abc,def", "x-tenant=acme=corp", "x-plus=a+b",
            ])
        // The traces variable replaces the general one, as the OpenTelemetry SDKs read them.
        let both = HeaderSources.otlp(
            option: "--otlp-header", arguments: [],
            environment: ["OTEL_EXPORTER_OTLP_HEADERS": general, "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-only=1"])
        #expect(Self.pairs(try both.resolve(registeringWith: scrubber)) == ["x-only=1"])
        // No warning: nothing came from the command line.
        #expect(try sources.resolve(registeringWith: scrubber).warnings.isEmpty)
    }

    @Test func everyValueIsRegisteredAsASecretWhateverItsHeaderIsCalled() throws {
        let scrubber = SecretScrubber()
        let file = try Self.file("x-honeycomb-team: hcteamkey42\n", mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let sources = HeaderSources.otlp(
            option: "--otlp-header", arguments: ["@" + file, "X-Scope-OrgID=tenant-7"],
            environment: ["OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Basic%20dXNlcjpwYXNz"])
        _ = try sources.resolve(registeringWith: scrubber)
        let text = "hcteamkey42 tenant-7 Basic dXNlcjpwYXNz Basic%20dXNlcjpwYXNz"
        #expect(scrubber.scrub(text) == "REDACTED REDACTED REDACTED REDACTED")
    }

    @Test func optionsWinOverTheEnvironmentNameByNameAndRepeatedOptionsAreKept() throws {
        let file = try Self.file("# headers\n\nAuthorization: Bearer from-file\nx-extra=1\n", mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let sources = HeaderSources.otlp(
            option: "--otlp-header", arguments: ["@" + file, "x-extra=2"],
            environment: ["OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer from-env,x-tenant=acme"])
        #expect(
            Self.pairs(try sources.resolve(registeringWith: SecretScrubber())) == [
                "x-tenant=acme", "Authorization=Bearer from-file", "x-extra=1", "x-extra=2",
            ])
    }

    @Test func aHeadersFileOthersCanReadIsRefusedAsTheCredentialsFileIs() throws {
        let file = try Self.file("Authorization=Bearer shared\n", mode: 0o644)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let sources = HeaderSources(option: "--header", arguments: ["@" + file])
        let error = #expect(throws: HeaderSourceError.self) { try sources.resolve(registeringWith: SecretScrubber()) }
        #expect(
            error?.message
                == "refusing the headers file given to --header \(file): its mode is 0644, so others can read it; "
                + "run: chmod 600 \(file)")
        let missing = HeaderSources(option: "--header", arguments: ["@/nonexistent/headers"])
        let absent = #expect(throws: HeaderSourceError.self) { try missing.resolve(registeringWith: SecretScrubber()) }
        #expect(absent?.message.contains("does not exist") == true)
    }

    @Test func badInputIsOneSentenceThatNeverQuotesAValue() throws {
        let cases: [(HeaderSources, String)] = [
            (HeaderSources(option: "--header", arguments: ["justavalue-s3cret"]), "got one without '='"),
            (HeaderSources(option: "--header", arguments: ["=s3cret"]), "without a name"),
            (HeaderSources(option: "--header", arguments: ["bad name=s3cret"]), "not a header name"),
            (
                HeaderSources.otlp(
                    option: "--otlp-header", arguments: [],
                    environment: ["OTEL_EXPORTER_OTLP_HEADERS": "a=1,s3cret"]),
                "OTEL_EXPORTER_OTLP_HEADERS is a comma-separated list of name=value pairs; entry 2 is one without '='"
            ),
            (
                HeaderSources.otlp(
                    option: "--otlp-header", arguments: [],
                    environment: ["OTEL_EXPORTER_OTLP_HEADERS": "a=s3cret%0D%0AHost: evil"]),
                "with a line break in the value of a"
            ),
        ]
        for (sources, expected) in cases {
            let error = #expect(throws: HeaderSourceError.self) {
                try sources.resolve(registeringWith: SecretScrubber())
            }
            #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
            #expect(error?.message.contains("s3cret") == false, "\(error?.message ?? "")")
        }
    }

    @Test func aValueThatLooksSecretOnTheCommandLineIsWarnedAboutWithoutQuotingIt() throws {
        let sources = HeaderSources.otlp(
            option: "--otlp-header",
            arguments: [
                "Authorization=Bearer abc", "x-honeycomb-team=hcK3yAbcdef0123456", "x-tenant=acme",
                "HTTP-Referer=https://example.org/a/b/c/d/e",
            ], environment: [:])
        let warnings = try sources.resolve(registeringWith: SecretScrubber()).warnings
        #expect(
            warnings == [
                "the value of --otlp-header Authorization is on the command line, where every local user can read it "
                    + "(/proc/PID/cmdline) while hostscope runs; put it in OTEL_EXPORTER_OTLP_HEADERS or in a file "
                    + "(mode 0600) given as --otlp-header @FILE",
                "the value of --otlp-header x-honeycomb-team is on the command line, where every local user can read "
                    + "it (/proc/PID/cmdline) while hostscope runs; put it in OTEL_EXPORTER_OTLP_HEADERS or in a file "
                    + "(mode 0600) given as --otlp-header @FILE",
            ])
    }

    @Test func aURLWithCredentialsIsWarnedAboutAndCanComeFromAPrivateFile() throws {
        #expect(
            ArgumentSecrets.urlWarning("https://u:pw@otlp.example.com", option: "--otlp-endpoint", saferForm: "x")?
                .contains("pw") == false)
        #expect(
            ArgumentSecrets.urlWarning("https://otlp.example.com/?token=t1", option: "--base-url", saferForm: "x")
                != nil)
        #expect(ArgumentSecrets.urlWarning("http://localhost:4318", option: "--otlp-endpoint", saferForm: "x") == nil)
        let file = try Self.file("# the receiver\nhttps://collector:pwFromFile@otlp.example.com\n", mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let scrubber = SecretScrubber()
        let (url, fromFile) = try ArgumentSecrets.url("@" + file, option: "--otlp-endpoint", registeringWith: scrubber)
        #expect(url == "https://collector:pwFromFile@otlp.example.com")
        #expect(fromFile)
        #expect(scrubber.scrub("pwFromFile") == "REDACTED")
    }
}
