/// Writes finished spans as OTLP binary protobuf: serialized `ExportTraceServiceRequest`s, the body OTLP/HTTP
/// sends as `application/x-protobuf` by default.
///
/// It encodes the same message ``OTLPJSONEncoder`` writes as JSON (the same grouping by resource, one
/// scope, the tracer's dropped-span count as the scope attribute
/// ``OTLPJSONEncoder/droppedSpansAttributeKey``), field by field as `opentelemetry-proto`'s
/// `trace.proto`, `common.proto` and `resource.proto` number them. Bodies are split between spans so that
/// each stays within ``maximumRequestBytes``; a single span larger than that goes alone and whole (protobuf
/// receivers take large bodies, and cutting strings is the JSON lines' answer to a line limit, not needed
/// here).
public struct OTLPProtobufEncoder: Sendable {
    /// The scope every span is exported under.
    public var scope: InstrumentationScope
    /// A request body holds at most this many bytes, unless one span alone is larger; 4 MiB by default.
    public var maximumRequestBytes: Int

    /// An encoder for the given scope.
    public init(scope: InstrumentationScope, maximumRequestBytes: Int = 4 << 20) {
        self.scope = scope
        self.maximumRequestBytes = max(1024, maximumRequestBytes)
    }

    /// Encodes the spans into request bodies under ``maximumRequestBytes``, handing each body and the number of
    /// spans it holds to `emit`.
    public func encodeCounted<E: Error>(
        _ spans: some Collection<FinishedSpan>, droppedSpanCount: UInt64? = nil,
        emit: (_ body: [UInt8], _ spanCount: Int) throws(E) -> Void
    ) throws(E) {
        guard !spans.isEmpty else { return }
        var scopeField = ProtobufWriter(capacity: 128)
        scopeField.scope(scope, droppedSpanCount: droppedSpanCount)
        // Each span is encoded once into a scratch buffer, so its exact size is known before it is placed; a
        // request closes when the next span would take it over the limit.
        var request = ProtobufWriter(capacity: min(maximumRequestBytes, spans.count * 300 + 512))
        var requestSpans = 0
        var span = ProtobufWriter(capacity: 1024)
        for group in OTLPJSONEncoder.groupedByResource(spans) {
            var resourceField = ProtobufWriter(capacity: 256)
            resourceField.resource(group.resource)
            let header = (resource: resourceField.bytes, scope: scopeField.bytes)
            var pending = ProtobufWriter(capacity: 4096)
            for item in group.spans {
                span.bytes.removeAll(keepingCapacity: true)
                span.message(2, expectedSize: 1000) { $0.span(item) }
                let grown = Self.resourceSpansSize(header, spanBytes: pending.bytes.count + span.bytes.count)
                if requestSpans > 0, request.bytes.count + grown > maximumRequestBytes {
                    if !pending.bytes.isEmpty { request.resourceSpans(header, spans: pending.bytes) }
                    try emit(request.bytes, requestSpans)
                    request.bytes.removeAll(keepingCapacity: true)
                    pending.bytes.removeAll(keepingCapacity: true)
                    requestSpans = 0
                }
                pending.bytes.append(contentsOf: span.bytes)
                requestSpans += 1
            }
            if !pending.bytes.isEmpty { request.resourceSpans(header, spans: pending.bytes) }
        }
        if requestSpans > 0 { try emit(request.bytes, requestSpans) }
    }

    /// The exact size of a `ResourceSpans` field holding `spanBytes` of encoded `Span` fields.
    private static func resourceSpansSize(_ header: (resource: [UInt8], scope: [UInt8]), spanBytes: Int) -> Int {
        let scopeSpans = header.scope.count + spanBytes
        let resourceSpans = header.resource.count + 1 + ProtobufWriter.varintSize(UInt64(scopeSpans)) + scopeSpans
        return 1 + ProtobufWriter.varintSize(UInt64(resourceSpans)) + resourceSpans
    }
}

