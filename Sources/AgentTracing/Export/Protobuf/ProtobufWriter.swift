/// Protocol Buffers wire format, written straight into a byte buffer: the few field encodings OTLP's
/// messages use (varint, fixed64, length-delimited), with nested messages measured after they are
/// written rather than in a separate sizing pass.
///
/// A nested message reserves a guess of its length prefix, writes its fields, then puts the real length
/// in; only when the guess was wrong are the message's bytes moved (by one or two bytes), so the common
/// case copies nothing. Default values (zero numbers, empty strings, `false`) are left out, as proto3
/// encoders do.
struct ProtobufWriter {
    /// The encoded bytes.
    var bytes: [UInt8] = []

    /// The wire types OTLP's fields use.
    enum WireType: UInt8 {
        case varint = 0
        case fixed64 = 1
        case lengthDelimited = 2
        case fixed32 = 5
    }

    init(capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    @inline(__always)
    mutating func tag(_ field: Int, _ type: WireType) {
        varint(UInt64(field) << 3 | UInt64(type.rawValue))
    }

    @inline(__always)
    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: rest))
    }

    /// Bytes a varint of `value` takes.
    @inline(__always)
    static func varintSize(_ value: UInt64) -> Int {
        value == 0 ? 1 : (64 - value.leadingZeroBitCount + 6) / 7
    }

    @inline(__always)
    mutating func littleEndian64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// An unsigned varint field (`uint32`, `uint64`, enums); zero is left out.
    @inline(__always)
    mutating func uintField(_ field: Int, _ value: UInt64) {
        guard value != 0 else { return }
        tag(field, .varint)
        varint(value)
    }

    /// An `int64` field: negative numbers take ten bytes, as the two's-complement varint.
    @inline(__always)
    mutating func int64Field(_ field: Int, _ value: Int64) {
        guard value != 0 else { return }
        tag(field, .varint)
        varint(UInt64(bitPattern: value))
    }

    @inline(__always)
    mutating func boolField(_ field: Int, _ value: Bool) {
        guard value else { return }
        tag(field, .varint)
        bytes.append(1)
    }

    /// A `fixed64` field (OTLP's nanosecond times).
    @inline(__always)
    mutating func fixed64Field(_ field: Int, _ value: UInt64) {
        guard value != 0 else { return }
        tag(field, .fixed64)
        littleEndian64(value)
    }

    /// An `sfixed64` field.
    @inline(__always)
    mutating func sfixed64Field(_ field: Int, _ value: Int64) {
        tag(field, .fixed64)
        littleEndian64(UInt64(bitPattern: value))
    }

    /// A `double` field, written even when zero: callers use it for `oneof` members, where presence counts.
    @inline(__always)
    mutating func doubleField(_ field: Int, _ value: Double) {
        tag(field, .fixed64)
        littleEndian64(value.bitPattern)
    }

    /// A `string` field; an empty one is left out.
    mutating func stringField(_ field: Int, _ text: String) {
        guard !text.isEmpty else { return }
        tag(field, .lengthDelimited)
        appendLengthPrefixed(text)
    }

    /// A `string` field written even when empty (`oneof` members).
    mutating func stringFieldAlways(_ field: Int, _ text: String) {
        tag(field, .lengthDelimited)
        appendLengthPrefixed(text)
    }

    /// A length-delimited field holding `value` as it is (an encoded message, or bytes), written even when empty.
    mutating func lengthDelimitedField(_ field: Int, _ value: some Collection<UInt8>) {
        tag(field, .lengthDelimited)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    private mutating func appendLengthPrefixed(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    /// A `bytes` field holding a trace id's 16 bytes, big-endian as in its hex form.
    @inline(__always)
    mutating func idField(_ field: Int, _ id: TraceID) {
        tag(field, .lengthDelimited)
        bytes.append(16)
        withUnsafeBytes(of: id.high.bigEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: id.low.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// A `bytes` field holding a span id's 8 bytes, big-endian as in its hex form.
    @inline(__always)
    mutating func idField(_ field: Int, _ id: SpanID) {
        tag(field, .lengthDelimited)
        bytes.append(8)
        withUnsafeBytes(of: id.rawValue.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// A nested message: the tag, then the bytes `body` writes, prefixed by their length.
    ///
    /// - Parameter expectedSize: a guess of the body's size, which sets how many bytes the length prefix
    ///   reserves; a wrong guess costs one move of the body, never a wrong encoding.
    @inline(__always)
    mutating func message(_ field: Int, expectedSize: Int = 100, _ body: (inout ProtobufWriter) -> Void) {
        tag(field, .lengthDelimited)
        let reserved = Self.varintSize(UInt64(expectedSize))
        let start = bytes.count
        for _ in 0..<reserved { bytes.append(0) }
        body(&self)
        let length = bytes.count - start - reserved
        let needed = Self.varintSize(UInt64(length))
        if needed != reserved {
            var prefix = ProtobufWriter(capacity: needed)
            prefix.varint(UInt64(length))
            bytes.replaceSubrange(start..<(start + reserved), with: prefix.bytes)
        } else {
            var rest = UInt64(length)
            var index = start
            while rest >= 0x80 {
                bytes[index] = UInt8(truncatingIfNeeded: rest) | 0x80
                rest >>= 7
                index += 1
            }
            bytes[index] = UInt8(truncatingIfNeeded: rest)
        }
    }
}
