import AgentTracing
import Foundation
import HostscopeCore
import TerminalUI
import TestSupport
import Testing

/// `trace list` and `trace show` drawn from fixed spans (Fixtures/traces/sample-spans.ndjson): goldens at 80 and
/// 120 columns under Fixtures/terminal/; `HOSTSCOPE_RECORD_GOLDENS=1` rewrites them on purpose.
@Suite struct TraceTextTests {
    static func spans() throws -> [FinishedSpan] {
        let url = Repository.fixtures.appendingPathComponent("traces/sample-spans.ndjson")
        return try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map { line throws in
            try FinishedSpan(flatJSONLine: String(line))
        }
    }

    static func traces() throws -> [TraceOverview] {
        let spans = try spans()
        var order: [TraceID] = []
        for span in spans where !order.contains(span.traceID) { order.append(span.traceID) }
        return order.compactMap { id in TraceOverview.summarize(spans.filter { $0.traceID == id }) }
            .sorted { $0.startNanoseconds > $1.startNanoseconds }
    }

    static func whole(_ prefix: String) throws -> WholeTrace {
        let spans = try spans().filter { $0.traceID.hex.hasPrefix(prefix) }
        let summary = try #require(TraceOverview.summarize(spans))
        return WholeTrace(summary: summary, forest: TraceTree.forest(spans), unreadableSpans: 0)
    }

    static func checkWidth(_ text: String, _ width: Int) {
        for line in text.split(separator: "\n") {
            #expect(line.count <= width, "\(line.count) columns: \(line)")
        }
    }

    @Test(arguments: [80, 120])
    func theListOfTracesMatchesItsGolden(_ width: Int) throws {
        let text = TraceText.traces(try Self.traces(), width: width)
        Self.checkWidth(text, width)
        #expect(text == (try golden("terminal/trace-list-\(width).txt", recording: text)))
    }

    @Test func theListShowsEachTracesRootDurationSpansAndWhyItFailed() throws {
        let lines = TraceText.traces(try Self.traces(), width: 120).split(separator: "\n").map(String.init)
        #expect(lines[0].hasPrefix("START (UTC)"))
        // Newest first: the files command, the chat turn, db-primary, web1.
        #expect(lines[1].contains("77b34da64bf9") && lines[1].contains("… files.cat"))
        #expect(lines[2].contains("invoke_agent hostscope") && lines[2].contains("8.25 s") && lines[2].hasSuffix("5"))
        #expect(lines[3].contains("collect snapshot") && lines[3].contains("db-primary"))
        #expect(
            lines[4]
                == "  error (3 spans): collect snapshot: cannot connect to db-primary (10.0.0.7:22): connection refused"
        )
        #expect(lines[5].hasPrefix("2026-11-18 11:06:40  4bf92f3577b3  collect snapshot"))
        #expect(lines[5].contains("412.3 ms") && lines[5].hasSuffix("7"))
    }

    @Test(arguments: [80, 120])
    func aWholeTraceIsAWaterfallMatchingItsGolden(_ width: Int) throws {
        let text = TraceText.show(try Self.whole("4bf92f"), width: width)
        Self.checkWidth(text, width)
        #expect(text == (try golden("terminal/trace-show-\(width).txt", recording: text)))
    }

    @Test func waterfallBarsSitAtEachSpansOffsetAndNestByParent() throws {
        let lines = TraceText.show(try Self.whole("4bf92f"), width: 100).split(separator: "\n").map(String.init)
        let header = try #require(lines.firstIndex { $0.hasPrefix("SPAN ") })
        let rows = Array(lines[(header + 1)...].prefix(7))
        #expect(
            rows.map { $0.prefix(12) } == [
                "3f9a2c1d8e7b", "6e1d4b0a9c3f", "a2c4e6f8091b", "0f9e8d7c6b5a", "d41d8cd98f00", "e99a18c428cb",
                "5f4dcc3b5aa7",
            ])
        #expect(rows[0].contains("  collect snapshot "))
        #expect(rows[1].contains("    ssh connect web1"))
        #expect(rows[2].contains("      ssh tcp connect"))
        #expect(rows[5].contains("    ssh exec") && rows[5].contains("+181.0 ms") && rows[5].contains("219.2 ms"))
        #expect(rows[5].contains(" exit 0 "), "a command's row carries its exit code")
        // The root's bar spans the whole timeline; each later span starts further right.
        func barStart(_ row: String) -> Int { row.distance(from: row.startIndex, to: row.firstIndex(of: "█")!) }
        func barEnd(_ row: String) -> Int { row.count }
        #expect(barStart(rows[0]) < barStart(rows[4]) && barStart(rows[4]) < barStart(rows[5]))
        #expect(barEnd(rows[0]) == barEnd(rows[6]))
        #expect(rows.allSatisfy { $0.count <= 100 })
    }

    @Test func aFailedTraceEndsWithItsFailedSpansInFull() throws {
        let text = TraceText.show(try Self.whole("a3ce92"), width: 80)
        #expect(text.contains("collect snapshot · db-primary · started 2026-11-18 11:06:45.000 UTC · 5.02 s"))
        #expect(text.contains("3 failed"))
        #expect(text.contains("span 00f067aa0ba902b7  ssh connect db-primary"))
        #expect(text.contains("  status     error: connection refused"))
    }

    @Test func aTraceWhoseRootIsNotStoredSaysSo() throws {
        let text = TraceText.show(try Self.whole("77b34d"), width: 80)
        #expect(text.contains("its root d0d0cafe12345678 is not stored"))
    }

    @Test func aSpanIsShownInItsTracesWaterfallWithItsDetails() throws {
        let spans = try Self.spans()
        let tree = try #require(TraceTree.build(around: SpanID(hex: "5f60c93f1b2a7d4e")!, in: spans))
        let text = TraceText.show(tree, traceSize: 5, width: 80)
        Self.checkWidth(text, 80)
        #expect(text.contains("      ▶ files.grep"))
        #expect(text.contains("span 5f60c93f1b2a7d4e  files.grep"))
        #expect(text.contains("file.path = /srv/app"))
    }
}
