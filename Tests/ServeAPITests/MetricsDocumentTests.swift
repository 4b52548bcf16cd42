import Foundation
import Gzip
import HostStats
import HostscopeCore
import MetricsExposition
import ServeAPI
import Testing

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

    static func text(_ board: FleetBoard) -> String {
        String(decoding: board.metrics(.prometheusText), as: UTF8.self)
    }

    @Test func aGzipBodyIsTheDocumentCompressedInBothFormats() throws {
        let board = Self.board(["web1", "web2"], freshness: .zero)
        Self.snapshot(board, "web1", memoryTotal: 8_000_000_000)
        for format in [ExpositionFormat.prometheusText, .openMetrics] {
            let plain = board.metrics(format)
            let compressed = board.metrics(format, coding: .gzip)
            #expect(compressed.starts(with: [0x1F, 0x8B]))
            #expect(compressed.count < plain.count)
            #expect(try Gzip.decompress(compressed) == plain)
        }
        let probe = try #require(board.probe("web1", format: .prometheusText, coding: .gzip))
        #expect(try Gzip.decompress(probe) == board.probe("web1", format: .prometheusText))
        // After a change, the compressed document is the new one too.
        Self.snapshot(board, "web2", memoryTotal: 4_000_000_000)
        let after = String(decoding: try Gzip.decompress(board.metrics(.prometheusText, coding: .gzip)), as: UTF8.self)
        #expect(after.contains("node_memory_MemTotal_bytes{instance=\"web2\"} 4000000000\n"))
    }

    @Test func withoutFreshnessEveryScrapeSeesTheLatestFigures() {
        let board = Self.board(["web1"], freshness: .zero)
        Self.snapshot(board, "web1", memoryTotal: 1000)
        #expect(Self.text(board).contains("node_memory_MemTotal_bytes{instance=\"web1\"} 1000\n"))
        Self.snapshot(board, "web1", memoryTotal: 2000)
        #expect(Self.text(board).contains("node_memory_MemTotal_bytes{instance=\"web1\"} 2000\n"))
    }

    @Test func aKeptDocumentIsSentWhileFreshAndANewOneIsMadeOffTheRequestPath() async throws {
        let freshness = Duration.seconds(2)
        let board = Self.board(["web1"], freshness: freshness)
        Self.snapshot(board, "web1", memoryTotal: 1000)
        let first = Self.text(board)
        #expect(first.contains("node_memory_MemTotal_bytes{instance=\"web1\"} 1000\n"))
        // Younger than a quarter of the freshness: the kept document, as it is.
        Self.snapshot(board, "web1", memoryTotal: 2000)
        #expect(Self.text(board) == first)
        // Past a quarter: the scrape still gets the kept document at once, and the new one is made
        // meanwhile; a later scrape has it.
        try await Task.sleep(for: freshness / 4)
        #expect(Self.text(board) == first)
        let deadline = ContinuousClock.now + .seconds(10)
        var latest = Self.text(board)
        while !latest.contains("} 2000\n"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
            latest = Self.text(board)
        }
        #expect(latest.contains("node_memory_MemTotal_bytes{instance=\"web1\"} 2000\n"))
        // Older than the whole freshness, a document is made while the scrape waits: the latest figures.
        Self.snapshot(board, "web1", memoryTotal: 3000)
        try await Task.sleep(for: freshness + .milliseconds(50))
        #expect(Self.text(board).contains("node_memory_MemTotal_bytes{instance=\"web1\"} 3000\n"))
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
