import Foundation
import HostStats
import HostscopeCore
import MetricsExposition
import OrderedJSON
import ServeAPI
import TestSupport
import Testing

@Suite struct FleetBoardTests {
    static func board(_ hosts: [String]) -> FleetBoard {
        let board = FleetBoard(topProcesses: 5, version: "9.9.9", events: EventLog(capacity: 64, epoch: "1"))
        board.synchronize(hosts.map { HostWatchState(host: $0) })
        return board
    }

    static func failure(_ host: String, _ kind: FailureKind) -> SnapshotRecord {
        .failure(CollectionFailure(host: host, collectedAt: Date(), kind: kind, message: "\(kind.rawValue) failed"))
    }

    /// A host's state after `records`, as the watch keeps it.
    static func state(_ host: String, after records: [SnapshotRecord]) -> HostWatchState {
        var state = HostWatchState(host: host)
        for record in records {
            state.ticks += 1
            state.latest = record
            state.lastTick = record.collectedAt
            switch record {
            case .snapshot(let snapshot):
                state.phase = .up
                state.lastSuccess = snapshot.collectedAt
                state.lastError = nil
            case .failure(let failure):
                state.phase = .failing
                state.errors += 1
                state.errorsByKind[failure.kind, default: 0] += 1
                state.lastError = "\(failure.kind.rawValue): \(failure.message)"
            }
        }
        return state
    }

    /// What the watch sends for one tick: the record, then the host's new state.
    static func tick(_ board: FleetBoard, _ host: String, _ records: [SnapshotRecord]) {
        guard let last = records.last else { return }
        board.handle(.record(last))
        board.handle(.state(state(host, after: records)))
    }

    @Test func whenEveryHostIsDownEachHasUpZeroAndTheExpositionStaysValid() async throws {
        let board = Self.board(["web1", "web2", "db1"])
        Self.tick(board, "web1", [Self.failure("web1", .connect)])
        Self.tick(board, "web2", [Self.failure("web2", .timeout)])
        // db1 has not ended a collection yet: still 0.
        let text = String(decoding: await board.metrics(.prometheusText), as: UTF8.self)
        for host in ["web1", "web2", "db1"] {
            #expect(text.contains("hostscope_up{instance=\"\(host)\"} 0\n"), "\(host)")
        }
        #expect(text.contains("hostscope_collection_errors_total{instance=\"web2\",kind=\"timeout\"} 1\n"))
        #expect(text.contains("hostscope_collections_total{instance=\"web2\"} 1\n"))
        #expect(text.contains("hostscope_hosts 3\n"))
        #expect(!text.contains("node_"))
        #expect(try ExpositionValidation.promtool(await board.metrics(.prometheusText)).passesPromtool)
        #expect(board.hostsWithoutRecord() == ["db1"])
    }

