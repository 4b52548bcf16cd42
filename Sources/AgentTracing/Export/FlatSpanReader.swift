import ValueFormats

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a flat span line (``FlatSpanEncoder``'s format) straight into a ``FinishedSpan``, without building a
/// JSON tree first: what `trace push` and `trace export` spend most of their time on when they read the
/// database back.
///
/// It takes the lines hostscope writes and nothing it is unsure of: any key, value or escape outside the
/// format, a number beyond 64 bits, invalid UTF-8, anything that does not parse, makes it return `nil`, and the
/// caller reads the line the general way (``FinishedSpan/init(flatJSON:)``), which then accepts or explains
/// it. So it never changes what a line means, only how fast a well-formed one is read.
struct FlatSpanReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The span of a line, or `nil` when the line needs the general reader.
    static func span(_ line: String) -> FinishedSpan? {
        var line = line
        return line.withUTF8 { utf8 in
            var reader = FlatSpanReader(utf8)
            guard let span = reader.span() else { return nil }
            reader.skipSpace()
            return reader.index == utf8.count ? span : nil
        }
    }

    private struct Unreadable: Error {}

    private mutating func span() -> FinishedSpan? {
        var traceID: TraceID?
        var spanID: SpanID?
        var parent: SpanID?
        var name: String?
        var kind: FinishedSpan.Kind?
        var start: UInt64?
        var end: UInt64?
        var status: FinishedSpan.Status?
        var attributes: [Attribute] = []
        var events: [FinishedSpan.Event] = []
        var links: [FinishedSpan.Link] = []
        var resource: [Attribute] = []
        var traceState = ""
        var dropped = (attributes: 0, events: 0, links: 0)
        let complete = object { reader, key in
            switch key {
            case "trace_id": traceID = reader.string().flatMap { TraceID(hex: $0) }; return traceID != nil
            case "span_id": spanID = reader.string().flatMap { SpanID(hex: $0) }; return spanID != nil
            case "parent_span_id":
                if reader.literal("null") { return true }
                parent = reader.string().flatMap { SpanID(hex: $0) }
                return parent != nil
            case "name": name = reader.string(); return name != nil
            case "kind": kind = reader.string().flatMap { FinishedSpan.Kind(name: $0) }; return kind != nil
            case "start": start = reader.timestamp(); return start != nil
            case "end": end = reader.timestamp(); return end != nil
            case "duration_ms": return reader.number() != nil
            case "status": status = reader.status(); return status != nil
            case "attributes": return reader.attributes(into: &attributes)
            case "resource": return reader.attributes(into: &resource)
            case "events": return reader.array { $0.event().map { events.append($0) } != nil }
            case "links": return reader.array { $0.link().map { links.append($0) } != nil }
            case "trace_state":
                guard let state = reader.string() else { return false }
                traceState = state
                return true
            case "dropped_attributes": return reader.count().map { dropped.attributes = $0 } != nil
            case "dropped_events": return reader.count().map { dropped.events = $0 } != nil
            case "dropped_links": return reader.count().map { dropped.links = $0 } != nil
            default: return false
            }
        }
        guard complete, let traceID, let spanID, let name, let kind, let start, let end, let status else { return nil }
        return FinishedSpan(
            traceID: traceID, spanID: spanID, parentSpanID: parent, traceState: traceState, name: name, kind: kind,
            startNanoseconds: start, endNanoseconds: end, status: status, attributes: attributes, events: events,
            links: links, resource: TraceResource(attributes: resource), droppedAttributeCount: dropped.attributes,
            droppedEventCount: dropped.events, droppedLinkCount: dropped.links)
    }

    private mutating func status() -> FinishedSpan.Status? {
        var code: FinishedSpan.Status.Code?
        var message: String?
        let complete = object { reader, key in
            switch key {
            case "code": code = reader.string().flatMap { FinishedSpan.Status.Code(name: $0) }; return code != nil
            case "message": message = reader.string(); return message != nil
            default: return false
            }
        }
        guard complete, let code else { return nil }
        return FinishedSpan.Status(code: code, message: message)
    }

    private mutating func event() -> FinishedSpan.Event? {
        var name: String?
        var time: UInt64?
        var attributes: [Attribute] = []
        var dropped = 0
        let complete = object { reader, key in
            switch key {
            case "name": name = reader.string(); return name != nil
            case "time": time = reader.timestamp(); return time != nil
            case "attributes": return reader.attributes(into: &attributes)
            case "dropped_attributes": return reader.count().map { dropped = $0 } != nil
            default: return false
            }
        }
        guard complete, let name, let time else { return nil }
        return FinishedSpan.Event(
            name: name, timeNanoseconds: time, attributes: attributes, droppedAttributeCount: dropped)
    }

    private mutating func link() -> FinishedSpan.Link? {
        var traceID: TraceID?
        var spanID: SpanID?
        var traceState = ""
        var attributes: [Attribute] = []
        var dropped = 0
        let complete = object { reader, key in
            switch key {
            case "trace_id": traceID = reader.string().flatMap { TraceID(hex: $0) }; return traceID != nil
            case "span_id": spanID = reader.string().flatMap { SpanID(hex: $0) }; return spanID != nil
            case "trace_state":
                guard let state = reader.string() else { return false }
                traceState = state
                return true
            case "attributes": return reader.attributes(into: &attributes)
            case "dropped_attributes": return reader.count().map { dropped = $0 } != nil
            default: return false
            }
        }
        guard complete, let traceID, let spanID else { return nil }
        return FinishedSpan.Link(
            traceID: traceID, spanID: spanID, traceState: traceState, attributes: attributes,
            droppedAttributeCount: dropped)
    }

    /// An object of typed values, as ``AttributeValue/init(flatJSON:)`` reads them.
    private mutating func attributes(into result: inout [Attribute]) -> Bool {
        object { reader, key in
            guard let name = key.text, let value = reader.attributeValue() else { return false }
            result.append(Attribute(name, value))
            return true
        }
    }

    private enum Scalar {
        case string(String), bool(Bool), int(Int64), double(Double)
    }

    private mutating func attributeValue() -> AttributeValue? {
        skipSpace()
        guard index < bytes.count else { return nil }
        if bytes[index] == UInt8(ascii: "[") {
            var elements: [Scalar] = []
            guard array({ reader in reader.scalar().map { elements.append($0) } != nil }) else { return nil }
            if elements.isEmpty { return .stringArray([]) }
            var strings: [String] = []
            var flags: [Bool] = []
            var integers: [Int64] = []
            var doubles: [Double] = []
            for element in elements {
                switch element {
                case .string(let text): strings.append(text)
                case .bool(let flag): flags.append(flag)
                case .int(let number):
                    integers.append(number)
                    doubles.append(Double(number))
                case .double(let number): doubles.append(number)
                }
            }
            if strings.count == elements.count { return .stringArray(strings) }
            if flags.count == elements.count { return .boolArray(flags) }
            if integers.count == elements.count { return .intArray(integers) }
            if doubles.count == elements.count { return .doubleArray(doubles) }
            return nil
        }
        switch scalar() {
        case .string(let text): return .string(text)
        case .bool(let flag): return .bool(flag)
        case .int(let number): return .int(number)
        case .double(let number): return .double(number)
        case nil: return nil
        }
    }

    private mutating func scalar() -> Scalar? {
        skipSpace()
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "\""): return string().map { .string($0) }
        case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
        default: return number()
        }
    }

    private mutating func count() -> Int? {
        guard case .int(let number)? = number(), number >= 0 else { return nil }
        return Int(number)
    }

    private mutating func timestamp() -> UInt64? {
        string().flatMap { RFC3339.parseNanoseconds($0) }
    }

    // MARK: - JSON syntax

    /// A key as it stands in the line (keys with escapes are left to the general reader).
    struct Key {
        let bytes: UnsafeBufferPointer<UInt8>

        /// Lets `switch key` match the key's bytes against names.
        static func ~= (name: StaticString, key: Key) -> Bool { key == name }

        static func == (key: Key, name: StaticString) -> Bool {
            key.bytes.count == name.utf8CodeUnitCount
                && memcmp(key.bytes.baseAddress!, name.utf8Start, key.bytes.count) == 0
        }

        /// The key as a string, `nil` when it is not valid UTF-8.
        var text: String? {
            bytes.allSatisfy({ $0 < 0x80 })
                ? String(decoding: bytes, as: UTF8.self) : String(validating: bytes, as: UTF8.self)
        }
    }

    /// `{ "key": value, … }`, calling `member` with the reader placed at each value; `false` from it, or bad
    /// syntax, fails the object.
    private mutating func object(_ member: (inout FlatSpanReader, Key) -> Bool) -> Bool {
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return false }
        index += 1
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return true
        }
        while true {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return false }
            let start = index + 1
            index = start
            while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\"),
                bytes[index] >= 0x20
            {
                index += 1
            }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return false }
            let key = Key(bytes: UnsafeBufferPointer(rebasing: bytes[start..<index]))
            index += 1
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return false }
            index += 1
            guard member(&self, key) else { return false }
            skipSpace()
            guard index < bytes.count else { return false }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "}") else { return false }
            index += 1
            return true
        }
    }

    /// `[ value, … ]`, calling `element` at each value.
    private mutating func array(_ element: (inout FlatSpanReader) -> Bool) -> Bool {
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "[") else { return false }
        index += 1
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return true
        }
        while true {
            guard element(&self) else { return false }
            skipSpace()
            guard index < bytes.count else { return false }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "]") else { return false }
            index += 1
            return true
        }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        skipSpace()
        let length = word.utf8CodeUnitCount
        guard bytes.count - index >= length else { return false }
        for offset in 0..<length where bytes[index + offset] != word.utf8Start[offset] { return false }
        index += length
        return true
    }

    /// A JSON number: an integer that fits 64 bits, or a number with a fraction or exponent as a double.
    private mutating func number() -> Scalar? {
        skipSpace()
        let start = index
        var isDouble = false
        while index < bytes.count, Self.isNumberByte(bytes[index]) {
            let byte = bytes[index]
            if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { isDouble = true }
            index += 1
        }
        guard index > start, Self.isJSONNumber(UnsafeBufferPointer(rebasing: bytes[start..<index])) else { return nil }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if isDouble { return Double(text).flatMap { $0.isFinite ? .double($0) : nil } }
        return Int64(text).map { .int($0) }
    }

    /// JSON's number grammar: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, so that nothing JSON refuses
    /// (`+1`, `01`, `1.`) is read here.
    private static func isJSONNumber(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        var position = 0
        func digits() -> Int {
            let start = position
            while position < text.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(text[position]) {
                position += 1
            }
            return position - start
        }
        if position < text.count, text[position] == UInt8(ascii: "-") { position += 1 }
        guard position < text.count else { return false }
        if text[position] == UInt8(ascii: "0") {
            position += 1
        } else if digits() == 0 {
            return false
        }
        if position < text.count, text[position] == UInt8(ascii: ".") {
            position += 1
            guard digits() > 0 else { return false }
        }
        if position < text.count, text[position] == UInt8(ascii: "e") || text[position] == UInt8(ascii: "E") {
            position += 1
            if position < text.count, text[position] == UInt8(ascii: "+") || text[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard digits() > 0 else { return false }
        }
        return position == text.count
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e")
            || byte == UInt8(ascii: "E")
    }

    /// A JSON string with the escapes JSON allows; `nil` for anything else (a raw control character, a lone
    /// surrogate, invalid UTF-8).
    private mutating func string() -> String? {
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        index += 1
        let start = index
        var ascii = true
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\"),
            bytes[index] >= 0x20
        {
            if bytes[index] >= 0x80 { ascii = false }
            index += 1
        }
        guard index < bytes.count else { return nil }
        if bytes[index] == UInt8(ascii: "\"") {
            let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
            index += 1
            // ASCII needs no validation, and most of what spans hold is ASCII.
            return ascii ? String(decoding: text, as: UTF8.self) : String(validating: text, as: UTF8.self)
        }
        var decoded = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return String(validating: decoded, as: UTF8.self)
            }
            guard byte >= 0x20 else { return nil }
            guard byte == UInt8(ascii: "\\") else {
                decoded.append(byte)
                index += 1
                continue
            }
            guard index + 1 < bytes.count else { return nil }
            index += 2
            switch bytes[index - 1] {
            case UInt8(ascii: "\""): decoded.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): decoded.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "/"): decoded.append(UInt8(ascii: "/"))
            case UInt8(ascii: "b"): decoded.append(0x08)
            case UInt8(ascii: "f"): decoded.append(0x0C)
            case UInt8(ascii: "n"): decoded.append(0x0A)
            case UInt8(ascii: "r"): decoded.append(0x0D)
            case UInt8(ascii: "t"): decoded.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hex4() else { return nil }
                if (0xD800..<0xDC00).contains(scalar) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                        bytes[index + 1] == UInt8(ascii: "u")
                    else { return nil }
                    index += 2
                    guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let unicode = Unicode.Scalar(scalar) else { return nil }
                decoded.append(contentsOf: String(Character(unicode)).utf8)
            default:
                return nil
            }
        }
        return nil
    }

    private mutating func hex4() -> UInt32? {
        guard bytes.count - index >= 4 else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: return nil
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private mutating func skipSpace() {
        while index < bytes.count,
            bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09
        {
            index += 1
        }
    }
}
