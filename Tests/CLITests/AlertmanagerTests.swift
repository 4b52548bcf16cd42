import Foundation
import OrderedJSON
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `serve --alertmanager` against Debian's Alertmanager on loopback routing to a webhook receiver in
/// `Scripts/`: an alert fires within its `for` and arrives with its labels and annotation text; a SIGHUP
/// with a higher threshold resolves it and the resolution arrives; a webhook answering 500 is retried.
@Suite(.serialized) struct AlertmanagerTests {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "hostscope-alertmanager-test-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    private func writeRules(threshold: String) throws -> String {
        try AlertTestRules.writeMemoryRule(threshold: threshold, severity: "warning", in: directory)
    }

    /// The alerts of every payload the receiver kept, as (status, labels, annotations).
    private func received(_ receiver: PythonServer) throws -> [JSONValue] {
        let body = try CurlCommand.get(receiver.baseURL + "/received").body
        return (try JSONParser.parse(body)["payloads"]?.arrayValue ?? []).flatMap { $0["alerts"]?.arrayValue ?? [] }
    }

    private func waitForAlert(_ receiver: PythonServer, status: String, timeout: Double = 30) throws -> JSONValue {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let alert = try received(receiver).first(where: { $0["status"]?.stringValue == status }) { return alert }
            Thread.sleep(forTimeInterval: 0.2)
        }
        throw HarnessError(description: "no \(status) alert reached the webhook: \(try received(receiver))")
    }

    @Test func aFiringAlertReachesTheWebhookThroughAlertmanagerAndAReloadResolvesIt() async throws {
        let receiver = try await PythonServer.start("alert_webhook_receiver.py")
        defer { receiver.stop() }
        let alertmanager = try AlertmanagerServer.start(webhook: receiver.baseURL + "/hook")
        defer { alertmanager.stop() }
        let rules = try writeRules(threshold: "0")
        let serve = try RunningServe(
            [
                "local", "--every", "500ms", "--listen", "127.0.0.1:0", "--rules", rules, "--alertmanager",
                alertmanager.url,
            ],
            directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        let firing = try waitForAlert(receiver, status: "firing")
        #expect(firing["labels"]?["alertname"]?.stringValue == "MemoryInUse")
        #expect(firing["labels"]?["severity"]?.stringValue == "warning")
        #expect(firing["labels"]?["instance"]?.stringValue == "local")
        let summary = try #require(firing["annotations"]?["summary"]?.stringValue)
        #expect(summary.hasPrefix("memory at ") && summary.hasSuffix("% on local"), "\(summary)")

        _ = try writeRules(threshold: "99.99")
        serve.process.signal(SIGHUP)
        let resolved = try waitForAlert(receiver, status: "resolved")
        #expect(resolved["labels"]?["alertname"]?.stringValue == "MemoryInUse")
        #expect(serve.stop() == 0)
    }

    @Test func aWebhookAnswering500IsRetriedAndTheWatchGoesOn() async throws {
        let receiver = try await PythonServer.start("alert_webhook_receiver.py")
        defer { receiver.stop() }
        _ = try CurlCommand.get(
            receiver.baseURL + "/control/fail",
            extra: ["-X", "POST", "-H", "Content-Type: application/json", "--data", "{\"count\": 2}"])
        let rules = try writeRules(threshold: "0")
        let serve = try RunningServe(
            [
                "local", "--every", "500ms", "--listen", "127.0.0.1:0", "--rules", rules, "--alert-webhook",
                receiver.baseURL + "/hook",
            ], directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        let firing = try waitForAlert(receiver, status: "firing")
        #expect(firing["fingerprint"]?.stringValue?.contains("alertname=MemoryInUse") == true)
        _ = try serve.waitFor("/api/v1/hosts/local") { $0.body.contains("\"ticks\":6") }
        #expect(serve.stop() == 0)
    }

    /// The webhook's credential, read from a headers file (mode 0600), reaches the real receiver with every payload
    /// and appears nowhere else: not in the output, the log, the records, the database (alerts and spans) or the
    /// exported spans. The same from the environment variable; a file others may read, or headers without a
    /// receiver, are refused at start.
    @Test func aWebhookCredentialReachesTheReceiverAndNothingElse() async throws {
        let server = try SSHTestServer.shared()
        let receiver = try await PythonServer.start("alert_webhook_receiver.py")
        defer { receiver.stop() }
        let secret = "hs-alert-token-\(UUID().uuidString)"
        let headers = directory + "/webhook-headers"
        try "# the receiver's credential\nAuthorization: Bearer \(secret)\n".write(
            toFile: headers, atomically: true, encoding: .utf8)
        chmod(headers, 0o600)
        let rules = try writeRules(threshold: "0")
        let db = directory + "/h.sqlite"
        let output = directory + "/out.ndjson"
        let watch = try CLI.run(
            [
                "watch", server.target, "--every", "300ms", "--count", "8", "--rules", rules, "--db", db, "-o", output,
                "--alert-records", "--alert-webhook", receiver.baseURL + "/hook", "--alert-webhook-headers", headers,
                "-v",
            ] + CLI.harnessArguments(server))
        #expect(watch.status == 0, "\(watch.stderr)")
        let body = try JSONParser.parse(try CurlCommand.get(receiver.baseURL + "/received").body)
        let authorizations = body["authorizations"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(!authorizations.isEmpty && authorizations.allSatisfy { $0 == "Bearer \(secret)" }, "\(body)")
        #expect(try received(receiver).contains { $0["status"]?.stringValue == "firing" })

        let spans = directory + "/spans.jsonl"
        let export = try CLI.run(["trace", "export", "--format", "otlp", "--output", spans, "--db", db])
        #expect(export.status == 0, "\(export.stderr)")
        var places = ["stdout": watch.stdout, "stderr": watch.stderr]
        for path in [output, spans, db, db + "-wal"] {
            if let data = FileManager.default.contents(atPath: path) {
                places[path] = String(decoding: data, as: UTF8.self)
            }
        }
        #expect(places[db] != nil && places[spans]?.isEmpty == false)
        for (place, text) in places { #expect(!text.contains(secret), "the credential is in \(place)") }

        // From the environment, as name=value pairs.
        let fromEnvironment = try await PythonServer.start("alert_webhook_receiver.py")
        defer { fromEnvironment.stop() }
        let other = "hs-env-token-\(UUID().uuidString)"
        let again = try CLI.run(
            [
                "watch", server.target, "--every", "300ms", "--count", "10", "--rules", rules, "--no-history", "-o",
                directory + "/again.ndjson", "--alert-webhook", fromEnvironment.baseURL + "/hook",
            ] + CLI.harnessArguments(server),
            environment: ["HOSTSCOPE_ALERT_WEBHOOK_HEADERS": "Authorization=Bearer \(other)"])
        #expect(again.status == 0, "\(again.stderr)")
        let received = try JSONParser.parse(try CurlCommand.get(fromEnvironment.baseURL + "/received").body)
        #expect(received["authorizations"]?.arrayValue?.first?.stringValue == "Bearer \(other)", "\(received)")
        #expect(!again.stderr.contains(other))

        chmod(headers, 0o644)
        let open = try CLI.run(
            [
                "watch", server.target, "--count", "1", "--alert-webhook", receiver.baseURL + "/hook",
                "--alert-webhook-headers", headers,
            ])
        #expect(open.status == 64 && open.stderr.contains(headers), "\(open.stderr)")
        let alone = try CLI.run(["watch", server.target, "--count", "1", "--alertmanager-headers", headers])
        #expect(alone.status == 64)
        #expect(alone.stderr.contains("--alertmanager-headers gives headers for --alertmanager; name one too."))
    }
}