    @Test func aSnapshotMakesTheHostUpWithItsNodeFigures() async throws {
        let board = Self.board(["web1"])
        var snapshot = Snapshot(
            host: "web1", collectedAt: Date(timeIntervalSince1970: 1_795_600_000), collector: "proc")
        snapshot.memory = MemoryStats(totalBytes: 8_000_000_000, availableBytes: 6_000_000_000)
        snapshot.load = LoadAverage(one: 0.5, five: 0.25, fifteen: 0.125)
        Self.tick(board, "web1", [.snapshot(snapshot)])
        let text = String(decoding: await board.metrics(.prometheusText), as: UTF8.self)
        #expect(text.contains("hostscope_up{instance=\"web1\"} 1\n"))
        #expect(text.contains("node_memory_MemTotal_bytes{instance=\"web1\"} 8000000000\n"))
        #expect(text.contains("node_load1{instance=\"web1\"} 0.5\n"))
        #expect(text.contains("hostscope_last_success_timestamp_seconds{instance=\"web1\"} 1795600000\n"))
        // The probe of one host has no instance label: the scraper's relabeling gives it.
        let probe = String(decoding: try #require(board.probe("web1", format: .prometheusText)), as: UTF8.self)
        #expect(probe.contains("node_memory_MemTotal_bytes 8000000000\n"))
        #expect(board.probe("elsewhere", format: .prometheusText) == nil)
        // A failure after it takes the node figures away again; the last success stays.
        Self.tick(board, "web1", [.snapshot(snapshot), Self.failure("web1", .auth)])
        let after = String(decoding: await board.metrics(.prometheusText), as: UTF8.self)
        #expect(!after.contains("node_memory"))
        #expect(after.contains("hostscope_last_success_timestamp_seconds{instance=\"web1\"} 1795600000\n"))
    }

    @Test func recordsStatesAndFleetChangesBecomeEvents() throws {
        let board = Self.board(["web1"])
        Self.tick(board, "web1", [Self.failure("web1", .connect)])
        // A host that joins (a reload, a first probe) starts connecting; one that leaves is gone.
        board.handle(.state(HostWatchState(host: "web2")))
        board.handle(.removed(host: "web1"))
        let events = board.events.read(after: 0).events
        #expect(events.map(\.name) == ["record", "host_state", "fleet", "host_state", "fleet"])
        let record = try JSONParser.parse(events[0].data)
        #expect(record["schema"]?.stringValue == "hostscope.snapshot/1")
        #expect(record["error"]?["kind"]?.stringValue == "connect")
        let state = try JSONParser.parse(events[1].data)
        #expect(state["host"]?.stringValue == "web1")
        #expect(state["state"]?.stringValue == "failing")
        #expect(state["last_error"]?.stringValue == "connect: connect failed")
        let joined = try JSONParser.parse(events[2].data)
        #expect(joined["host"]?.stringValue == "web2")
        #expect(joined["change"]?.stringValue == "added")
        #expect(joined["hosts"]?.intValue == 2)
        let left = try JSONParser.parse(events[4].data)
        #expect(left["change"]?.stringValue == "removed")
        #expect(left["hosts"]?.intValue == 1)
        #expect(board.hostStates().map(\.host) == ["web2"])
        // The same state again is no news.
        board.handle(.state(HostWatchState(host: "web2")))
        #expect(board.events.read(after: 0).events.count == 5)
    }

    @Test func aResynchronizationTakesTheWatchsStatesAndTellsClientsToRefetch() async throws {
        let board = Self.board(["web1", "web2"])
        board.synchronize(
            [Self.state("web2", after: [Self.failure("web2", .timeout)]), HostWatchState(host: "db1")],
            announce: true)
        #expect(board.hostNames == ["web2", "db1"])
        let text = String(decoding: await board.metrics(.prometheusText), as: UTF8.self)
        #expect(!text.contains("instance=\"web1\""))
        #expect(text.contains("hostscope_collection_errors_total{instance=\"web2\",kind=\"timeout\"} 1\n"))
        #expect(board.events.read(after: 0).events.map(\.name) == ["reset"])
    }

    @Test func theHostsDocumentCarriesStateAndLatestRecord() throws {
        let board = Self.board(["web1"])
        Self.tick(board, "web1", [Self.failure("web1", .hostKey)])
        let document = try JSONParser.parse(APIEncoding.hosts(board.hostStates(), generatedAt: Date()))
        #expect(document["schema"]?.stringValue == "hostscope.api.hosts/1")
        let host = try #require(document["hosts"]?[0])
        #expect(host["host"]?.stringValue == "web1")
        #expect(host["latest"]?["error"]?["kind"]?.stringValue == "host_key")
        #expect(host.objectValue?.keys.contains("last_success") == true)
        let waiting = HostWatchState(
            host: "web1", phase: .backingOff(until: Date(timeIntervalSince1970: 1_795_600_000)))
        let encoded = JSONValue.object(APIEncoding.hostState(waiting))
        #expect(encoded["state"]?.stringValue == "waiting")
        #expect(encoded["next_attempt"]?.stringValue == "2026-11-25T09:46:40.000Z")
    }
}
