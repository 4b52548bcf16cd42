import Foundation
import Testing

@testable import Storage

@Suite struct SpanStoreTests {
    static let base: Int64 = 1_795_000_000_000_000_000

    /// A span starting `start` milliseconds after ``base`` and lasting 2 ms.
    static func span(
        _ spanID: String, trace: String = "0af7651916cd43dd8448eb211c80319c", parent: String? = nil,
        name: String = "exec", kind: String = "ssh", start: Int64, status: SpanStatusCode = .ok,
        host: String? = "web1"
    ) -> StoredSpan {
        let startNano = base + start * 1_000_000
        return StoredSpan(
            traceID: trace, spanID: spanID, parentSpanID: parent, name: name, kind: kind, startUnixNano: startNano,
            endUnixNano: startNano + 2_000_000, statusCode: status, host: host, service: "hostscope",
            json: #"{"span_id":"\#(spanID)","name":"\#(name)"}"#)
    }

    static func date(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(base / 1_000_000 + milliseconds) / 1000)
    }

    @Test func spansReadBackWithEveryField() async throws {
        let directory = try TemporaryDirectory()
        let database = try await StorageDatabase.fresh(in: directory)
        var original = Self.span("B7AD6B7169203331", parent: "00F067AA0BA902B7", start: 3, status: .error)
        original.service = nil
        #expect(try await database.spans.insert([original]) == 1)
        let stored = try #require(try await database.spans.span(id: "b7ad6b7169203331"))
        #expect(stored.spanID == "b7ad6b7169203331", "ids are stored as lower-case hex")
        #expect(stored.parentSpanID == "00f067aa0ba902b7")
        #expect(stored.traceID == original.traceID)
        #expect(stored.name == "exec")
        #expect(stored.kind == "ssh")
        #expect(stored.startUnixNano == original.startUnixNano)
        #expect(stored.endUnixNano == original.endUnixNano)
        #expect(stored.durationNanoseconds == 2_000_000)
        #expect(stored.statusCode == .error)
        #expect(stored.host == "web1")
        #expect(stored.service == nil)
        #expect(stored.json == original.json)
    }

