/// Writes finished spans as OTLP JSON lines (`hostscope trace export --format otlp`).
///
/// Each line is one `ExportTraceServiceRequest` (`{"resourceSpans":[…]}`), as the OpenTelemetry
/// Collector's file exporter writes and its `otlpjsonfile` receiver reads:
/// - spans grouped by resource (in order of first appearance), then under one scope (``scope``);
/// - lowerCamelCase keys, lowercase hex ids, 64-bit integers (times, `intValue`) as decimal
///   strings, `kind` and `status.code` as integers, attributes as typed `AnyValue`s;
/// - every line, newline included, shorter than ``maximumLineBytes``: a batch that does not fit
///   continues on the next line; a single span too large for a line has its longest strings cut
///   (each ending in ``SpanLimits/truncationMarker(droppedBytes:)``) and, if that is not enough,
///   its last events, links and attributes dropped and counted in `dropped*Count`;
/// - the tracer's dropped-span count, when given, rides on every line as the scope attribute
///   ``droppedSpansAttributeKey`` (an `intValue`, cumulative since the tracer started), so that the
///   next export after an overflow shows it and a reader can difference consecutive values. It is
///   a scope attribute rather than a resource attribute because it changes over time, and backends
///   treat a resource whose attributes change as a new resource.
///
/// The encoder writes bytes directly into the line buffer; nothing is built as a tree.
public struct OTLPJSONEncoder: Sendable {
    /// The scope every span is exported under.
    public var scope: InstrumentationScope
    /// A line, newline included, is always shorter than this; 1 MiB by default.
    public var maximumLineBytes: Int

    /// The scope attribute that carries the tracer's dropped-span count.
    public static let droppedSpansAttributeKey = "hostscope.tracer.dropped_spans"

    /// An encoder for the given scope; `maximumLineBytes` must leave room for one minimal span.
    public init(scope: InstrumentationScope, maximumLineBytes: Int = 1 << 20) {
        precondition(maximumLineBytes >= 4096, "an OTLP line needs room for at least one span")
        self.scope = scope
        self.maximumLineBytes = maximumLineBytes
    }

    /// All lines for the spans, each ending in a newline.
    public func encode(_ spans: some Collection<FinishedSpan>, droppedSpanCount: UInt64? = nil) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(spans.count * 512)
        encode(spans, droppedSpanCount: droppedSpanCount) { line in output.append(contentsOf: line) }
        return output
    }

    /// Encodes the spans, handing each complete line (newline included) to `emit`.
    ///
    /// The buffer passed to `emit` is reused for the next line; copy what must outlive the call.
    public func encode<E: Error>(
        _ spans: some Collection<FinishedSpan>, droppedSpanCount: UInt64? = nil,
        emit: ([UInt8]) throws(E) -> Void
    ) throws(E) {
        try encodeCounted(spans, droppedSpanCount: droppedSpanCount) { (line, _) throws(E) in try emit(line) }
    }

    /// Encodes the spans like ``encode(_:droppedSpanCount:emit:)``, also telling how many spans each line
    /// holds (an OTLP/HTTP exporter posts one line per request and counts what each request carried).
    public func encodeCounted<E: Error>(
        _ spans: some Collection<FinishedSpan>, droppedSpanCount: UInt64? = nil,
        emit: (_ line: [UInt8], _ spanCount: Int) throws(E) -> Void
    ) throws(E) {
        guard !spans.isEmpty else { return }
        var writer = LineWriter(encoder: self, droppedSpanCount: droppedSpanCount)
        for (index, group) in Self.groupedByResource(spans).enumerated() {
            let header = writer.resourceHeader(group.resource)
            for span in group.spans {
                if let (line, count) = writer.add(span, group: index, header: header) {
                    try emit(line, count)
                }
            }
        }
        if let (line, count) = writer.finish() {
            try emit(line, count)
        }
    }

    /// Spans of one resource, in the order they came.
    struct ResourceGroup {
        var resource: TraceResource
        var spans: [FinishedSpan]
    }

    /// The spans grouped by resource, groups in order of first appearance (the protobuf encoder's too).
    static func groupedByResource(_ spans: some Collection<FinishedSpan>) -> [ResourceGroup] {
        var groups: [ResourceGroup] = []
        for span in spans {
            // Nearly always one resource; comparing with the last group first makes that one check.
            if let last = groups.indices.last, groups[last].resource == span.resource {
                groups[last].spans.append(span)
            } else if let index = groups.firstIndex(where: { $0.resource == span.resource }) {
                groups[index].spans.append(span)
            } else {
                groups.append(ResourceGroup(resource: span.resource, spans: [span]))
            }
        }
        return groups
    }
}

