public import OrderedJSON
import ValueFormats

/// Writes finished spans one JSON object per line (`hostscope trace export --format spans`), for
/// jq and people; the same object is what persistence stores, and ``FinishedSpan/init(flatJSON:)``
/// reads it back losslessly.
///
/// Keys, in this order: `trace_id`, `span_id`, `parent_span_id` (null for a root), `name`, `kind`
/// (`internal|server|client|producer|consumer`), `start`, `end` (RFC 3339 UTC with nine fractional
/// digits, so nanosecond times survive), `duration_ms` (float), `status` (`{"code":
/// "unset|ok|error", "message": …}`), `attributes` (an object of typed JSON values: strings,
/// integers, floats always written with a fraction, booleans, arrays of one of those), `events`
/// (`[{"name", "time", "attributes"}]`), `links` (`[{"trace_id", "span_id", "attributes"}]`) and
/// `resource` (an object like `attributes`); `trace_state`, `dropped_attributes`, `dropped_events`
/// and `dropped_links` appear only when set.
///
/// Limits of losslessness: JSON has no NaN or infinity, so such doubles are written as the strings
/// `"NaN"`, `"Infinity"`, `"-Infinity"` and read back as strings; an empty array has no element type
/// and reads back as an empty string array.
public struct FlatSpanEncoder: Sendable {
    public init() {}

    /// All lines for the spans, each ending in a newline.
    public func encode(_ spans: some Sequence<FinishedSpan>) -> [UInt8] {
        var output: [UInt8] = []
        for span in spans {
            output.appendFlatSpan(span)
            output.append(UInt8(ascii: "\n"))
        }
        return output
    }

    /// One span's JSON object, without a newline.
    public func encode(_ span: FinishedSpan) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(512)
        output.appendFlatSpan(span)
        return output
    }

    /// One span's JSON object as text.
    public func string(_ span: FinishedSpan) -> String {
        String(decoding: encode(span), as: UTF8.self)
    }
}

extension Array where Element == UInt8 {
    mutating func appendFlatSpan(_ span: FinishedSpan) {
        appendRaw("{\"trace_id\":")
        appendQuotedHex(span.traceID)
        appendRaw(",\"span_id\":")
        appendQuotedHex(span.spanID)
        appendRaw(",\"parent_span_id\":")
        if let parent = span.parentSpanID { appendQuotedHex(parent) } else { appendRaw("null") }
        appendRaw(",\"name\":")
        appendJSONString(span.name)
        appendRaw(",\"kind\":\"")
        append(contentsOf: span.kind.name.utf8)
        appendRaw("\",\"start\":")
        RFC3339.append(nanosecondsSince1970: span.startNanoseconds, quoted: true, into: &self)
        appendRaw(",\"end\":")
        RFC3339.append(nanosecondsSince1970: span.endNanoseconds, quoted: true, into: &self)
        appendRaw(",\"duration_ms\":")
        appendDouble(span.durationMilliseconds, nonFiniteAsStrings: false)
        appendRaw(",\"status\":{\"code\":\"")
        append(contentsOf: span.status.code.name.utf8)
        append(UInt8(ascii: "\""))
        if let message = span.status.message {
            appendRaw(",\"message\":")
            appendJSONString(message)
        }
        appendRaw("},\"attributes\":")
        appendFlatAttributes(span.attributes)
        appendRaw(",\"events\":[")
        for (index, event) in span.events.enumerated() {
            if index > 0 { append(UInt8(ascii: ",")) }
            appendRaw("{\"name\":")
            appendJSONString(event.name)
            appendRaw(",\"time\":")
            RFC3339.append(nanosecondsSince1970: event.timeNanoseconds, quoted: true, into: &self)
            appendRaw(",\"attributes\":")
            appendFlatAttributes(event.attributes)
            if event.droppedAttributeCount > 0 {
                appendRaw(",\"dropped_attributes\":")
                appendDecimal(UInt64(event.droppedAttributeCount))
            }
            append(UInt8(ascii: "}"))
        }
        appendRaw("],\"links\":[")
        for (index, link) in span.links.enumerated() {
            if index > 0 { append(UInt8(ascii: ",")) }
            appendRaw("{\"trace_id\":")
            appendQuotedHex(link.traceID)
            appendRaw(",\"span_id\":")
            appendQuotedHex(link.spanID)
            if !link.traceState.isEmpty {
                appendRaw(",\"trace_state\":")
                appendJSONString(link.traceState)
            }
            appendRaw(",\"attributes\":")
            appendFlatAttributes(link.attributes)
            if link.droppedAttributeCount > 0 {
                appendRaw(",\"dropped_attributes\":")
                appendDecimal(UInt64(link.droppedAttributeCount))
            }
            append(UInt8(ascii: "}"))
        }
        appendRaw("],\"resource\":")
        appendFlatAttributes(span.resource.attributes)
        if !span.traceState.isEmpty {
            appendRaw(",\"trace_state\":")
            appendJSONString(span.traceState)
        }
        for (key, count) in [
            ("dropped_attributes", span.droppedAttributeCount), ("dropped_events", span.droppedEventCount),
            ("dropped_links", span.droppedLinkCount),
        ] where count > 0 {
            append(UInt8(ascii: ","))
            appendJSONString(key)
            append(UInt8(ascii: ":"))
            appendDecimal(UInt64(count))
        }
        append(UInt8(ascii: "}"))
    }

