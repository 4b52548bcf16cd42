import Foundation
import OrderedJSON
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `serve --rules`: alerts on `/api/v1/alerts`, as `alert` events and as `hostscope_alert` series; SIGHUP
/// reloads the rules (a bad file keeps them); a restart keeps a firing alert without firing it again.
@Suite(.serialized) struct ServeAlertsTests {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "hostscope-serve-alerts-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    private func writeRules(threshold: String) throws -> String {
        try AlertTestRules.writeMemoryRule(threshold: threshold, severity: "info", in: directory)
    }

    private func alerts(_ serve: RunningServe) throws -> [JSONValue] {
        try JSONParser.parse(try serve.get("/api/v1/alerts").body)["data"]?["alerts"]?.arrayValue ?? []
    }

    @Test func aFiringAlertShowsOnTheAPIAsEventsAndAsASeriesAndAReloadResolvesIt() throws {
        let rules = try writeRules(threshold: "0")
        let serve = try RunningServe(
            ["local", "--every", "500ms", "--listen", "127.0.0.1:0", "--rules", rules], directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        let stream = try CurlCommand.get(serve.url("/api/v1/events?types=alert"), timeout: 4, extra: ["-N"])
        let events = stream.body.components(separatedBy: "\n\n").filter { $0.contains("event: alert\n") }
        let moves = try events.map { event in
            let data = try #require(event.split(separator: "\n").first { $0.hasPrefix("data: ") }?.dropFirst(6))
            let value = try JSONParser.parse(String(data))
            return "\(value["from"]?.stringValue ?? "")→\(value["to"]?.stringValue ?? "")"
        }
        // The first record of `local` may come before the stream is open, and with it the move to pending:
        // the stream then starts at the move to firing.
        #expect(
            moves == ["inactive→pending", "pending→firing"] || moves == ["pending→firing"],
            "\(stream.body.prefix(2000))")
        let alert = try #require(try alerts(serve).first)
        #expect(alert["state"]?.stringValue == "firing")
        #expect(alert["labels"]?["instance"]?.stringValue == "local")
        #expect(alert["annotations"]?["summary"]?.stringValue?.hasPrefix("memory at ") == true)
        _ = try serve.waitFor("/metrics", timeout: 5) {
            $0.body.contains(
                "hostscope_alert{alertname=\"MemoryInUse\",alertstate=\"firing\",severity=\"info\",instance=\"local\"} 1"
            )
        }

        // A bad file keeps the rules in force and says why.
        try "rules:\n  - alert: MemoryInUse\n    when: memory_used_percent >= 200\n".write(
            toFile: rules, atomically: true, encoding: .utf8)
        serve.process.signal(SIGHUP)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !serve.log.contains("alert rules reload failed") { Thread.sleep(forTimeInterval: 0.1) }
        let failure = try #require(
            serve.logLines().first { $0["message"]?.stringValue?.hasPrefix("alert rules reload failed") == true })
        #expect(failure["reason"]?.stringValue?.contains("rules.yml:3: the condition") == true)
        #expect(try alerts(serve).count == 1)

        // A higher threshold resolves it.
        _ = try writeRules(threshold: "99.99")
        serve.process.signal(SIGHUP)
        _ = try serve.waitFor("/api/v1/alerts") { $0.body.contains("\"alerts\":[]") }
        _ = try serve.waitFor("/metrics", timeout: 5) { !$0.body.contains("hostscope_alert{") }
        #expect(serve.stop() == 0)
    }

    @Test func aRestartedServeStillHasTheFiringAlertAndDoesNotFireItAgain() throws {
        let rules = try writeRules(threshold: "0")
        let db = directory + "/alerts.sqlite"
        let arguments = ["local", "--every", "500ms", "--listen", "127.0.0.1:0", "--rules", rules, "--db", db]
        let first = try RunningServe(arguments, directory: directory)
        try first.waitUntilListening()
        let firing = try first.waitFor("/api/v1/alerts") { $0.body.contains("\"state\":\"firing\"") }
        let firedAt = try JSONParser.parse(firing.body)["data"]?["alerts"]?[0]?["firedAt"]
        #expect(first.stop() == 0)

        let second = try RunningServe(arguments, directory: directory)
        defer { _ = second.stop() }
        try second.waitUntilListening()
        // Firing from the start, before the first record, with the time it first fired.
        let restored = try #require(try alerts(second).first)
        #expect(restored["state"]?.stringValue == "firing")
        #expect(restored["firedAt"] == firedAt)
        _ = try second.waitFor("/api/v1/hosts/local") { $0.body.contains("\"ticks\":3") }
        #expect(second.stop() == 0)
        let history = try CLI.run(["alerts", "--history", "--db", db, "-f", "ndjson"])
        #expect(history.stdout.split(separator: "\n").count == 2, "\(history.stdout)")
    }
}
