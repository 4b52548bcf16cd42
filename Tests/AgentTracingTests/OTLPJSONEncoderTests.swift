import AgentTracing
import Foundation
import OrderedJSON
import TestSupport
import Testing
import Tracing

@Suite struct OTLPJSONEncoderTests {
    let encoder = OTLPJSONEncoder(scope: SampleTraces.scope)

    /// Every span of every line, with the resource and scope it was listed under.
    struct ListedSpan {
        var resource: JSONValue
        var scope: JSONValue
        var span: JSONValue
    }

    static func listedSpans(_ bytes: [UInt8]) throws -> [ListedSpan] {
        var result: [ListedSpan] = []
        for line in SampleTraces.lines(bytes) {
            let request = try JSONParser.parse(line)
            #expect(request.objectValue?.keys == ["resourceSpans"])
            for resourceSpans in try #require(request["resourceSpans"]?.arrayValue) {
                for scopeSpans in try #require(resourceSpans["scopeSpans"]?.arrayValue) {
                    for span in try #require(scopeSpans["spans"]?.arrayValue) {
                        result.append(
                            ListedSpan(
                                resource: resourceSpans["resource"] ?? .null, scope: scopeSpans["scope"] ?? .null,
                                span: span))
                    }
                }
            }
        }
        return result
    }

    static func isLowercaseHex(_ value: JSONValue?, length: Int) -> Bool {
        guard let text = value?.stringValue, text.utf8.count == length else { return false }
        return text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) } && text.contains { $0 != "0" }
    }

    static func isDecimalString(_ value: JSONValue?) -> Bool {
        guard let text = value?.stringValue, !text.isEmpty else { return false }
        return text.utf8.allSatisfy { (48...57).contains($0) }
    }

    static func attribute(_ key: String, in attributes: JSONValue?) -> JSONValue? {
        attributes?.arrayValue?.first { $0["key"]?.stringValue == key }?["value"]
    }

    @Test func recordedSpansEncodeWithHexIdsStringIntegersAndIntegerEnums() throws {
        let (tracer, _) = SampleTraces.tracer()
        SampleTraces.record(into: tracer)
        let recorded = tracer.finishedSpans()
        let bytes = encoder.encode(recorded, droppedSpanCount: tracer.droppedSpanCount)
        #expect(SampleTraces.lines(bytes).count == 1)
        let listed = try Self.listedSpans(bytes)
        #expect(listed.count == recorded.count)
        for (entry, original) in zip(listed, recorded) {
            let span = entry.span
            #expect(Self.isLowercaseHex(span["traceId"], length: 32))
            #expect(span["traceId"]?.stringValue == original.traceID.hex)
            #expect(Self.isLowercaseHex(span["spanId"], length: 16))
            if original.parentSpanID != nil {
                #expect(Self.isLowercaseHex(span["parentSpanId"], length: 16))
            } else {
                #expect(span["parentSpanId"] == nil)
            }
            #expect(Self.isDecimalString(span["startTimeUnixNano"]))
            #expect(span["endTimeUnixNano"]?.stringValue == String(original.endNanoseconds))
            #expect(span["kind"] == .int(Int64(original.kind.rawValue)))
            #expect(span["name"]?.stringValue == original.name)
            #expect(entry.scope["name"] == "hostscope")
            #expect(entry.scope["version"] == "0.1.0")
            #expect(Self.attribute("service.name", in: entry.resource["attributes"]) == ["stringValue": "hostscope"])
            #expect(Self.attribute("host.name", in: entry.resource["attributes"]) == ["stringValue": "test-host"])
            #expect(Self.attribute("service.version", in: entry.resource["attributes"]) == ["stringValue": "0.1.0"])
        }
        let exec = try #require(listed.first { $0.span["name"] == "exec cat" }?.span)
        #expect(exec["status"] == ["message": "exit status 1", "code": 2])
        #expect(Self.attribute("process.exit.code", in: exec["attributes"]) == ["intValue": "1"])
        #expect(Self.attribute("hostscope.duration.ratio", in: exec["attributes"]) == ["doubleValue": 0.25])
        #expect(Self.attribute("hostscope.retried", in: exec["attributes"]) == ["boolValue": true])
        #expect(
            Self.attribute("hostscope.sizes", in: exec["attributes"])
                == [
                    "arrayValue": [
                        "values": [["intValue": "1"], ["intValue": "-2"], ["intValue": "9223372036854775807"]]
                    ]
                ])
        #expect(
            Self.attribute("process.command_args", in: exec["attributes"])?["arrayValue"]?["values"]?[2]
                == ["stringValue": "/proc/meminfo"])
        #expect(exec["events"]?[0]?["name"] == "stderr")
        #expect(Self.isDecimalString(exec["events"]?[0]?["timeUnixNano"]))
        let chat = try #require(listed.first { $0.span["name"] == "chat" }?.span)
        #expect(chat["status"] == ["code": 1])
        #expect(Self.isLowercaseHex(chat["links"]?[0]?["spanId"], length: 16))
        let tool = try #require(listed.first { $0.span["name"] == "execute_tool grep.search" }?.span)
        #expect(
            Self.attribute("note", in: tool["attributes"])
                == ["stringValue": "quotes \" backslash \\ tab \t newline \n line separator \u{2028} é 🚀"])
        #expect(!SampleTraces.lines(bytes)[0].contains("\u{2028}"))
    }

    @Test func theDroppedSpanCountRidesOnEveryLineAsAScopeAttribute() throws {
        let (tracer, _) = SampleTraces.tracer(capacity: 5)
        for _ in 0..<200 {
            let span = tracer.startSpan("padded")
            span.setAttribute("padding", String(repeating: "x", count: 2_000))
            span.end()
        }
        let small = OTLPJSONEncoder(scope: SampleTraces.scope, maximumLineBytes: 5_000)
        let bytes = small.encode(tracer.finishedSpans(), droppedSpanCount: tracer.droppedSpanCount)
        let listed = try Self.listedSpans(bytes)
        #expect(SampleTraces.lines(bytes).count > 1)
        #expect(
            listed.allSatisfy {
                Self.attribute(OTLPJSONEncoder.droppedSpansAttributeKey, in: $0.scope["attributes"]) == [
                    "intValue": "195"
                ]
            })
        let without = try Self.listedSpans(encoder.encode(tracer.finishedSpans()))
        #expect(without.allSatisfy { $0.scope["attributes"] == nil })
    }

    @Test func largeBatchesSplitIntoLinesUnderOneMebibyte() throws {
        let spans = (1...3_000).map { index in
            FinishedSpan(
                traceID: TraceID(high: 1, low: UInt64(index))!, spanID: SpanID(UInt64(index))!, name: "exec \(index)",
                kind: .client, startNanoseconds: SampleTraces.start, endNanoseconds: SampleTraces.start + 5,
                attributes: [Attribute("output", .string(String(repeating: "o", count: 1_000 + index % 17)))],
                resource: SampleTraces.resource)
        }
        let bytes = encoder.encode(spans, droppedSpanCount: 0)
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast()
        #expect(lines.count >= 3)
        #expect(lines.allSatisfy { $0.count + 1 < 1 << 20 })
        // Lines are filled: all but the last come within one span (about 1.3 KB here) of the limit.
        #expect(lines.dropLast().allSatisfy { $0.count + 1 > (1 << 20) - 1_500 }, "\(lines.map(\.count))")
        let listed = try Self.listedSpans(bytes)
        #expect(listed.map { $0.span["spanId"]?.stringValue } == spans.map { $0.spanID.hex })
    }

    @Test func aGiantSpanIsTruncatedWithAMarkerRatherThanBreakingTheLimit() throws {
        let giant = FinishedSpan(
            traceID: TraceID(high: 9, low: 9)!, spanID: SpanID(9)!, name: "exec dump", kind: .client,
            startNanoseconds: SampleTraces.start, endNanoseconds: SampleTraces.start + 1_000,
            attributes: [
                Attribute("process.exit.code", 0), Attribute("stdout", .string(String(repeating: "a", count: 3 << 20))),
                Attribute("lines", .stringArray(Array(repeating: String(repeating: "b", count: 100_000), count: 20))),
            ],
            events: [
                FinishedSpan.Event(
                    name: "stderr", timeNanoseconds: SampleTraces.start + 1,
                    attributes: [Attribute("line", .string(String(repeating: "c", count: 2 << 20)))])
            ], resource: SampleTraces.resource)
        let small = FinishedSpan(
            traceID: TraceID(high: 9, low: 9)!, spanID: SpanID(10)!, parentSpanID: SpanID(9), name: "small",
            startNanoseconds: SampleTraces.start, endNanoseconds: SampleTraces.start + 1,
            resource: SampleTraces.resource)
        let bytes = encoder.encode([small, giant, small])
        let lines = SampleTraces.lines(bytes)
        // The giant cannot join the first line, so it starts the second; the last span fits after it.
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0.utf8.count + 1 < 1 << 20 })
        let listed = try Self.listedSpans(bytes)
        let encoded = try #require(listed.first { $0.span["name"] == "exec dump" }?.span)
        #expect(Self.attribute("process.exit.code", in: encoded["attributes"]) == ["intValue": "0"])
        let stdout = try #require(Self.attribute("stdout", in: encoded["attributes"])?["stringValue"]?.stringValue)
        #expect(stdout.hasPrefix("aaaa"))
        #expect(stdout.contains("…[truncated "))
        // The cut keeps as much as fits: the line ends up close to the limit, not at a fraction of it.
        #expect(lines[1].utf8.count > (1 << 20) * 3 / 4)
        #expect(
            encoded["events"]?[0]?["attributes"]?[0]?["value"]?["stringValue"]?.stringValue?.contains("…[truncated ")
                == true)
    }

    /// Found by fuzzing (Fixtures/fuzz/crashes/otlp/): a resource's attributes were written whole and a span's own
    /// strings were never cut below 256 bytes, so control characters (six bytes each once escaped) in both left
    /// no room for the span and the encoder stopped the process on its own precondition.
    @Test func aHugeResourceAndEscapedNamesStillFitTheSmallestLine() throws {
        let controls = String(repeating: "\u{1}", count: 600)
        let resource = TraceResource(attributes: (0..<5).map { Attribute("key.\($0)", .string(controls)) })
        let span = FinishedSpan(
            traceID: TraceID(high: 3, low: 3)!, spanID: SpanID(3)!, traceState: String(controls.prefix(32)),
            name: String(controls.prefix(300)), startNanoseconds: 1, endNanoseconds: 2,
            status: FinishedSpan.Status(code: .error, message: String(controls.prefix(200))),
            attributes: [Attribute("a", .string(controls))], resource: resource)
        let small = OTLPJSONEncoder(scope: SampleTraces.scope, maximumLineBytes: 4096)
        var lines = 0
        var spans = 0
        small.encodeCounted([span, span]) { line, count in
            lines += 1
            spans += count
            #expect(line.count < 4096)
        }
        #expect(spans == 2)
        let listed = try Self.listedSpans(small.encode([span]))
        let written = try #require(listed.first)
        #expect(written.span["traceId"] == "00000000000000030000000000000003")
        #expect(written.span["name"]?.stringValue?.contains("…[truncated ") == true)
        // Every resource attribute is kept (values cut) or counted as dropped.
        let kept = written.resource["attributes"]?.arrayValue?.count ?? 0
        let dropped = Int(written.resource["droppedAttributesCount"]?.intValue ?? 0)
        #expect(kept + dropped == 5)
        #expect(kept > 0)
        #expect(lines >= 1)
    }

    @Test func aSpanWithTooManyAttributesDropsAndCountsTheRest() throws {
        let attributes = (0..<60_000).map { Attribute("attribute.number.\($0)", .string("value \($0)")) }
        let crowded = FinishedSpan(
            traceID: TraceID(high: 1, low: 1)!, spanID: SpanID(1)!, name: "crowded", startNanoseconds: 1,
            endNanoseconds: 2, attributes: attributes, resource: SampleTraces.resource)
        let bytes = encoder.encode([crowded])
        #expect(bytes.count < 1 << 20)
        let span = try #require(try Self.listedSpans(bytes).first?.span)
        let kept = span["attributes"]?.arrayValue?.count ?? 0
        #expect(kept > 1_000 && kept < 60_000)
        #expect(span["droppedAttributesCount"] == .int(Int64(60_000 - kept)))
    }

    @Test func spansAreGroupedByResourceInOrderOfFirstAppearance() throws {
        let other = TraceResource.hostscope(version: "0.1.0", hostName: "other-host")
        func span(_ id: UInt64, _ resource: TraceResource) -> FinishedSpan {
            FinishedSpan(
                traceID: TraceID(high: 0, low: 1)!, spanID: SpanID(id)!, name: "s\(id)", startNanoseconds: 1,
                endNanoseconds: 2, resource: resource)
        }
        let bytes = encoder.encode([span(1, SampleTraces.resource), span(2, other), span(3, SampleTraces.resource)])
        let request = try JSONParser.parse(try #require(SampleTraces.lines(bytes).first))
        let groups = try #require(request["resourceSpans"]?.arrayValue)
        #expect(groups.count == 2)
        #expect(groups[0]["scopeSpans"]?[0]?["spans"]?.arrayValue?.map { $0["name"] } == ["s1", "s3"])
        #expect(groups[1]["scopeSpans"]?[0]?["spans"]?.arrayValue?.map { $0["name"] } == ["s2"])
        #expect(Self.attribute("host.name", in: groups[1]["resource"]?["attributes"]) == ["stringValue": "other-host"])
    }

    @Test func noSpansWriteNoLines() {
        #expect(encoder.encode([FinishedSpan]()).isEmpty)
    }

    @Test(.enabled(if: Repository.shared != nil, "the shared folder with validate_otlp_ndjson.py is absent; skipped"))
    func realExportsPassTheOpenTelemetryProtoValidatorWithNoOrphans() throws {
        let (tracer, _) = SampleTraces.tracer(capacity: 20_000)
        for _ in 0..<200 { SampleTraces.record(into: tracer) }
        let big = tracer.startSpan("exec with a huge output")
        big.setAttribute("process.command_args", ["cat", "/var/log/big.log"])
        big.end()
        var spans = tracer.finishedSpans()
        // A recorded span whose output exceeds a line, as if recorded with a generous string limit.
        if let index = spans.firstIndex(where: { $0.name == "exec with a huge output" }) {
            spans[index].attributes.append(Attribute("stdout", .string(String(repeating: "z", count: 2 << 20))))
        }
        let small = OTLPJSONEncoder(scope: SampleTraces.scope, maximumLineBytes: 64 * 1024)
        for (name, bytes) in [
            ("default", encoder.encode(spans, droppedSpanCount: tracer.droppedSpanCount)),
            ("small-lines", small.encode(spans, droppedSpanCount: 7)),
        ] {
            let file = try SampleTraces.temporaryFile("\(name).jsonl", bytes)
            defer { try? FileManager.default.removeItem(at: file) }
            let result = try #require(try SampleTraces.validate(file))
            let lineCount = SampleTraces.lines(bytes).count
            #expect(lineCount > 1)
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains("\n\(lineCount) passed, 0 failed"), "\(result.output)")
            #expect(result.output.contains(" 0 orphan spans"), "\(result.output)")
            #expect(result.output.contains("\(spans.count) spans in"), "\(result.output)")
        }
    }
}
