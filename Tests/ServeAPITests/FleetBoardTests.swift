import Agent
import Foundation
import HostStats
import MetricsExposition
import OrderedJSON
import ServeAPI
import TestSupport
import Testing

@Suite struct FleetBoardTests {
    static func board(_ hosts: [String]) -> FleetBoard {
        let board = FleetBoard(topProcesses: 5, version: "9.9.9", events: EventLog(capacity: 64, epoch: "1"))
        board.handle(.hostsChanged(hosts: hosts, added: hosts, removed: []))
        return board
    }

    static func failure(_ host: String, _ kind: FailureKind) -> SnapshotRecord {
        .failure(CollectionFailure(host: host, collectedAt: Date(), kind: kind, message: "\(kind.rawValue) failed"))
    }

    @Test func whenEveryHostIsDownEachHasUpZeroAndTheExpositionStaysValid() throws {
        let board = Self.board(["web1", "web2", "db1"])
        board.handle(.record(Self.failure("web1", .connect)))
        board.handle(.record(Self.failure("web2", .timeout)))
        // db1 has not ended a collection yet: still 0.
        let text = String(decoding: board.metrics(.prometheusText), as: UTF8.self)
        for host in ["web1", "web2", "db1"] {
            #expect(text.contains("hostscope_up{instance=\"\(host)\"} 0\n"), "\(host)")
        }
        #expect(text.contains("hostscope_collection_errors_total{instance=\"web2\",kind=\"timeout\"} 1\n"))
        #expect(text.contains("hostscope_hosts 3\n"))
        #expect(!text.contains("node_"))
        #expect(try ExpositionValidation.promtool(board.metrics(.prometheusText)).passesPromtool)
        #expect(board.hostsWithoutRecord() == ["db1"])
    }

    @Test func aSnapshotMakesTheHostUpWithItsNodeFigures() throws {
        let board = Self.board(["web1"])
        var snapshot = Snapshot(host: "web1", collectedAt: Date(timeIntervalSince1970: 1_795_600_000), collector: "proc")
        snapshot.memory = MemoryStats(totalBytes: 8_000_000_000, availableBytes: 6_000_000_000)
        snapshot.load = LoadAverage(one: 0.5, five: 0.25, fifteen: 0.125)
        board.handle(.record(.snapshot(snapshot)))
        let text = String(decoding: board.metrics(.prometheusText), as: UTF8.self)
        #expect(text.contains("hostscope_up{instance=\"web1\"} 1\n"))
        #expect(text.contains("node_memory_MemTotal_bytes{instance=\"web1\"} 8000000000\n"))
        #expect(text.contains("node_load1{instance=\"web1\"} 0.5\n"))
        #expect(text.contains("hostscope_last_success_timestamp_seconds{instance=\"web1\"} 1795600000\n"))
        // The probe of one host has no instance label: the scraper's relabeling gives it.
        let probe = String(decoding: try #require(board.probe("web1", format: .prometheusText)), as: UTF8.self)
        #expect(probe.contains("node_memory_MemTotal_bytes 8000000000\n"))
        #expect(board.probe("elsewhere", format: .prometheusText) == nil)
        // A failure after it takes the node figures away again.
        board.handle(.record(Self.failure("web1", .auth)))
        #expect(!String(decoding: board.metrics(.prometheusText), as: UTF8.self).contains("node_memory"))
    }

    @Test func recordsStatesAndFleetChangesBecomeEvents() throws {
        let board = Self.board(["web1"])
        board.handle(.status(HostWatchStatus(host: "web1", state: .failing, ticks: 1, errors: 1, lastError: "connect: refused")))
        board.handle(.record(Self.failure("web1", .connect)))
        board.handle(.hostsChanged(hosts: ["web2"], added: ["web2"], removed: ["web1"]))
        let events = board.events.read(after: 0).events
        #expect(events.map(\.name) == ["fleet", "host_state", "record", "fleet"])
        let state = try JSONParser.parse(events[1].data)
        #expect(state["host"]?.stringValue == "web1")
        #expect(state["state"]?.stringValue == "failing")
        let record = try JSONParser.parse(events[2].data)
        #expect(record["schema"]?.stringValue == "hostscope.snapshot/1")
        #expect(record["error"]?["kind"]?.stringValue == "connect")
        #expect(board.hostViews().map(\.status.host) == ["web2"])
    }

    @Test func theHostsDocumentCarriesStateAndLatestRecord() throws {
        let board = Self.board(["web1"])
        board.handle(.record(Self.failure("web1", .hostKey)))
        let document = try JSONParser.parse(APIEncoding.hosts(board.hostViews(), generatedAt: Date()))
        #expect(document["schema"]?.stringValue == "hostscope.api.hosts/1")
        let host = try #require(document["hosts"]?[0])
        #expect(host["host"]?.stringValue == "web1")
        #expect(host["latest"]?["error"]?["kind"]?.stringValue == "host_key")
        #expect(host.objectValue?.keys.contains("last_success") == true)
    }
}
