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
        let path = directory + "/rules.yml"
        try """
        rules:
          - alert: MemoryInUse
            when: memory_used_percent >= \(threshold)
            for: 1s
            severity: warning
            annotations:
              summary: 'memory at {{ printf "%.1f" $value }}% on {{ $labels.instance }}'
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
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
}