/// How much of a span to write when it does not fit a line whole.
struct SpanTruncation {
    var maximumStringBytes = Int.max
    var maximumAttributes = Int.max
    var maximumEvents = Int.max
    var maximumLinks = Int.max

    static let none = SpanTruncation()

    /// The next, smaller budget, or `nil` when nothing is left to cut.
    func reduced(for span: FinishedSpan, lineBytes: Int) -> SpanTruncation? {
        var next = self
        if maximumStringBytes == .max {
            next.maximumStringBytes = lineBytes / 2
        } else if maximumStringBytes > 256 {
            next.maximumStringBytes = maximumStringBytes / 2
        } else if min(maximumEvents, span.events.count) > 0 {
            next.maximumEvents = min(maximumEvents, span.events.count) / 2
        } else if min(maximumLinks, span.links.count) > 0 {
            next.maximumLinks = min(maximumLinks, span.links.count) / 2
        } else if min(maximumAttributes, span.attributes.count) > 0 {
            next.maximumAttributes = min(maximumAttributes, span.attributes.count) / 2
        } else if maximumStringBytes > Self.shortestStringBytes {
            // What is left are the span's own strings (name, trace state, status message), each of which can
            // grow sixfold when escaped: cut them further rather than break the line limit.
            next.maximumStringBytes = maximumStringBytes / 2
        } else {
            return nil
        }
        return next
    }

    /// The shortest a string is ever cut to: the truncation marker alone, about this long.
    static let shortestStringBytes = 16
}

/// Fills lines span by span and decides where one line ends.
private struct LineWriter {
    let encoder: OTLPJSONEncoder
    let droppedSpanCount: UInt64?
    var line: [UInt8] = []
    /// The resource group whose `spans` array is open in the current line.
    var openGroup: Int?
    var spansInLine = 0

    /// `]}]}` closes spans, the scope entry, scopeSpans and the resource entry; `]}` closes
    /// resourceSpans and the request; then the newline.
    static let closing: StaticString = "]}]}]}\n"
    static let closingBytes = 7

    init(encoder: OTLPJSONEncoder, droppedSpanCount: UInt64?) {
        self.encoder = encoder
        self.droppedSpanCount = droppedSpanCount
        line.reserveCapacity(min(encoder.maximumLineBytes, 256 * 1024))
    }

    /// `{"resource":{…},"scopeSpans":[{"scope":{…},"spans":[`, written once per resource.
    ///
    /// A resource's attributes come from the user's environment (`OTEL_RESOURCE_ATTRIBUTES`) and can be of
    /// any length; the header keeps within a quarter of a line, its longest values cut and then its last
    /// attributes dropped and counted, so that three quarters are always left for spans.
    func resourceHeader(_ resource: TraceResource) -> [UInt8] {
        var truncation = SpanTruncation.none
        var bytes = resourceHeader(resource, truncation)
        while bytes.count > encoder.maximumLineBytes / 4 {
            if truncation.maximumStringBytes == .max {
                truncation.maximumStringBytes = encoder.maximumLineBytes / 8
            } else if truncation.maximumStringBytes > SpanTruncation.shortestStringBytes {
                truncation.maximumStringBytes /= 2
            } else if min(truncation.maximumAttributes, resource.attributes.count) > 0 {
                truncation.maximumAttributes = min(truncation.maximumAttributes, resource.attributes.count) / 2
            } else {
                break
            }
            bytes = resourceHeader(resource, truncation)
        }
        return bytes
    }

