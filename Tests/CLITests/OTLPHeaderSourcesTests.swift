import Foundation
import OrderedJSON
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// OTLP credentials kept off the command line: `OTEL_EXPORTER_OTLP_HEADERS`, headers files and URL files,
/// checked against the real receiver, which refuses a request without the right header as a collector with
/// an authenticator does.
@Suite(.serialized, .timeLimit(.minutes(3))) struct OTLPHeaderSourcesTests {
    static func privateFile(_ text: String, mode: mode_t = 0o600) throws -> String {
        let path = NSTemporaryDirectory() + "hostscope-otlp-secret-\(UUID().uuidString)"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, mode)
        return path
    }

    static func received(_ port: Int) throws -> JSONValue {
        try JSONParser.parse(try CLI.runShell("curl -s http://127.0.0.1:\(port)/received").stdout)
    }

    @Test func headersFromTheEnvironmentAndFromAPrivateFileReachTheReceiverAndNothingElse() async throws {
        let token = "Tok" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        let team = "Team" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        let database = NSTemporaryDirectory() + "hostscope-otlp-headers-\(UUID().uuidString).sqlite"
        let ndjson = NSTemporaryDirectory() + "hostscope-otlp-headers-\(UUID().uuidString).jsonl"
        let headersFile = try Self.privateFile("# receiver credentials\nAuthorization: Bearer \(token)\n")
        let urlFile = try Self.privateFile("http://127.0.0.1:0\n")
        defer {
            for path in [database, database + "-wal", database + "-shm", ndjson, headersFile, urlFile] {
                try? FileManager.default.removeItem(atPath: path)
            }
        }
        let required = ["--require-header", "Authorization=Bearer \(token)", "--require-header", "x-team=\(team)"]
        try await withPythonServer("otlp_receiver.py", arguments: ["--ndjson", ndjson] + required) { receiver in
            let endpoint = "http://127.0.0.1:\(receiver.port)"
            var outputs: [String] = []
            // Everything from the environment, percent-encoded as the specification allows.
            let fromEnvironment = try CLI.run(
                ["snapshot", "local", "-o", "json", "--db", database, "--otlp-endpoint", endpoint],
                environment: ["OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20\(token),x-team=\(team)"])
            #expect(fromEnvironment.status == 0, "\(fromEnvironment.stderr)")
            #expect(!fromEnvironment.stderr.contains("warning"), "\(fromEnvironment.stderr)")
            let afterSnapshot = try Self.received(receiver.port)
            #expect((afterSnapshot["span_count"]?.intValue ?? 0) > 0)
            #expect(afterSnapshot["attempts"]?.arrayValue?.allSatisfy { $0["status"] == 200 } == true)
            outputs += [fromEnvironment.stdout, fromEnvironment.stderr]

            // The token from a headers file, the team from the environment; the environment's wrong token
            // loses to the file's, name by name.
            try Data(("http://127.0.0.1:\(receiver.port)\n").utf8).write(to: URL(fileURLWithPath: urlFile))
            let push = try CLI.run(
                ["trace", "push", "--endpoint", "@" + urlFile, "--header", "@" + headersFile, "--db", database],
                environment: ["OTEL_EXPORTER_OTLP_TRACES_HEADERS": "authorization=Bearer wrong,x-team=\(team)"])
            #expect(push.status == 0, "\(push.stderr)")
            #expect(push.stdout.contains("pushed "), "\(push.stdout)")
            #expect(!push.stderr.contains("warning"), "\(push.stderr)")
            outputs += [push.stdout, push.stderr]

            // Without the file the environment's wrong token is what goes, and the receiver refuses it.
            let wrong = try CLI.run(
                ["trace", "push", "--endpoint", endpoint, "--db", database],
                environment: ["OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer wrong,x-team=\(team)"])
            #expect(wrong.status != 0)
            #expect(wrong.stderr.contains("401"), "\(wrong.stderr)")
            outputs += [wrong.stdout, wrong.stderr]

            // The same token inline works, with a warning that does not quote it.
            let inline = try CLI.run(
                [
                    "trace", "push", "--endpoint", endpoint, "--header", "Authorization=Bearer \(token)", "--header",
                    "x-team=\(team)", "--db", database,
                ])
            #expect(inline.status == 0, "\(inline.stderr)")
            #expect(inline.stderr.contains("the value of --header Authorization is on the command line"))
            #expect(
                inline.stderr.contains("OTEL_EXPORTER_OTLP_HEADERS or in a file (mode 0600) given as --header @FILE"))
            outputs += [inline.stdout, inline.stderr]

            let export = try CLI.run(["trace", "export", "--format", "otlp", "--db", database])
            outputs += [export.stdout, (try? String(contentsOfFile: ndjson, encoding: .utf8)) ?? ""]
            let bytes = ["", "-wal"].compactMap { FileManager.default.contents(atPath: database + $0) }
            outputs += bytes.map { String(decoding: $0, as: UTF8.self) }
            for (index, text) in outputs.enumerated() {
                #expect(!text.contains(token), "output \(index) holds the token")
                #expect(!text.contains(team), "output \(index) holds the team key")
            }
        }
    }

    /// A tenant header (`X-Scope-OrgID: 1`, as Grafana's Mimir, Tempo and Loki take) is no credential: its
    /// value must not turn every 1 of the messages, records and spans into `REDACTED`. A short value under
    /// a credential's name (`x-api-key`) still never leaves.
    @Test func aShortTenantHeaderLeavesMessagesAndSpansReadable() async throws {
        let database = NSTemporaryDirectory() + "hostscope-otlp-tenant-\(UUID().uuidString).sqlite"
        let ndjson = NSTemporaryDirectory() + "hostscope-otlp-tenant-\(UUID().uuidString).jsonl"
        let config = try Self.privateFile("Host web1\n    HostName 127.0.0.1\n    Port 1\n")
        defer {
            for path in [database, database + "-wal", database + "-shm", ndjson, config] {
                try? FileManager.default.removeItem(atPath: path)
            }
        }
        let required = ["--require-header", "X-Scope-OrgID=1", "--require-header", "x-api-key=k9"]
        try await withPythonServer("otlp_receiver.py", arguments: ["--ndjson", ndjson] + required) { receiver in
            let run = try CLI.run(
                [
                    "snapshot", "web1", "-F", config, "-o", "ndjson", "--db", database, "--otlp-endpoint",
                    "http://127.0.0.1:\(receiver.port)",
                ],
                environment: ["OTEL_EXPORTER_OTLP_HEADERS": "X-Scope-OrgID=1,x-api-key=k9"])
            #expect(run.status != 0)
            #expect(run.stderr.contains("web1: cannot connect to 127.0.0.1 port 1"), "\(run.stderr)")
            #expect(run.stdout.contains("\"host\":\"web1\""), "\(run.stdout)")
            let received = try Self.received(receiver.port)
            #expect((received["span_count"]?.intValue ?? 0) > 0, "the receiver took the tenant's spans")
            let spans = (try? String(contentsOfFile: ndjson, encoding: .utf8)) ?? ""
            #expect(spans.contains("web1"), "\(spans.prefix(2000))")
            for text in [run.stdout, run.stderr, spans] {
                #expect(!text.contains("REDACTED"), "\(text.prefix(2000))")
                #expect(!text.contains("k9"), "\(text.prefix(2000))")
            }
        }
    }

    @Test func filesOthersCanReadAreRefusedBeforeAnythingIsSent() throws {
        let headers = try Self.privateFile("Authorization=Bearer shared\n", mode: 0o640)
        let url = try Self.privateFile("http://u:p@127.0.0.1:1\n", mode: 0o604)
        defer { for path in [headers, url] { try? FileManager.default.removeItem(atPath: path) } }
        let byHeaders = try CLI.run(
            [
                "snapshot", "local", "-o", "json", "--otlp-endpoint", "http://127.0.0.1:1", "--otlp-header",
                "@" + headers,
            ])
        #expect(byHeaders.status == 64)
        #expect(
            byHeaders.stderr.contains("refusing the headers file given to --otlp-header \(headers): its mode is 0640"))
        #expect(byHeaders.stdout.isEmpty)
        let byURL = try CLI.run(["trace", "push", "--endpoint", "@" + url])
        #expect(byURL.status == 64)
        #expect(byURL.stderr.contains("refusing the file given to --endpoint \(url): its mode is 0604"))
        #expect(!byURL.stderr.contains("u:p@"))
    }

    @Test func anEndpointWithCredentialsOnTheCommandLineIsWarnedAboutWithoutPrintingThem() throws {
        let secret = "Pw" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        let result = try CLI.run(
            [
                "snapshot", "local", "-o", "json", "--otlp-endpoint",
                "http://collector:\(secret)@127.0.0.1:1/?token=Tok\(secret)",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("--otlp-endpoint carries credentials"), "\(result.stderr)")
        #expect(result.stderr.contains("give the URL as --otlp-endpoint @FILE"))
        #expect(!result.stderr.contains(secret))
        #expect(!result.stdout.contains(secret))
    }
}
