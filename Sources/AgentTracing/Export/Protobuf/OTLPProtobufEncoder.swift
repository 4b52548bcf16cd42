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
        var encoded = OTLPEncodedSpans(capacity: spans.count)
        for span in spans { encoded.append(span) }
        try encodeCounted(encoded, droppedSpanCount: droppedSpanCount, emit: emit)
    }

    /// Puts spans already encoded into request bodies under ``maximumRequestBytes``, handing each body and the
    /// number of spans it holds to `emit`: the spans are grouped by resource (groups in order of first
    /// appearance, spans in order within each) and their messages copied, not encoded again.
    public func encodeCounted<E: Error>(
        _ spans: OTLPEncodedSpans, droppedSpanCount: UInt64? = nil,
        emit: (_ body: [UInt8], _ spanCount: Int) throws(E) -> Void
    ) throws(E) {
        guard !spans.isEmpty else { return }
        var scopeField = ProtobufWriter(capacity: 128)
        scopeField.scope(scope, droppedSpanCount: droppedSpanCount)
        // A request closes when the next span would take it over the limit; every size is known exactly
        // before anything is written.
        var request = ProtobufWriter(
            capacity: min(maximumRequestBytes, spans.bytes.count + spans.count * 3 + spans.resources.count * 300 + 512))
        var requestSpans = 0
        var resourceField = ProtobufWriter(capacity: 256)
        for group in Self.groupedByResource(spans) {
            resourceField.bytes.removeAll(keepingCapacity: true)
            resourceField.lengthDelimitedField(1, spans.resources[group.resource])
            let header = (resource: resourceField.bytes, scope: scopeField.bytes)
            var pending = group.spans.startIndex
            var pendingBytes = 0
            for index in group.spans.indices {
                let entry = group.spans[index]
                let spanField = Self.fieldSize(entry.end - entry.start)
                let grown = Self.resourceSpansSize(header, spanBytes: pendingBytes + spanField)
                if requestSpans > 0, request.bytes.count + grown > maximumRequestBytes {
                    if pendingBytes > 0 {
                        request.resourceSpans(header, spans: group.spans[pending..<index], from: spans.bytes)
                    }
                    try emit(request.bytes, requestSpans)
                    request.bytes.removeAll(keepingCapacity: true)
                    pending = index
                    pendingBytes = 0
                    requestSpans = 0
                }
                pendingBytes += spanField
                requestSpans += 1
            }
            if pendingBytes > 0 {
                request.resourceSpans(header, spans: group.spans[pending...], from: spans.bytes)
            }
        }
        if requestSpans > 0 { try emit(request.bytes, requestSpans) }
    }

    /// The fields of a span's `Span` message: what the database stores with each span, and what
    /// ``OTLPEncodedSpans/append(encodedSpan:resource:)`` takes.
    public static func encodedSpan(_ span: FinishedSpan) -> [UInt8] {
        var writer = ProtobufWriter(capacity: 1024)
        writer.span(span)
        return writer.bytes
    }

    /// The fields of a resource's `Resource` message: what the database stores with each span, and what
    /// ``OTLPEncodedSpans/addResource(_:)`` takes.
    public static func encodedResource(_ resource: TraceResource) -> [UInt8] {
        var writer = ProtobufWriter(capacity: 256)
        for attribute in resource.attributes { writer.keyValue(1, attribute) }
        return writer.bytes
    }

    /// The fields of an encoded `Resource` message with `overrides` applied as ``TraceResource/merging(_:)``
    /// applies them: an attribute of the same key is replaced in place, others are added at the end; other
    /// fields are kept as they are. `nil` when `fields` is not a valid message.
    public static func mergingResource(_ fields: [UInt8], _ overrides: [Attribute]) -> [UInt8]? {
        // Applied one by one, as merging does: a key given twice keeps its last value, at its first place.
        let overrides = TraceResource(attributes: []).merging(overrides).attributes
        var used = [Bool](repeating: false, count: overrides.count)
        var writer = ProtobufWriter(capacity: fields.count + overrides.count * 48)
        var reader = ProtobufReader(fields[...])
        do {
            while let field = try reader.next() {
                switch field {
                case .lengthDelimited(1, let keyValue):
                    let key = try Self.key(of: keyValue)
                    if let index = overrides.firstIndex(where: { $0.key == key }) {
                        if !used[index] { writer.keyValue(1, overrides[index]) }
                        used[index] = true
                    } else {
                        writer.lengthDelimitedField(1, keyValue)
                    }
                case .lengthDelimited(let number, let value): writer.lengthDelimitedField(number, value)
                case .varint(let number, let value):
                    writer.tag(number, .varint)
                    writer.varint(value)
                case .fixed64(let number, let value):
                    writer.tag(number, .fixed64)
                    writer.littleEndian64(value)
                case .fixed32(let number, let value):
                    writer.tag(number, .fixed32)
                    withUnsafeBytes(of: value.littleEndian) { writer.bytes.append(contentsOf: $0) }
                }
            }
        } catch {
            return nil
        }
        for (index, attribute) in overrides.enumerated() where !used[index] { writer.keyValue(1, attribute) }
        return writer.bytes
    }

    /// The `key` (field 1) of an encoded `KeyValue`.
    private static func key(of keyValue: ArraySlice<UInt8>) throws(ProtobufReader.Malformed) -> String {
        var reader = ProtobufReader(keyValue)
        var key = ""
        while let field = try reader.next() {
            if case .lengthDelimited(1, let text) = field { key = String(decoding: text, as: UTF8.self) }
        }
        return key
    }

    /// Spans of one resource, in the order they came.
    struct ResourceGroup {
        var resource: Int
        var spans: [OTLPEncodedSpans.Entry]
    }

    /// The spans grouped by resource, groups in order of first appearance.
    static func groupedByResource(_ spans: OTLPEncodedSpans) -> [ResourceGroup] {
        if spans.resources.count == 1 { return [ResourceGroup(resource: 0, spans: spans.spans)] }
        var groups: [ResourceGroup] = []
        var groupOfResource = [Int](repeating: -1, count: spans.resources.count)
        for entry in spans.spans {
            if groupOfResource[entry.resource] < 0 {
                groupOfResource[entry.resource] = groups.count
                groups.append(ResourceGroup(resource: entry.resource, spans: []))
            }
            groups[groupOfResource[entry.resource]].spans.append(entry)
        }
        return groups
    }

    /// Bytes a length-delimited field of field number under 16 holding `length` bytes takes.
    private static func fieldSize(_ length: Int) -> Int {
        1 + ProtobufWriter.varintSize(UInt64(length)) + length
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
    /// `InstrumentationScope` fields and the spans' `Span` messages in `bytes`, each as field 2 of `ScopeSpans`.
    mutating func resourceSpans(
        _ header: (resource: [UInt8], scope: [UInt8]), spans: some Collection<OTLPEncodedSpans.Entry>,
        from source: [UInt8]
    ) {
        var spanBytes = 0
        for entry in spans {
            spanBytes += 1 + Self.varintSize(UInt64(entry.end - entry.start)) + entry.end - entry.start
        }
        let scopeSpans = header.scope.count + spanBytes
        tag(1, .lengthDelimited)
        varint(UInt64(header.resource.count + 1 + Self.varintSize(UInt64(scopeSpans)) + scopeSpans))
        bytes.append(contentsOf: header.resource)
        tag(2, .lengthDelimited)
        varint(UInt64(scopeSpans))
        bytes.append(contentsOf: header.scope)
        source.withUnsafeBufferPointer { source in
            for entry in spans {
                tag(2, .lengthDelimited)
                varint(UInt64(entry.end - entry.start))
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: source[entry.start..<entry.end]))
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