    private func resourceHeader(_ resource: TraceResource, _ truncation: SpanTruncation) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendRaw("{\"resource\":{")
        let attributes = resource.attributes.prefix(truncation.maximumAttributes)
        if !attributes.isEmpty {
            bytes.appendRaw("\"attributes\":")
            bytes.appendOTLPAttributes(attributes, truncation: truncation)
        }
        if attributes.count < resource.attributes.count {
            bytes.appendRaw(attributes.isEmpty ? "\"droppedAttributesCount\":" : ",\"droppedAttributesCount\":")
            bytes.appendDecimal(UInt64(resource.attributes.count - attributes.count))
        }
        bytes.appendRaw("},\"scopeSpans\":[{\"scope\":{\"name\":")
        bytes.appendJSONString(encoder.scope.name)
        bytes.appendRaw(",\"version\":")
        bytes.appendJSONString(encoder.scope.version)
        if let droppedSpanCount {
            bytes.appendRaw(",\"attributes\":[{\"key\":")
            bytes.appendJSONString(OTLPJSONEncoder.droppedSpansAttributeKey)
            bytes.appendRaw(",\"value\":{\"intValue\":")
            bytes.appendQuotedDecimal(droppedSpanCount)
            bytes.appendRaw("}}]")
        }
        bytes.appendRaw("},\"spans\":[")
        return bytes
    }

    private func fits() -> Bool {
        line.count + Self.closingBytes < encoder.maximumLineBytes
    }

    /// Adds a span; returns a completed line (and its span count) when the span had to start a new one.
    mutating func add(_ span: FinishedSpan, group: Int, header: [UInt8]) -> ([UInt8], Int)? {
        let mark = line.count
        let previousGroup = openGroup
        appendSeparator(group: group, header: header)
        let spanStart = line.count
        line.appendOTLPSpan(span, truncation: .none)
        var completed: ([UInt8], Int)?
        if !fits() {
            if spansInLine > 0 {
                // Undo this span (and a resource switch it caused), close the line, start afresh.
                line.removeSubrange(mark...)
                openGroup = previousGroup
                completed = closeLine()
                appendSeparator(group: group, header: header)
                let start = line.count
                line.appendOTLPSpan(span, truncation: .none)
                if !fits() { writeTruncated(span, from: start) }
            } else {
                writeTruncated(span, from: spanStart)
            }
        }
        spansInLine += 1
        return completed
    }

    /// Rewrites the span starting at `start` with ever smaller budgets until the line fits.
    private mutating func writeTruncated(_ span: FinishedSpan, from start: Int) {
        var truncation = SpanTruncation.none
        var failing = truncation
        while !fits(), let next = truncation.reduced(for: span, lineBytes: encoder.maximumLineBytes) {
            failing = truncation
            truncation = next
            rewrite(span, from: start, truncation)
        }
        precondition(fits(), "a span with nothing left to cut still exceeds the line limit")
        guard truncation.maximumStringBytes != .max, truncation.maximumEvents == .max, truncation.maximumLinks == .max,
            truncation.maximumAttributes == .max
        else { return }
        // Halving the string budget can overshoot by half; search between the budget that fits and
        // the one that did not for the longest strings that still fit.
        var low = truncation.maximumStringBytes
        var high = min(failing.maximumStringBytes, encoder.maximumLineBytes)
        var best = truncation
        while high - low > max(64, low / 32) {
            var candidate = truncation
            candidate.maximumStringBytes = low + (high - low) / 2
            rewrite(span, from: start, candidate)
            if fits() {
                low = candidate.maximumStringBytes
                best = candidate
            } else {
                high = candidate.maximumStringBytes
            }
        }
        rewrite(span, from: start, best)
    }

    private mutating func rewrite(_ span: FinishedSpan, from start: Int, _ truncation: SpanTruncation) {
        line.removeSubrange(start...)
        line.appendOTLPSpan(span, truncation: truncation)
    }

    /// Opens the line and/or the resource as needed, or writes the comma between spans.
    private mutating func appendSeparator(group: Int, header: [UInt8]) {
        if openGroup == nil {
            line.appendRaw("{\"resourceSpans\":[")
            line.append(contentsOf: header)
            openGroup = group
        } else if openGroup != group {
            line.appendRaw("]}]},")
            line.append(contentsOf: header)
            openGroup = group
        } else {
            line.append(UInt8(ascii: ","))
        }
    }

    private mutating func closeLine() -> ([UInt8], Int) {
        line.appendRaw(Self.closing)
        let completed = (line, spansInLine)
        line.removeAll(keepingCapacity: true)
        openGroup = nil
        spansInLine = 0
        return completed
    }

    mutating func finish() -> ([UInt8], Int)? {
        spansInLine > 0 ? closeLine() : nil
    }
}

