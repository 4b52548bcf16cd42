import AgentTracing
import OrderedJSON
import ValueFormats

/// An attribute value of any type, built from the input.
private func attributeValue(_ input: inout FuzzInput) -> AttributeValue {
    switch input.byte() % 8 {
    case 0: .string(input.string(limit: 600))
    case 1: .bool(input.byte() & 1 == 1)
    case 2: .int(Int64(bitPattern: input.uint64()))
    case 3: .double(Double(bitPattern: input.uint64()))
    case 4: .stringArray((0..<Int(input.byte() % 4)).map { _ in input.string() })
    case 5: .boolArray((0..<Int(input.byte() % 4)).map { _ in input.byte() & 1 == 1 })
    case 6: .intArray((0..<Int(input.byte() % 4)).map { _ in Int64(bitPattern: input.uint64()) })
    default: .doubleArray((0..<Int(input.byte() % 4)).map { _ in Double(bitPattern: input.uint64()) })
    }
}

private func attributes(_ input: inout FuzzInput) -> [Attribute] {
    (0..<Int(input.byte() % 6)).map { _ in Attribute(input.string(limit: 40), attributeValue(&input)) }
}

/// Spans whose every field comes from the input: names, attributes and events with any text, any figures.
private func spans(_ input: inout FuzzInput) -> [FinishedSpan] {
    var spans: [FinishedSpan] = []
    while !input.isEmpty, spans.count < 12 {
        let traceID = TraceID(high: input.uint64(), low: input.uint64() | 1)!
        let spanID = SpanID(input.uint64() | 1)!
        let parent = input.byte() & 1 == 1 ? SpanID(input.uint64() | 1) : nil
        let name = input.string(limit: 300)
        let kind = FinishedSpan.Kind.allCases[Int(input.byte()) % FinishedSpan.Kind.allCases.count]
        let start = input.uint64()
        let end = input.uint64()
        let code = FinishedSpan.Status.Code.allCases[Int(input.byte()) % FinishedSpan.Status.Code.allCases.count]
        let status = FinishedSpan.Status(code: code, message: input.byte() & 1 == 1 ? input.string(limit: 200) : nil)
        let spanAttributes = attributes(&input)
        let events = (0..<Int(input.byte() % 3)).map { _ in
            FinishedSpan.Event(name: input.string(), timeNanoseconds: input.uint64(), attributes: attributes(&input))
        }
        let resource = TraceResource(
            attributes: input.byte() & 1 == 1 ? attributes(&input) : [Attribute("host.name", .string("h"))])
        spans.append(
            FinishedSpan(
                traceID: traceID, spanID: spanID, parentSpanID: parent, traceState: input.string(limit: 32), name: name,
                kind: kind, startNanoseconds: start, endNanoseconds: end, status: status, attributes: spanAttributes,
                events: events, resource: resource, droppedAttributeCount: Int(input.byte())))
    }
    return spans
}

extension Harness {
    /// The OTLP JSON lines encoder and the flat span encoder over spans holding anything a host or a user can put
    /// in them; every line must be JSON under the line limit. Also the inbound `traceparent` and RFC 3339 readers.
    static let otlp = Harness(name: "otlp") { bytes in
        var input = FuzzInput(bytes)
        let header = input.string(limit: 80)
        if let context = TraceParent.parse(header) {
            check(TraceParent.parse(TraceParent.headerValue(for: context)) == context, "traceparent round trip")
        }
        if let nanoseconds = RFC3339.parseNanoseconds(header) {
            check(
                RFC3339.parseNanoseconds(RFC3339.format(nanosecondsSince1970: nanoseconds)) == nanoseconds,
                "RFC 3339 round trip")
        }
        let spans = spans(&input)
        let encoder = OTLPJSONEncoder(scope: InstrumentationScope(version: "fuzz"), maximumLineBytes: 4096)
        var count = 0
        encoder.encodeCounted(spans) { line, spanCount in
            count += spanCount
            check(line.count < 4096, "an OTLP line of \(line.count) bytes, over the limit")
            check(line.last == UInt8(ascii: "\n") && !line.dropLast().contains(UInt8(ascii: "\n")), "not one line")
            check((try? JSONParser.parse(bytes: Array(line.dropLast()))) != nil, "an OTLP line that is no JSON")
        }
        check(count == spans.count, "\(spans.count) spans encoded as \(count)")
        for line in FlatSpanEncoder().encode(spans).split(separator: UInt8(ascii: "\n")) {
            check((try? JSONParser.parse(bytes: Array(line))) != nil, "a flat span line that is no JSON")
        }
    }
}
