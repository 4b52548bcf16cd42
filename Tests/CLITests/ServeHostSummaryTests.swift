import Foundation
import OrderedJSON
import TestSupport
import Testing

/// `GET /api/v1/hosts?view=summary`: the fleet's list with each latest record cut to what a fleet view
/// shows, against a real `serve` watching the harness sshd.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ServeHostSummaryTests {
    @Test func theSummaryViewKeepsTheFleetFiguresAndLeavesOutProcessesAndPerCoreFigures() throws {
        let server = try SSHTestServer.shared()
        let directory = NSTemporaryDirectory() + "hostscope-summary-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/ssh_config"
        try (server.configBlock("s1") + server.configBlock("s2")).write(
            toFile: config, atomically: true, encoding: .utf8)
        let serve = try RunningServe(
            ["s1", "s2", "--ssh-config", config, "--every", "1s", "--listen", "127.0.0.1:0"], directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        // Two ticks: the second has rates (network, disk) that need the one before.
        let full = try serve.waitFor("/api/v1/hosts") { $0.body.components(separatedBy: "\"ticks\":2").count == 3 }
        let summary = try serve.get("/api/v1/hosts?view=summary")
        #expect(summary.status == 200)
        let whole = try #require(JSONParser.parse(full.body)["hosts"]?[0]?["latest"])
        let document = try JSONParser.parse(summary.body)
        #expect(document["schema"]?.stringValue == "hostscope.api.hosts/1")
        let host = try #require(document["hosts"]?[0])
        #expect(host["state"]?.stringValue == "ok")
        let latest = try #require(host["latest"])
        #expect(latest["schema"]?.stringValue == "hostscope.snapshot/1")
        #expect(latest["collected_at"]?.stringValue != nil)
        #expect(latest["cpu"]?["busy_percent"]?.doubleValue != nil)
        #expect(latest["cpu"]?["cores"]?.intValue == whole["cpu"]?["cores"]?.intValue)
        #expect(latest["cpu"]?.objectValue?.keys.sorted() == ["busy_percent", "cores"])
        #expect(latest["memory"]?.objectValue?.keys == ["used_percent"])
        #expect(latest["load"] == whole["load"])
        #expect(latest["uptime_seconds"] != nil)
        let root = try #require(latest["disks"]?.arrayValue?.first { $0["mount"]?.stringValue == "/" })
        #expect(root["used_percent"]?.doubleValue != nil && root["size_bytes"] != nil && root["type"] != nil)
        #expect(root["inodes_total"] == nil)
        let interfaces = try #require(latest["network"]?.arrayValue)
        #expect(!interfaces.isEmpty)
        #expect(
            interfaces.allSatisfy {
                $0.objectValue?.keys.allSatisfy {
                    ["interface", "rx_bytes_per_second", "tx_bytes_per_second"].contains($0)
                } == true
            })
        #expect(latest["processes"] == nil && latest["kernel"] == nil && latest["os"] == nil)
        #expect(whole["processes"]?.arrayValue?.isEmpty == false)
        // The point of the view: a fleet page's first load. The whole list is several times larger.
        #expect(
            summary.body.utf8.count * 4 < full.body.utf8.count, "\(summary.body.utf8.count) vs \(full.body.utf8.count)")

        let bad = try serve.get("/api/v1/hosts?view=compact")
        #expect(bad.status == 400)
        #expect(bad.body.contains("view must be full or summary"))
        let unknown = try serve.get("/api/v1/hosts?limit=3")
        #expect(unknown.status == 400)
    }
}