    mutating func appendFlatAttributes(_ attributes: [Attribute]) {
        append(UInt8(ascii: "{"))
        for (index, attribute) in attributes.enumerated() {
            if index > 0 { append(UInt8(ascii: ",")) }
            appendJSONString(attribute.key)
            append(UInt8(ascii: ":"))
            appendFlatValue(attribute.value)
        }
        append(UInt8(ascii: "}"))
    }

    mutating func appendFlatValue(_ value: AttributeValue) {
        switch value {
        case .string(let text): appendJSONString(text)
        case .bool(let flag): appendRaw(flag ? "true" : "false")
        case .int(let number): appendDecimal(number)
        case .double(let number): appendDouble(number, nonFiniteAsStrings: true)
        case .stringArray(let texts): appendFlatArray(texts) { $0.appendJSONString($1) }
        case .boolArray(let flags): appendFlatArray(flags) { $0.appendRaw($1 ? "true" : "false") }
        case .intArray(let numbers): appendFlatArray(numbers) { $0.appendDecimal($1) }
        case .doubleArray(let numbers): appendFlatArray(numbers) { $0.appendDouble($1, nonFiniteAsStrings: true) }
        }
    }

    private mutating func appendFlatArray<T>(_ elements: [T], _ appendElement: (inout [UInt8], T) -> Void) {
        append(UInt8(ascii: "["))
        for (index, element) in elements.enumerated() {
            if index > 0 { append(UInt8(ascii: ",")) }
            appendElement(&self, element)
        }
        append(UInt8(ascii: "]"))
    }
}

extension FinishedSpan {
    /// Reads one flat span line (see ``FlatSpanEncoder``).
    public init(flatJSONLine line: String) throws(TracingError) {
        // The lines hostscope wrote are read directly; anything else takes the general way, which explains it.
        if let span = FlatSpanReader.span(line) {
            self = span
            return
        }
        let value: JSONValue
        do {
            value = try JSONParser.parse(line)
        } catch {
            throw TracingError(code: .invalidFlatSpan, message: "flat span line is not JSON: \(error)")
        }
        try self.init(flatJSON: value)
    }