    @Test func aSpanIsFoundByAUniquePrefixAndAnAmbiguousOneIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let database = try await StorageDatabase.fresh(in: directory)
        try await database.spans.insert([
            Self.span("aaaa000000000001", start: 1), Self.span("aaaa000000000002", start: 2),
            Self.span("abcd000000000003", start: 3), Self.span("aaaa", start: 4),
        ])
        #expect(try await database.spans.span(id: "abc")?.spanID == "abcd000000000003")
        #expect(try await database.spans.span(id: "AAAA000000000002")?.spanID == "aaaa000000000002")
        #expect(try await database.spans.span(id: "aaaa")?.spanID == "aaaa", "an exact id wins over longer ones")
        #expect(try await database.spans.span(id: "ff") == nil)
        do {
            _ = try await database.spans.span(id: "aaaa0")
            Issue.record("an ambiguous prefix was accepted")
        } catch {
            #expect(error.code == .ambiguousPrefix)
            #expect(error.message.contains("aaaa000000000001, aaaa000000000002"))
        }
        do {
            _ = try await database.spans.span(id: "web1%")
            Issue.record("a non-hex id was accepted")
        } catch {
            #expect(error.code == .invalidArgument)
        }
    }

    @Test func aTraceListsAllItsSpansByStartTime() async throws {
        let directory = try TemporaryDirectory()
        let database = try await StorageDatabase.fresh(in: directory)
        let trace = "4bf92f3577b34da6a3ce929d0e0e4736"
        try await database.spans.insert([
            Self.span("0000000000000003", trace: trace, parent: "0000000000000001", start: 30),
            Self.span("0000000000000001", trace: trace, name: "snapshot", kind: "snapshot", start: 10),
            Self.span("0000000000000002", trace: trace, parent: "0000000000000001", start: 20),
            Self.span("0000000000000009", start: 15),
        ])
        let spans = try await database.spans.trace(trace.uppercased())
        #expect(spans.map(\.spanID) == ["0000000000000001", "0000000000000002", "0000000000000003"])
        #expect(spans[0].parentSpanID == nil)
        #expect(try await database.spans.trace("ffffffffffffffffffffffffffffffff").isEmpty)
    }

    @Test func recentSpansComeNewestFirstAndFilter() async throws {
        let directory = try TemporaryDirectory()
        let database = try await StorageDatabase.fresh(in: directory)
        try await database.spans.insert([
            Self.span("0000000000000001", name: "ssh.connect", kind: "ssh", start: 1, host: "web1"),
            Self.span("0000000000000002", name: "exec", kind: "ssh", start: 2, status: .error, host: "web2"),
            Self.span("0000000000000003", name: "POST", kind: "http", start: 3, host: nil),
            Self.span("0000000000000004", name: "grep.search", kind: "tool", start: 4, status: .error, host: "web1"),
            Self.span("0000000000000005", name: "exec", kind: "ssh", start: 5, host: "web1"),
        ])
        let spans = database.spans
        #expect(try await spans.recent().map(\.spanID.last) == ["5", "4", "3", "2", "1"])
        #expect(try await spans.recent(SpanFilter(limit: 2)).map(\.spanID.last) == ["5", "4"])
        #expect(try await spans.recent(SpanFilter(since: Self.date(3))).map(\.spanID.last) == ["5", "4", "3"])
        #expect(try await spans.recent(SpanFilter(host: "web1")).map(\.spanID.last) == ["5", "4", "1"])
        #expect(try await spans.recent(SpanFilter(namePrefix: "exe")).map(\.spanID.last) == ["5", "2"])
        #expect(try await spans.recent(SpanFilter(namePrefix: "%")).isEmpty, "no LIKE wildcards")
        #expect(try await spans.recent(SpanFilter(kind: "tool")).map(\.name) == ["grep.search"])
        #expect(try await spans.recent(SpanFilter(errorsOnly: true)).map(\.spanID.last) == ["4", "2"])
        #expect(
            try await spans.recent(SpanFilter(host: "web1", kind: "ssh", errorsOnly: false, limit: 1)).map(
                \.spanID.last)
                == ["5"])
        #expect(try await spans.recent(SpanFilter(limit: 0)).isEmpty)
    }

    @Test func aRetriedBatchDoesNotDuplicateSpansAndCountersAddUp() async throws {
        let directory = try TemporaryDirectory()
        let database = try await StorageDatabase.fresh(in: directory)
        let batch = (1...5).map { Self.span(String(format: "%016x", $0), start: Int64($0)) }
        #expect(try await database.spans.insert(batch, incrementing: ["dropped_spans": 2]) == 5)
        #expect(
            try await database.spans.insert(
                batch + [Self.span("00000000000000ff", start: 9)],
                incrementing: ["dropped_spans": 3]) == 1)
        #expect(try await database.spans.count() == 6)
        #expect(try await database.meta.integer("dropped_spans") == 5)
        // Counters alone are written too.
        #expect(try await database.spans.insert([], incrementing: ["dropped_spans": 1]) == 0)
        #expect(try await database.meta.integer("dropped_spans") == 6)
        do {
            try await database.spans.insert([Self.span("", start: 1)])
            Issue.record("a span without an id was stored")
        } catch {
            #expect(error.code == .invalidArgument)
        }
    }

    @Test func exportPagesWalkATimeRangeOldestFirst() async throws {
        let directory = try TemporaryDirectory()
        let database = try await StorageDatabase.fresh(in: directory)
        // 2,500 spans, five to a millisecond, inserted in shuffled order.
        var spans = (0..<2_500).map { Self.span(String(format: "%016x", $0 + 1), start: Int64($0 / 5)) }
        spans.shuffle()
        try await database.spans.insert(spans)

        var exported: [StoredSpan] = []
        for try await span in database.spans.spans(pageSize: 333) { exported.append(span) }
        #expect(exported.count == 2_500)
        #expect(Set(exported.map(\.spanID)).count == 2_500)
        #expect(exported.map(\.startUnixNano) == exported.map(\.startUnixNano).sorted())

        var ranged: [StoredSpan] = []
        for try await span in database.spans.spans(since: Self.date(100), until: Self.date(199), pageSize: 64) {
            ranged.append(span)
        }
        #expect(ranged.count == 500)
        #expect(ranged.first?.startUnixNano == Self.base + 100_000_000)
        #expect(ranged.last?.startUnixNano == Self.base + 199_000_000)
    }

    @Test func pushPagesCarryStoredEncodingsAndTheJSONOfOlderSpansAndLeaveOutExportRequests() async throws {
        let directory = try TemporaryDirectory()
        let database = try await StorageDatabase.fresh(in: directory)
        let resources: [[UInt8]] = [[0x0a, 0x03, 0x0a, 0x01, 0x61], [0x0a, 0x03, 0x0a, 0x01, 0x62]]
        var spans: [StoredSpan] = []
        for index in 0..<700 {
            var span = Self.span(String(format: "%016x", index + 1), start: Int64(index / 3))
            if index % 7 != 0 {
                // Every seventh as a hostscope before schema 5 stored it: JSON only.
                let message = [UInt8(0x2a), 0x05] + Array(String(format: "s%04d", index).utf8)
                span.protobuf = StoredSpan.Protobuf(span: message, resource: resources[index % 5 == 0 ? 1 : 0])
                span.isExportRequest = index % 7 == 1
            }
            spans.append(span)
        }
        try await database.spans.insert(spans.shuffled())

        // Each span read back as (its index in `spans`, its entry, its page); spans of one start come in row order.
        var read: [(index: Int, entry: OTLPSpanPage.Entry, page: OTLPSpanPage)] = []
        var cursor: SpanCursor?
        var pages = 0
        repeat {
            let page = try await database.spans.otlpPage(after: cursor, limit: 64)
            #expect(page.entries.count <= 64)
            #expect(Set(page.resources).count == page.resources.count, "each resource once per page")
            for entry in page.entries {
                switch entry {
                case .encoded(let range, _):
                    let digits = String(decoding: page.spanBytes[range].dropFirst(3), as: UTF8.self)
                    read.append((Int(digits) ?? -1, entry, page))
                case .flat(let json):
                    let id = json.dropFirst(#"{"span_id":""#.count).prefix(16)
                    read.append(((Int(id, radix: 16) ?? 0) - 1, entry, page))
                }
            }
            cursor = page.next
            pages += 1
        } while cursor != nil
        let expected = spans.indices.filter { $0 % 7 != 1 }
        #expect(read.map(\.index).sorted() == expected, "every span once, but export requests")
        #expect(read.map { $0.index / 3 } == read.map { $0.index / 3 }.sorted(), "oldest first")
        #expect(pages == (expected.count + 63) / 64)
        for got in read where spans.indices.contains(got.index) {
            let span = spans[got.index]
            switch got.entry {
            case .encoded(_, let resource):
                #expect(got.index % 7 != 0)
                #expect(got.page.resources[resource] == span.protobuf?.resource)
            case .flat(let json):
                #expect(got.index % 7 == 0)
                #expect(json == span.json)
            }
        }

        let ranged = try await database.spans.otlpPage(since: Self.date(100), until: Self.date(109), limit: 100)
        #expect(ranged.entries.count == expected.count(where: { (300..<330).contains($0) }))
        #expect(ranged.next == nil)
    }

    @Test func pruneRemovesExactlyTheSpansThatStartedBeforeTheCutoff() async throws {
        let directory = try TemporaryDirectory()
        let database = try await StorageDatabase.fresh(in: directory)
        try await database.spans.insert(
            (0..<(SpanStore.pruneChunk + 100)).map {
                Self.span(String(format: "%016x", $0 + 1), start: Int64($0))
            })
        #expect(
            try await database.spans.prune(olderThan: Self.date(Int64(SpanStore.pruneChunk))) == SpanStore.pruneChunk)
        #expect(try await database.spans.count() == 100)
        let oldest = try await database.spans.page(limit: 1).spans.first
        #expect(oldest?.startUnixNano == Self.base + Int64(SpanStore.pruneChunk) * 1_000_000)
    }

    @Test func theTracesOfTheNewestMatchingSpansComeBackWithAllTheirSpans() async throws {
        let directory = try TemporaryDirectory()
        let database = try await StorageDatabase.fresh(in: directory)
        // Three traces of three spans each, their spans interleaved in time; only trace 2 has an error.
        var spans: [StoredSpan] = []
        for index in 0..<9 {
            let trace = "0af7651916cd43dd8448eb211c80319\(index % 3)"
            spans.append(
                Self.span(
                    "000000000000000\(index)", trace: trace, name: index % 3 == 2 ? "collect snapshot" : "exec",
                    kind: index % 3 == 2 ? "snapshot" : "ssh", start: Int64(index),
                    status: index == 5 ? .error : .ok, host: index % 3 == 1 ? "db1" : "web1"))
        }
        try await database.spans.insert(spans)
        let newest = try await database.spans.recentTraceIDs(SpanFilter(limit: 2))
        #expect(newest == ["0af7651916cd43dd8448eb211c803192", "0af7651916cd43dd8448eb211c803191"])
        #expect(try await database.spans.recentTraceIDs(SpanFilter(limit: 10)).count == 3)
        #expect(
            try await database.spans.recentTraceIDs(SpanFilter(errorsOnly: true, limit: 10))
                == ["0af7651916cd43dd8448eb211c803192"])
        #expect(
            try await database.spans.recentTraceIDs(SpanFilter(host: "db1", limit: 10))
                == ["0af7651916cd43dd8448eb211c803191"])
        #expect(
            try await database.spans.recentTraceIDs(SpanFilter(since: Self.date(7), limit: 10))
                == ["0af7651916cd43dd8448eb211c803192", "0af7651916cd43dd8448eb211c803191"])
        let traces = try await database.spans.traces(newest)
        #expect(traces.count == 2)
        #expect(
            traces["0af7651916cd43dd8448eb211c803192"]?.map(\.spanID) == [
                "0000000000000002", "0000000000000005", "0000000000000008",
            ])
    }

    @Test func idsAreLookedUpAmongSpansAndTracesByPrefix() async throws {
        let directory = try TemporaryDirectory()
        let database = try await StorageDatabase.fresh(in: directory)
        try await database.spans.insert([
            Self.span("abcd000000000001", trace: "abce0000000000000000000000000001", start: 1),
            Self.span("abcd000000000002", trace: "abce0000000000000000000000000001", start: 2),
            Self.span("1234000000000003", trace: "ffff0000000000000000000000000002", start: 3),
        ])
        let both = try await database.spans.ids(matching: "ABC")
        #expect(both.spans == ["abcd000000000001", "abcd000000000002"])
        #expect(both.traces == ["abce0000000000000000000000000001"], "a trace is named once however many spans it has")
        let trace = try await database.spans.ids(matching: "ff")
        #expect(trace.spans.isEmpty && trace.traces == ["ffff0000000000000000000000000002"])
        do {
            _ = try await database.spans.ids(matching: "xyz")
            Issue.record("a prefix that is not hex was accepted")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("not a trace or span id"))
        }
    }
}