extension Array where Element == UInt8 {
    /// One OTLP `Span` object.
    mutating func appendOTLPSpan(_ span: FinishedSpan, truncation: SpanTruncation) {
        let cap = truncation.maximumStringBytes
        appendRaw("{\"traceId\":")
        appendQuotedHex(span.traceID)
        appendRaw(",\"spanId\":")
        appendQuotedHex(span.spanID)
        if let parent = span.parentSpanID {
            appendRaw(",\"parentSpanId\":")
            appendQuotedHex(parent)
        }
        if !span.traceState.isEmpty {
            appendRaw(",\"traceState\":")
            appendJSONString(span.traceState, maximumBytes: cap)
        }
        appendRaw(",\"name\":")
        appendJSONString(span.name, maximumBytes: cap)
        appendRaw(",\"kind\":")
        appendDecimal(UInt64(span.kind.rawValue))
        appendRaw(",\"startTimeUnixNano\":")
        appendQuotedDecimal(span.startNanoseconds)
        appendRaw(",\"endTimeUnixNano\":")
        appendQuotedDecimal(span.endNanoseconds)

        let attributes = span.attributes.prefix(truncation.maximumAttributes)
        if !attributes.isEmpty {
            appendRaw(",\"attributes\":")
            appendOTLPAttributes(attributes, truncation: truncation)
        }
        let droppedAttributes = span.droppedAttributeCount + span.attributes.count - attributes.count
        if droppedAttributes > 0 {
            appendRaw(",\"droppedAttributesCount\":")
            appendDecimal(UInt64(droppedAttributes))
        }

        let events = span.events.prefix(truncation.maximumEvents)
        if !events.isEmpty {
            appendRaw(",\"events\":[")
            for (index, event) in events.enumerated() {
                if index > 0 { append(UInt8(ascii: ",")) }
                appendRaw("{\"timeUnixNano\":")
                appendQuotedDecimal(event.timeNanoseconds)
                appendRaw(",\"name\":")
                appendJSONString(event.name, maximumBytes: cap)
                if !event.attributes.isEmpty {
                    appendRaw(",\"attributes\":")
                    appendOTLPAttributes(event.attributes[...], truncation: truncation)
                }
                if event.droppedAttributeCount > 0 {
                    appendRaw(",\"droppedAttributesCount\":")
                    appendDecimal(UInt64(event.droppedAttributeCount))
                }
                append(UInt8(ascii: "}"))
            }
            append(UInt8(ascii: "]"))
        }
        let droppedEvents = span.droppedEventCount + span.events.count - events.count
        if droppedEvents > 0 {
            appendRaw(",\"droppedEventsCount\":")
            appendDecimal(UInt64(droppedEvents))
        }

        let links = span.links.prefix(truncation.maximumLinks)
        if !links.isEmpty {
            appendRaw(",\"links\":[")
            for (index, link) in links.enumerated() {
                if index > 0 { append(UInt8(ascii: ",")) }
                appendRaw("{\"traceId\":")
                appendQuotedHex(link.traceID)
                appendRaw(",\"spanId\":")
                appendQuotedHex(link.spanID)
                if !link.traceState.isEmpty {
                    appendRaw(",\"traceState\":")
                    appendJSONString(link.traceState, maximumBytes: cap)
                }
                if !link.attributes.isEmpty {
                    appendRaw(",\"attributes\":")
                    appendOTLPAttributes(link.attributes[...], truncation: truncation)
                }
                if link.droppedAttributeCount > 0 {
                    appendRaw(",\"droppedAttributesCount\":")
                    appendDecimal(UInt64(link.droppedAttributeCount))
                }
                append(UInt8(ascii: "}"))
            }
            append(UInt8(ascii: "]"))
        }
        let droppedLinks = span.droppedLinkCount + span.links.count - links.count
        if droppedLinks > 0 {
            appendRaw(",\"droppedLinksCount\":")
            appendDecimal(UInt64(droppedLinks))
        }

        if span.status.code != .unset {
            appendRaw(",\"status\":{")
            if let message = span.status.message, !message.isEmpty {
                appendRaw("\"message\":")
                appendJSONString(message, maximumBytes: cap)
                append(UInt8(ascii: ","))
            }
            appendRaw("\"code\":")
            appendDecimal(UInt64(span.status.code.rawValue))
            append(UInt8(ascii: "}"))
        }
        append(UInt8(ascii: "}"))
    }