    /// Reads a flat span object (see ``FlatSpanEncoder``).
    public init(flatJSON value: JSONValue) throws(TracingError) {
        guard let object = value.objectValue else { throw Self.invalid("a flat span must be a JSON object") }
        guard let traceID = object["trace_id"]?.stringValue.flatMap({ TraceID(hex: $0) }) else {
            throw Self.invalid("trace_id must be 32 lowercase hex digits, not all zero")
        }
        guard let spanID = object["span_id"]?.stringValue.flatMap({ SpanID(hex: $0) }) else {
            throw Self.invalid("span_id must be 16 lowercase hex digits, not all zero")
        }
        var parentSpanID: SpanID?
        if let parent = object["parent_span_id"], !parent.isNull {
            guard let id = parent.stringValue.flatMap({ SpanID(hex: $0) }) else {
                throw Self.invalid("parent_span_id must be null or 16 lowercase hex digits")
            }
            parentSpanID = id
        }
        guard let name = object["name"]?.stringValue else { throw Self.invalid("name must be a string") }
        guard let kind = object["kind"]?.stringValue.flatMap({ Kind(name: $0) }) else {
            throw Self.invalid("kind must be one of internal, server, client, producer, consumer")
        }
        let start = try Self.timestamp(object["start"], "start")
        let end = try Self.timestamp(object["end"], "end")
        guard let statusObject = object["status"]?.objectValue,
            let code = statusObject["code"]?.stringValue.flatMap({ Status.Code(name: $0) })
        else { throw Self.invalid("status must be an object with code unset, ok or error") }
        let message = statusObject["message"]?.stringValue
        let attributes = try Self.attributes(object["attributes"], "attributes")
        var events: [Event] = []
        for event in try Self.array(object["events"], "events") {
            guard let eventName = event["name"]?.stringValue else { throw Self.invalid("an event needs a name") }
            events.append(
                Event(
                    name: eventName, timeNanoseconds: try Self.timestamp(event["time"], "event time"),
                    attributes: try Self.attributes(event["attributes"], "event attributes"),
                    droppedAttributeCount: try Self.count(event["dropped_attributes"])))
        }
        var links: [Link] = []
        for link in try Self.array(object["links"], "links") {
            guard let linkTrace = link["trace_id"]?.stringValue.flatMap({ TraceID(hex: $0) }),
                let linkSpan = link["span_id"]?.stringValue.flatMap({ SpanID(hex: $0) })
            else { throw Self.invalid("a link needs a valid trace_id and span_id") }
            links.append(
                Link(
                    traceID: linkTrace, spanID: linkSpan, traceState: link["trace_state"]?.stringValue ?? "",
                    attributes: try Self.attributes(link["attributes"], "link attributes"),
                    droppedAttributeCount: try Self.count(link["dropped_attributes"])))
        }
        self.init(
            traceID: traceID, spanID: spanID, parentSpanID: parentSpanID,
            traceState: object["trace_state"]?.stringValue ?? "", name: name, kind: kind, startNanoseconds: start,
            endNanoseconds: end, status: Status(code: code, message: message), attributes: attributes, events: events,
            links: links, resource: TraceResource(attributes: try Self.attributes(object["resource"], "resource")),
            droppedAttributeCount: try Self.count(object["dropped_attributes"]),
            droppedEventCount: try Self.count(object["dropped_events"]),
            droppedLinkCount: try Self.count(object["dropped_links"]))
    }

    private static func invalid(_ message: String) -> TracingError {
        TracingError(code: .invalidFlatSpan, message: "invalid flat span: \(message)")
    }

    private static func timestamp(_ value: JSONValue?, _ field: String) throws(TracingError) -> UInt64 {
        guard let text = value?.stringValue, let nanoseconds = RFC3339.parseNanoseconds(text) else {
            throw invalid("\(field) must be an RFC 3339 UTC timestamp")
        }
        return nanoseconds
    }

    private static func count(_ value: JSONValue?) throws(TracingError) -> Int {
        guard let value else { return 0 }
        guard let count = value.intValue, count >= 0 else { throw invalid("dropped counts must be whole numbers") }
        return count
    }

    private static func array(_ value: JSONValue?, _ field: String) throws(TracingError) -> [JSONValue] {
        guard let value else { return [] }
        guard let array = value.arrayValue else { throw invalid("\(field) must be an array") }
        return array
    }

    private static func attributes(_ value: JSONValue?, _ field: String) throws(TracingError) -> [Attribute] {
        guard let value else { return [] }
        guard let object = value.objectValue else { throw invalid("\(field) must be an object") }
        var result: [Attribute] = []
        result.reserveCapacity(object.count)
        for member in object {
            guard let attributeValue = AttributeValue(flatJSON: member.value) else {
                throw invalid("\(field).\(member.key) is not a string, number, boolean or array of one of those")
            }
            result.append(Attribute(member.key, attributeValue))
        }
        return result
    }
}

extension AttributeValue {
    /// The value of a flat-format attribute: integers stay integers, numbers with a fraction or
    /// exponent are doubles, arrays take the type of their elements (integers mixed with doubles
    /// make a double array).
    init?(flatJSON value: JSONValue) {
        switch value {
        case .string(let text): self = .string(text)
        case .bool(let flag): self = .bool(flag)
        case .int(let number): self = .int(number)
        case .uint: return nil
        case .double(let number): self = .double(number)
        case .array(let elements):
            if elements.isEmpty {
                self = .stringArray([])
            } else if elements.allSatisfy({ $0.stringValue != nil }) {
                self = .stringArray(elements.compactMap(\.stringValue))
            } else if elements.allSatisfy({ $0.boolValue != nil }) {
                self = .boolArray(elements.compactMap(\.boolValue))
            } else if elements.allSatisfy({ if case .int = $0 { true } else { false } }) {
                self = .intArray(elements.compactMap(\.int64Value))
            } else if elements.allSatisfy({
                switch $0 {
                case .int, .double: true
                default: false
                }
            }) {
                self = .doubleArray(elements.compactMap(\.doubleValue))
            } else {
                return nil
            }
        case .null, .object: return nil
        }
    }
}
