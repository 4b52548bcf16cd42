/// Writes finished spans as OTLP binary protobuf: serialized `ExportTraceServiceRequest`s, the body OTLP/HTTP
/// sends as `application/x-protobuf` by default.
///
/// It encodes the same message ``OTLPJSONEncoder`` writes as JSON (the same grouping by resource, one
/// scope, the tracer's dropped-span count as the scope attribute
/// ``OTLPJSONEncoder/droppedSpansAttributeKey``), field by field as `opentelemetry-proto`'s
/// `trace.proto`, `common.proto` and `resource.proto` number them. Bodies are split between spans so that
/// each stays under ``maximumRequestBytes``; a single span larger than that goes alone and whole (protobuf
/// receivers take large bodies, and cutting strings is the JSON lines' answer to a line limit, not needed
/// here).
public struct OTLPProtobufEncoder: Sendable {
    /// The scope every span is exported under.
    public var scope: InstrumentationScope
    /// A request body stays under this many bytes, unless one span alone is larger; 4 MiB by default.
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
        // Spans are measured one by one (each encoded once into a scratch buffer), then copied into the request
        // whose resource group they belong to; a request closes when the next span would not fit.
        var request = ProtobufWriter(capacity: min(maximumRequestBytes, spans.count * 300 + 512))
        var requestSpans = 0
        var span = ProtobufWriter(capacity: 1024)
        for group in OTLPJSONEncoder.groupedByResource(spans) {
            var pending: [[UInt8]] = []
            var pendingBytes = 0
            func flushGroup(into request: inout ProtobufWriter) {
                guard !pending.isEmpty else { return }
                request.resourceSpans(
                    group.resource, scope: scope, droppedSpanCount: droppedSpanCount, encodedSpans: pending,
                    spanBytes: pendingBytes)
                pending.removeAll(keepingCapacity: true)
                pendingBytes = 0
            }
            for item in group.spans {
                span.bytes.removeAll(keepingCapacity: true)
                span.message(2, expectedSize: 1000) { $0.span(item) }
                // 64 bytes cover the resource and scope wrappers' tags and lengths around the spans.
                let overhead = pending.isEmpty ? Self.headerEstimate(group.resource, scope) : 0
                if requestSpans > 0,
                    request.bytes.count + pendingBytes + span.bytes.count + overhead + 64 > maximumRequestBytes
                {
                    flushGroup(into: &request)
                    try emit(request.bytes, requestSpans)
                    request.bytes.removeAll(keepingCapacity: true)
                    requestSpans = 0
                }
                pending.append(span.bytes)
                pendingBytes += span.bytes.count
                requestSpans += 1
            }
            flushGroup(into: &request)
        }
        if requestSpans > 0 { try emit(request.bytes, requestSpans) }
    }

    private static func headerEstimate(_ resource: TraceResource, _ scope: InstrumentationScope) -> Int {
        resource.attributes.reduce(0) { $0 + $1.key.utf8.count + 16 + ($1.value.stringValue?.utf8.count ?? 16) }
            + scope.name.utf8.count + scope.version.utf8.count + 64
    }
}

extension ProtobufWriter {
    /// `ResourceSpans` (field 1 of `ExportTraceServiceRequest`) with already-encoded `Span` fields.
    mutating func resourceSpans(
        _ resource: TraceResource, scope: InstrumentationScope, droppedSpanCount: UInt64?, encodedSpans: [[UInt8]],
        spanBytes: Int
    ) {
        message(1, expectedSize: spanBytes + 512) { resourceSpans in
            resourceSpans.resource(resource)
            resourceSpans.message(2, expectedSize: spanBytes + 128) { scopeSpans in
                scopeSpans.scope(scope, droppedSpanCount: droppedSpanCount)
                for encoded in encodedSpans { scopeSpans.bytes.append(contentsOf: encoded) }
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
