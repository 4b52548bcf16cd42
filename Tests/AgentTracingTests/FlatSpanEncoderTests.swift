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

/// `FinishedSpan(flatJSONLine:)` reads hostscope's own lines directly and everything else through the JSON tree;
/// both ways must give the same span, or the same refusal.
@Suite struct FlatSpanReaderTests {
    /// The span the general reader makes of a line, or the error it throws.
    static func general(_ line: String) -> Result<FinishedSpan, TracingError> {
        do {
            return .success(try FinishedSpan(flatJSON: try JSONParser.parse(line)))
        } catch let error as TracingError {
            return .failure(error)
        } catch {
            return .failure(TracingError(code: .invalidFlatSpan, message: "\(error)"))
        }
    }

    static func read(_ line: String) -> Result<FinishedSpan, TracingError> {
        Result { () throws(TracingError) in try FinishedSpan(flatJSONLine: line) }
    }

    static func spans() -> [FinishedSpan] {
        let (tracer, _) = SampleTraces.tracer()
        SampleTraces.record(into: tracer)
        tracer.withSpan("edges") { span in
            span.setAttribute("escapes", "\u{0}\u{1F}\u{7F} \" \\ / \u{2028}\u{2029} é 🚀 \u{10FFFF}")
            span.setAttribute("nan", .double(.nan))
            span.setAttribute("infinity", .double(-.infinity))
            span.setAttribute("doubles", .doubleArray([0.1, -0.0, 1e300, 2.5]))
            span.setAttribute("integers", .intArray([Int64.min, -1, 0, Int64.max]))
            span.setAttribute("whole double", .double(3))
            span.setAttribute("tiny", .double(5e-324))
            span.setAttribute("empty", .stringArray([]))
            span.setAttribute("flags", .boolArray([false, true]))
            span.addEvent("event", attributes: [Attribute("k", "v")])
            span.setStatus(.error, message: "failed: \"quoted\"\n")
        }
        var spans = tracer.finishedSpans()
        spans[0].traceState = "vendor=a,other=b"
        spans[0].droppedAttributeCount = 2
        spans[0].droppedEventCount = 1
        spans[0].droppedLinkCount = 3
        return spans
    }

    @Test func hostscopesOwnLinesReadTheSameBothWays() throws {
        for span in Self.spans() {
            let line = FlatSpanEncoder().string(span)
            let general = try Self.general(line).get()
            let read = try Self.read(line).get()
            #expect(read == general, "\(span.name)")
            // NaN never equals itself; compare the line it writes back instead.
            #expect(FlatSpanEncoder().string(read) == line, "\(span.name)")
        }
    }

    @Test(arguments: [
        // Valid JSON, but not as hostscope writes it: spaces, escapes it does not use, other key order.
        "{ " + FlatSpanEncoderTests.ids + #" , "name" : "\u0041\ud83d\ude80\/" ,"kind":"client","#
            + FlatSpanEncoderTests.times + "," + FlatSpanEncoderTests.ok + #","attributes":{"n":-0,"d":1E+2}}"#,
        "{" + FlatSpanEncoderTests.ok + "," + FlatSpanEncoderTests.times + #","kind":"internal","name":"x","#
            + FlatSpanEncoderTests.ids + "}",
        // Numbers JSON refuses, an integer past 64 bits, a lone surrogate, an unknown key, trailing text.
        "{" + FlatSpanEncoderTests.ids + #","name":"x","kind":"internal","# + FlatSpanEncoderTests.times + ","
            + FlatSpanEncoderTests.ok + #","attributes":{"n":+1}}"#,
        "{" + FlatSpanEncoderTests.ids + #","name":"x","kind":"internal","# + FlatSpanEncoderTests.times + ","
            + FlatSpanEncoderTests.ok + #","attributes":{"n":01}}"#,
        "{" + FlatSpanEncoderTests.ids + #","name":"x","kind":"internal","# + FlatSpanEncoderTests.times + ","
            + FlatSpanEncoderTests.ok + #","attributes":{"n":9223372036854775808}}"#,
        "{" + FlatSpanEncoderTests.ids + #","name":"\ud800","kind":"internal","# + FlatSpanEncoderTests.times + ","
            + FlatSpanEncoderTests.ok + "}",
        "{" + FlatSpanEncoderTests.ids + #","name":"x","kind":"internal","# + FlatSpanEncoderTests.times + ","
            + FlatSpanEncoderTests.ok + #","colour":"blue"}"#,
        "{" + FlatSpanEncoderTests.ids + #","name":"x","kind":"internal","# + FlatSpanEncoderTests.times + ","
            + FlatSpanEncoderTests.ok + "} trailing",
    ])
    func otherLinesMeanWhatTheGeneralReaderSays(line: String) {
        switch (Self.read(line), Self.general(line)) {
        case (.success(let read), .success(let general)): #expect(read == general)
        case (.failure(let read), .failure(let general)): #expect(read.code == general.code)
        case (let read, let general): Issue.record("read \(read), the general reader \(general)")
        }
    }
}