extension ProtobufWriter {
    /// `ResourceSpans` (field 1 of `ExportTraceServiceRequest`) from its encoded `Resource` and
    /// `InstrumentationScope` fields and encoded `Span` fields.
    mutating func resourceSpans(_ header: (resource: [UInt8], scope: [UInt8]), spans: [UInt8]) {
        message(1, expectedSize: header.resource.count + header.scope.count + spans.count + 8) { resourceSpans in
            resourceSpans.bytes.append(contentsOf: header.resource)
            resourceSpans.message(2, expectedSize: header.scope.count + spans.count + 4) { scopeSpans in
                scopeSpans.bytes.append(contentsOf: header.scope)
                scopeSpans.bytes.append(contentsOf: spans)
            }
        }
    }

    /// `Resource` as field 1 (of `ResourceSpans` and `ResourceMetrics`).
    mutating func resource(_ resource: TraceResource) {
        message(1, expectedSize: 200) { writer in
            for attribute in resource.attributes { writer.keyValue(1, attribute) }
        }
    }

    /// `InstrumentationScope` as field 1 (of `ScopeSpans` and `ScopeMetrics`).
    mutating func scope(_ scope: InstrumentationScope, droppedSpanCount: UInt64?) {
        message(1, expectedSize: 100) { writer in
            writer.stringField(1, scope.name)
            writer.stringField(2, scope.version)
            if let droppedSpanCount {
                writer.keyValue(3, Attribute(OTLPJSONEncoder.droppedSpansAttributeKey, .int(Int64(droppedSpanCount))))
            }
        }
    }

    /// The fields of one `Span`.
    mutating func span(_ span: FinishedSpan) {
        idField(1, span.traceID)
        idField(2, span.spanID)
        stringField(3, span.traceState)
        if let parent = span.parentSpanID { idField(4, parent) }
        stringField(5, span.name)
        uintField(6, UInt64(span.kind.rawValue))
        fixed64Field(7, span.startNanoseconds)
        fixed64Field(8, span.endNanoseconds)
        for attribute in span.attributes { keyValue(9, attribute) }
        uintField(10, UInt64(span.droppedAttributeCount))
        for event in span.events {
            message(11) { writer in
                writer.fixed64Field(1, event.timeNanoseconds)
                writer.stringField(2, event.name)
                for attribute in event.attributes { writer.keyValue(3, attribute) }
                writer.uintField(4, UInt64(event.droppedAttributeCount))
            }
        }
        uintField(12, UInt64(span.droppedEventCount))
        for link in span.links {
            message(13) { writer in
                writer.idField(1, link.traceID)
                writer.idField(2, link.spanID)
                writer.stringField(3, link.traceState)
                for attribute in link.attributes { writer.keyValue(4, attribute) }
                writer.uintField(5, UInt64(link.droppedAttributeCount))
            }
        }
        uintField(14, UInt64(span.droppedLinkCount))
        if span.status.code != .unset {
            message(15, expectedSize: 16) { writer in
                writer.stringField(2, span.status.message ?? "")
                writer.uintField(3, UInt64(span.status.code.rawValue))
            }
        }
    }

    /// A `KeyValue` as field `field`.
    mutating func keyValue(_ field: Int, _ attribute: Attribute) {
        message(field, expectedSize: 64) { writer in
            writer.stringField(1, attribute.key)
            writer.message(2, expectedSize: 48) { $0.anyValue(attribute.value) }
        }
    }

    /// The fields of one `AnyValue`; the `oneof` member is written even when it holds a default value, so that
    /// `0`, `false` and `""` stay typed.
    mutating func anyValue(_ value: AttributeValue) {
        switch value {
        case .string(let text): stringFieldAlways(1, text)
        case .bool(let flag):
            tag(2, .varint)
            bytes.append(flag ? 1 : 0)
        case .int(let number):
            tag(3, .varint)
            varint(UInt64(bitPattern: number))
        case .double(let number): doubleField(4, number)
        case .stringArray(let texts): arrayValue(texts) { $0.stringFieldAlways(1, $1) }
        case .boolArray(let flags): arrayValue(flags) { $0.anyValue(.bool($1)) }
        case .intArray(let numbers): arrayValue(numbers) { $0.anyValue(.int($1)) }
        case .doubleArray(let numbers): arrayValue(numbers) { $0.doubleField(4, $1) }
        }
    }

    private mutating func arrayValue<T>(_ elements: [T], _ element: (inout ProtobufWriter, T) -> Void) {
        message(5, expectedSize: elements.count * 12) { array in
            for item in elements {
                array.message(1, expectedSize: 12) { element(&$0, item) }
            }
        }
    }
}
