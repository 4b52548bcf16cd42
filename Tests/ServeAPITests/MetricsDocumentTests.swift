import Foundation
import Gzip
import HostStats
import HostscopeCore
import MetricsExposition
import Synchronization
import Testing
import ValueFormats

@testable import ServeAPI

/// `/metrics` documents: gzip bodies, and how far a kept document may lag the watch.
@Suite struct MetricsDocumentTests {
    static func board(_ hosts: [String], freshness: Duration) -> FleetBoard {
        let board = FleetBoard(
            topProcesses: 5, version: "9.9.9", events: EventLog(capacity: 64, epoch: "1"), documentFreshness: freshness)
        board.synchronize(hosts.map { HostWatchState(host: $0) })
        return board
    }

    /// `host` with one snapshot whose MemTotal is `total`.
    static func snapshot(_ board: FleetBoard, _ host: String, memoryTotal total: UInt64) {
        var snapshot = Snapshot(host: host, collectedAt: Date(), collector: "proc")
        snapshot.memory = MemoryStats(totalBytes: total, availableBytes: total / 2)
        FleetBoardTests.tick(board, host, [.snapshot(snapshot)])
    }

    static func text(_ board: FleetBoard) async -> String {
        String(decoding: await board.metrics(.prometheusText), as: UTF8.self)
    }

    @Test func aGzipBodyIsTheDocumentCompressedInBothFormats() async throws {
        let board = Self.board(["web1", "web2"], freshness: .zero)
        Self.snapshot(board, "web1", memoryTotal: 8_000_000_000)
        for format in [ExpositionFormat.prometheusText, .openMetrics] {
            let plain = await board.metrics(format)
            let compressed = await board.metrics(format, coding: .gzip)
            #expect(compressed.starts(with: [0x1F, 0x8B]))
            #expect(compressed.count < plain.count)
            #expect(try Gzip.decompress(compressed) == plain)
        }
        let probe = try #require(board.probe("web1", format: .prometheusText, coding: .gzip))
        #expect(try Gzip.decompress(probe) == board.probe("web1", format: .prometheusText))
        // After a change, the compressed document is the new one too.
        Self.snapshot(board, "web2", memoryTotal: 4_000_000_000)
        let after = String(
            decoding: try Gzip.decompress(await board.metrics(.prometheusText, coding: .gzip)), as: UTF8.self)
        #expect(after.contains("node_memory_MemTotal_bytes{instance=\"web2\"} 4000000000\n"))
    }

    @Test func withoutFreshnessEveryScrapeSeesTheLatestFigures() async {
        let board = Self.board(["web1"], freshness: .zero)
        Self.snapshot(board, "web1", memoryTotal: 1000)
        #expect(await Self.text(board).contains("node_memory_MemTotal_bytes{instance=\"web1\"} 1000\n"))
        Self.snapshot(board, "web1", memoryTotal: 2000)
        #expect(await Self.text(board).contains("node_memory_MemTotal_bytes{instance=\"web1\"} 2000\n"))
    }

    @Test func aKeptDocumentIsSentWhileFreshAndANewOneIsMadeOffTheRequestPath() async throws {
        let freshness = Duration.seconds(2)
        let board = Self.board(["web1"], freshness: freshness)
        Self.snapshot(board, "web1", memoryTotal: 1000)
        let first = await Self.text(board)
        #expect(first.contains("node_memory_MemTotal_bytes{instance=\"web1\"} 1000\n"))
        // Younger than a quarter of the freshness: the kept document, as it is.
        Self.snapshot(board, "web1", memoryTotal: 2000)
        #expect(await Self.text(board) == first)
        // Past a quarter: the scrape still gets the kept document at once, and the new one is made
        // meanwhile; a later scrape has it.
        try await Task.sleep(for: freshness / 4)
        #expect(await Self.text(board) == first)
        let deadline = ContinuousClock.now + .seconds(10)
        var latest = await Self.text(board)
        while !latest.contains("} 2000\n"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
            latest = await Self.text(board)
        }
        #expect(latest.contains("node_memory_MemTotal_bytes{instance=\"web1\"} 2000\n"))
        // Older than the whole freshness, a document is made while the scrape waits: the latest figures.
        Self.snapshot(board, "web1", memoryTotal: 3000)
        try await Task.sleep(for: freshness + .milliseconds(50))
        #expect(await Self.text(board).contains("node_memory_MemTotal_bytes{instance=\"web1\"} 3000\n"))
    }

