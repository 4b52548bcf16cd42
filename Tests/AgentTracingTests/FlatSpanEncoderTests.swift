import AgentTracing
import OrderedJSON
import Testing
import Tracing

@Suite struct FlatSpanEncoderTests {
    let encoder = FlatSpanEncoder()

    @Test func recordedSpansRoundTripThroughTheFlatFormat() throws {
        let (tracer, _) = SampleTraces.tracer()
        SampleTraces.record(into: tracer)
        var context = ServiceContext.topLevel
        tracer.extract(
            ["traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": "a=1"],
            into: &context, using: DictionaryExtractor())
        tracer.startSpan("remote child", context: context, ofKind: .server).end()
        var spans = tracer.finishedSpans()
        spans[0].droppedAttributeCount = 3
        spans[0].droppedEventCount = 1
        spans[0].droppedLinkCount = 2
        spans[0].events.append(
            FinishedSpan.Event(
                name: "crowded", timeNanoseconds: spans[0].startNanoseconds + 1, droppedAttributeCount: 4))
        let lines = SampleTraces.lines(encoder.encode(spans))
        #expect(lines.count == spans.count)
        let decoded = try lines.map { line throws(TracingError) in try FinishedSpan(flatJSONLine: line) }
        #expect(decoded == spans)
    }

    @Test func keysComeInTheDocumentedOrder() throws {
        let (tracer, _) = SampleTraces.tracer()
        SampleTraces.record(into: tracer)
        let exec = try #require(tracer.finishedSpans().first { $0.name == "exec cat" })
        let object = try #require(try JSONParser.parse(encoder.string(exec)).objectValue)
        #expect(
            object.keys == [
                "trace_id", "span_id", "parent_span_id", "name", "kind", "start", "end", "duration_ms", "status",
                "attributes", "events", "links", "resource",
            ])
        #expect(object["kind"] == "client")
        #expect(object["status"] == ["code": "error", "message": "exit status 1"])
        #expect(object["attributes"]?["process.exit.code"] == 1)
        #expect(object["attributes"]?["hostscope.samples"] == [0.5, 1.0, 2.25])
        #expect(object["resource"]?["service.name"] == "hostscope")
    }

    @Test func timesAreRFC3339WithNanosecondsAndDurationIsInMilliseconds() throws {
        let span = FinishedSpan(
            traceID: TraceID(high: 0, low: 1)!, spanID: SpanID(1)!, name: "timed",
            startNanoseconds: 1_795_000_000_123_456_789, endNanoseconds: 1_795_000_001_623_456_789,
            resource: SampleTraces.resource)
        let object = try JSONParser.parse(encoder.string(span))
        #expect(object["start"] == "2026-11-18T11:06:40.123456789Z")
        #expect(object["end"] == "2026-11-18T11:06:41.623456789Z")
        #expect(object["duration_ms"] == 1500.0)
        #expect(object["parent_span_id"] == .null)
        #expect(object["status"] == ["code": "unset"])
    }

    @Test func nonFiniteDoublesBecomeStrings() throws {
        let span = FinishedSpan(
            traceID: TraceID(high: 0, low: 1)!, spanID: SpanID(1)!, name: "odd", startNanoseconds: 1, endNanoseconds: 1,
            attributes: [Attribute("nan", .double(.nan)), Attribute("inf", .doubleArray([-.infinity]))],
            resource: SampleTraces.resource)
        let object = try JSONParser.parse(encoder.string(span))
        #expect(object["attributes"] == ["nan": "NaN", "inf": ["-Infinity"]])
    }

    static let ids = #""trace_id":"00000000000000000000000000000001","span_id":"0000000000000001""#
    static let times = #""start":"2026-01-01T00:00:00Z","end":"2026-01-01T00:00:00Z""#
    static let ok = #""status":{"code":"ok"}"#

    @Test(arguments: [
        "[]",
        #"{"trace_id":"00000000000000000000000000000000","span_id":"0000000000000001","name":"x","kind":"internal","#
            + times + "," + ok + "}",
        "{" + ids + #","name":"x","kind":"sideways","# + times + "," + ok + "}",
        "{" + ids + #","name":"x","kind":"internal","start":"yesterday","end":"2026-01-01T00:00:00Z","# + ok + "}",
        "{" + ids + #","name":"x","kind":"internal","# + times + "," + ok + #","attributes":{"nested":{"a":1}}}"#,
        "{" + ids + #","name":"x","kind":"internal""#,
    ])
    func malformedLinesAreRejectedWithAReason(line: String) {
        #expect {
            _ = try FinishedSpan(flatJSONLine: line)
        } throws: { error in
            (error as? TracingError)?.code == .invalidFlatSpan
        }
    }

    @Test func mixedNumberArraysReadAsDoublesAndEmptyArraysAsStrings() throws {
        let line =
            "{" + Self.ids + #","parent_span_id":null,"name":"x","kind":"internal","start":"2026-01-01T00:00:00Z","#
            + #""end":"2026-01-01T00:00:00.5+00:00","# + Self.ok + #","attributes":{"mixed":[1,2.5],"empty":[]}}"#
        let span = try FinishedSpan(flatJSONLine: line)
        #expect(span.attributes == [Attribute("mixed", .doubleArray([1, 2.5])), Attribute("empty", .stringArray([]))])
        #expect(span.durationNanoseconds == 500_000_000)
    }
}