    /// `[{"key":…,"value":{…}},…]`.
    mutating func appendOTLPAttributes(_ attributes: ArraySlice<Attribute>, truncation: SpanTruncation) {
        append(UInt8(ascii: "["))
        var first = true
        for attribute in attributes {
            if !first { append(UInt8(ascii: ",")) }
            first = false
            appendRaw("{\"key\":")
            appendJSONString(attribute.key, maximumBytes: truncation.maximumStringBytes)
            appendRaw(",\"value\":")
            appendOTLPValue(attribute.value, maximumStringBytes: truncation.maximumStringBytes)
            append(UInt8(ascii: "}"))
        }
        append(UInt8(ascii: "]"))
    }

    /// One `AnyValue`.
    mutating func appendOTLPValue(_ value: AttributeValue, maximumStringBytes cap: Int) {
        switch value {
        case .string(let text):
            appendRaw("{\"stringValue\":")
            appendJSONString(text, maximumBytes: cap)
            append(UInt8(ascii: "}"))
        case .bool(let flag):
            appendRaw(flag ? "{\"boolValue\":true}" : "{\"boolValue\":false}")
        case .int(let number):
            appendRaw("{\"intValue\":\"")
            appendDecimal(number)
            appendRaw("\"}")
        case .double(let number):
            appendRaw("{\"doubleValue\":")
            appendDouble(number, nonFiniteAsStrings: true)
            append(UInt8(ascii: "}"))
        case .stringArray(let texts):
            appendOTLPArray(texts) { $0.appendOTLPValue(.string($1), maximumStringBytes: cap) }
        case .boolArray(let flags):
            appendOTLPArray(flags) { $0.appendOTLPValue(.bool($1), maximumStringBytes: cap) }
        case .intArray(let numbers):
            appendOTLPArray(numbers) { $0.appendOTLPValue(.int($1), maximumStringBytes: cap) }
        case .doubleArray(let numbers):
            appendOTLPArray(numbers) { $0.appendOTLPValue(.double($1), maximumStringBytes: cap) }
        }
    }

    private mutating func appendOTLPArray<T>(_ elements: [T], _ appendElement: (inout [UInt8], T) -> Void) {
        guard !elements.isEmpty else {
            appendRaw("{\"arrayValue\":{}}")
            return
        }
        appendRaw("{\"arrayValue\":{\"values\":[")
        for (index, element) in elements.enumerated() {
            if index > 0 { append(UInt8(ascii: ",")) }
            appendElement(&self, element)
        }
        appendRaw("]}}")
    }
}
