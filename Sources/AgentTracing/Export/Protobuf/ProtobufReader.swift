/// Reads Protocol Buffers wire format field by field: enough to read the small messages receivers answer
/// with (an OTLP export response's partial success, a `google.rpc.Status`), skipping fields it does not know.
struct ProtobufReader {
    private let bytes: ArraySlice<UInt8>
    private var index: Int

    /// One field as read: its number and its value in the form its wire type carries.
    enum Field {
        case varint(Int, UInt64)
        case fixed64(Int, UInt64)
        case lengthDelimited(Int, ArraySlice<UInt8>)
        case fixed32(Int, UInt32)
    }

    /// The message's bytes are not valid wire format.
    struct Malformed: Error {}

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        index = bytes.startIndex
    }

    /// The next field, or `nil` at the end of the message.
    mutating func next() throws(Malformed) -> Field? {
        guard index < bytes.endIndex else { return nil }
        let key = try varint()
        let number = Int(key >> 3)
        guard number > 0 else { throw Malformed() }
        switch key & 7 {
        case 0:
            return .varint(number, try varint())
        case 1:
            guard bytes.endIndex - index >= 8 else { throw Malformed() }
            var value: UInt64 = 0
            for offset in 0..<8 { value |= UInt64(bytes[index + offset]) << (8 * offset) }
            index += 8
            return .fixed64(number, value)
        case 2:
            let length = try varint()
            guard length <= UInt64(bytes.endIndex - index) else { throw Malformed() }
            let start = index
            index += Int(length)
            return .lengthDelimited(number, bytes[start..<index])
        case 5:
            guard bytes.endIndex - index >= 4 else { throw Malformed() }
            var value: UInt32 = 0
            for offset in 0..<4 { value |= UInt32(bytes[index + offset]) << (8 * offset) }
            index += 4
            return .fixed32(number, value)
        default:
            // Groups (3, 4) are long obsolete and never in these messages.
            throw Malformed()
        }
    }

    private mutating func varint() throws(Malformed) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while index < bytes.endIndex, shift < 64 {
            let byte = bytes[index]
            index += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        throw Malformed()
    }
}
