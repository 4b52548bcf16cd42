import AgentTracing
import Foundation
import HostStats
import OrderedJSON
import PropertyBased
import Testing
import ValueFormats

@Suite struct RFC3339PropertyTests {
    @Test func aFormattedTimestampParsesToTheSameMillisecond() async {
        // From 1970 to the last millisecond of 9999, the years RFC 3339's four digits can hold.
        await propertyCheck(count: 1000, input: Gen.int64(in: 0...253_402_300_799_999)) { milliseconds in
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            let text = RFC3339.format(date)
            #expect(text.utf8.count == 24 && text.hasSuffix("Z"), "\(text)")
            let parsed = try #require(RFC3339.parse(text), "\(text)")
            #expect((parsed.timeIntervalSince1970 * 1000).rounded() == Double(milliseconds), "\(text)")
        }
    }

    @Test func aParsedTimestampFormatsAsTheSameText() {
        // 0.002 s is 1.9999999999999998 ms in binary: formatting once cut it to .001.
        for text in ["1970-01-01T00:00:00.002Z", "2026-11-21T19:22:00.123Z", "2001-09-09T01:46:40.007Z"] {
            #expect(RFC3339.parse(text).map { RFC3339.format($0) } == text)
        }
    }

    @Test func aNumericOffsetNamesTheSameInstantAsZ() async {
        await propertyCheck(count: 500, input: Gen.int64(in: 86_400...253_402_214_399), Gen.int(in: -1439...1439)) {
            seconds, offsetMinutes in
            let utc = RFC3339.format(Date(timeIntervalSince1970: Double(seconds)))
            // The same instant written in local time at that offset.
            let local = RFC3339.format(Date(timeIntervalSince1970: Double(seconds + Int64(offsetMinutes) * 60)))
            let sign = offsetMinutes < 0 ? "-" : "+"
            let offset = String(format: "%@%02d:%02d", sign, abs(offsetMinutes) / 60, abs(offsetMinutes) % 60)
            let withOffset = String(local.dropLast()) + offset
            #expect(RFC3339.parse(withOffset) == RFC3339.parse(utc), "\(withOffset) against \(utc)")
        }
    }

    @Test func nanosecondTimestampsRoundTripExactlyOverEveryUInt64() async {
        await propertyCheck(count: 1000, input: Gen.uint64()) { nanoseconds in
            let text = RFC3339.format(nanosecondsSince1970: nanoseconds)
            #expect(RFC3339.parseNanoseconds(text) == nanoseconds, "\(text)")
        }
    }
}

@Suite struct OTLPIdentifierPropertyTests {
    @Test func traceAndSpanIDsRoundTripThroughHex() async {
        await propertyCheck(count: 1000, input: Gen.uint64(), Gen.uint64(), Gen.uint64(in: 1...UInt64.max)) {
            high, low, span in
            guard let traceID = TraceID(high: high, low: low) else {
                #expect(high == 0 && low == 0, "only the all-zero trace id is invalid")
                return
            }
            let spanID = try #require(SpanID(span))
            #expect(traceID.hex.utf8.count == 32 && spanID.hex.utf8.count == 16)
            #expect(traceID.hex == traceID.hex.lowercased())
            #expect(TraceID(hex: traceID.hex) == traceID)
            #expect(SpanID(hex: spanID.hex) == spanID)
            let context = SpanContext(traceID: traceID, spanID: spanID)
            let parsed = TraceParent.parse(TraceParent.headerValue(for: context))
            #expect(parsed?.traceID == traceID && parsed?.spanID == spanID && parsed?.traceFlags == context.traceFlags)
        }
    }

    @Test func theOTLPEncoderWritesTheIDsItWasGiven() async {
        await propertyCheck(
            count: 300, input: Gen.uint64(), Gen.uint64(in: 1...UInt64.max), Gen.uint64(in: 1...UInt64.max),
            Gen.uint64(in: 1...UInt64.max)
        ) { high, low, span, parent in
            let traceID = try #require(TraceID(high: high, low: low))
            let span = FinishedSpan(
                traceID: traceID, spanID: try #require(SpanID(span)), parentSpanID: SpanID(parent), name: "exec",
                startNanoseconds: 1, endNanoseconds: 2, resource: .hostscope(version: "1", hostName: "h"))
            let line = OTLPJSONEncoder(scope: InstrumentationScope(version: "1")).encode([span])
            let request = try JSONParser.parse(bytes: Array(line.dropLast()))
            let encoded = request["resourceSpans"]?[0]?["scopeSpans"]?[0]?["spans"]?[0]
            #expect(encoded?["traceId"]?.stringValue == traceID.hex)
            #expect(encoded?["spanId"]?.stringValue == span.spanID.hex)
            #expect(encoded?["parentSpanId"]?.stringValue == SpanID(parent)?.hex)
            #expect(encoded?["traceId"]?.stringValue.flatMap { TraceID(hex: $0) } == traceID)
        }
    }
}