    /// `host` with a snapshot of 8 filesystems and 8 interfaces, so that a document of many hosts takes a while.
    static func busySnapshot(_ board: FleetBoard, _ host: String) {
        var snapshot = Snapshot(host: host, collectedAt: Date(), collector: "proc")
        snapshot.memory = MemoryStats(totalBytes: 8_000_000_000, availableBytes: 4_000_000_000)
        snapshot.disks = (0..<8).map {
            DiskStats(
                filesystem: "/dev/sd\($0)", type: "ext4", mount: "/srv/\($0)", sizeBytes: 1 << 40, usedBytes: 1 << 39,
                availableBytes: 1 << 39)
        }
        snapshot.network = (0..<8).map {
            NetworkInterfaceStats(interface: "eth\($0)", rxBytes: 1 << 30, txBytes: 1 << 29)
        }
        FleetBoardTests.tick(board, host, [.snapshot(snapshot)])
    }

    @Test func scrapesThatFindNoDocumentShareTheOneBeingMade() async throws {
        let hosts = (0..<200).map { "web\($0)" }
        let board = Self.board(hosts, freshness: .seconds(30))
        for host in hosts { Self.busySnapshot(board, host) }
        let before = board.documentsMade.count
        let bodies = await withTaskGroup(of: [UInt8].self) { group in
            for _ in 0..<20 { group.addTask { await board.metrics(.prometheusText, coding: .gzip) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(bodies.count == 20)
        #expect(Set(bodies).count == 1)
        // One document made for all twenty (the plain one and its compression, in one making).
        #expect(board.documentsMade.count == before + 1)
        let text = String(decoding: try Gzip.decompress(bodies[0]), as: UTF8.self)
        #expect(text.contains("node_memory_MemTotal_bytes{instance=\"web199\"} 8000000000\n"))
    }

    @Test func alertTransitionsReadTheAlertsOncePerDocumentMade() async {
        let board = Self.board(["web1"], freshness: .zero)
        let reads = Lock(0)
        let firing = Lock("pending")
        board.showAlerts {
            reads.withLock { $0 += 1 }
            return [
                (
                    labels: ["alertname": "HostDown", "instance": "web1", "severity": "critical"],
                    state: firing.withLock { $0 }
                )
            ]
        }
        // A burst of transitions: the board looks at the alerts when a document is made, not on each.
        for _ in 0..<1000 { board.alertsMoved() }
        #expect(reads.withLock { $0 } == 0)
        let text = await Self.text(board)
        #expect(
            text.contains(
                "hostscope_alert{alertname=\"HostDown\",alertstate=\"pending\",severity=\"critical\",instance=\"web1\"} 1\n"
            ))
        #expect(reads.withLock { $0 } == 1)
        // Nothing moved: the same document, made once, and no second look.
        let made = board.documentsMade
        #expect(await Self.text(board) == text)
        #expect(board.documentsMade.count == made.count)
        #expect(reads.withLock { $0 } == 1)
        // A host's tick moves the figures but not the alerts: a new document, still no second look.
        Self.snapshot(board, "web1", memoryTotal: 1000)
        #expect(await Self.text(board).contains("node_memory_MemTotal_bytes{instance=\"web1\"} 1000\n"))
        #expect(reads.withLock { $0 } == 1)
        firing.withLock { $0 = "firing" }
        board.alertsMoved()
        #expect(board.documentsMade.generation > made.generation)
        #expect(await Self.text(board).contains("alertstate=\"firing\""))
        #expect(reads.withLock { $0 } == 2)
    }

    @Test(arguments: [
        ("gzip", ContentCoding.gzip), ("GZIP;q=0.5", .gzip), ("deflate, gzip;q=1.0, br", .gzip), ("x-gzip", .gzip),
        ("*", .gzip), ("gzip;q=0", .identity), ("gzip; q=0.000", .identity), ("identity", .identity),
        ("br, deflate", .identity), ("", .identity), ("*;q=0, gzip;q=0", .identity), ("*;q=0.2, gzip;q=0", .identity),
    ])
    func acceptEncodingChoosesGzipWhenItIsWelcome(header: String, expected: ContentCoding) {
        #expect(ContentCoding.negotiate(acceptEncoding: header) == expected)
    }

    @Test func noAcceptEncodingMeansTheBodyAsItIs() {
        #expect(ContentCoding.negotiate(acceptEncoding: nil) == .identity)
        #expect(ContentCoding.identity.headerValue == nil)
        #expect(ContentCoding.gzip.headerValue == "gzip")
    }
}
