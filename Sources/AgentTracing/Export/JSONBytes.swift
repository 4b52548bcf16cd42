/// Byte-level JSON writing for the export hot paths: no intermediate trees, no `String` building
/// for numbers or ids.
extension Array where Element == UInt8 {
    /// Appends ASCII text known at compile time (keys and punctuation).
    @inline(__always)
    mutating func appendRaw(_ text: StaticString) {
        text.withUTF8Buffer { append(contentsOf: $0) }
    }

    /// Appends a decimal number.
    @inline(__always)
    mutating func appendDecimal(_ value: UInt64) {
        if value < 10 {
            append(UInt8(truncatingIfNeeded: value) &+ 48)
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var index = 20
            var rest = value
            while rest > 0 {
                index -= 1
                buffer[index] = UInt8(truncatingIfNeeded: rest % 10) &+ 48
                rest /= 10
            }
            append(contentsOf: UnsafeBufferPointer(rebasing: buffer[index...]))
        }
    }

    /// Appends a signed decimal number.
    @inline(__always)
    mutating func appendDecimal(_ value: Int64) {
        if value < 0 { append(UInt8(ascii: "-")) }
        appendDecimal(value.magnitude)
    }

    /// Appends a number in double quotes, as OTLP JSON writes 64-bit integers.
    @inline(__always)
    mutating func appendQuotedDecimal(_ value: UInt64) {
        append(UInt8(ascii: "\""))
        appendDecimal(value)
        append(UInt8(ascii: "\""))
    }

    /// Appends a double as JSON reads it back exactly; whole numbers keep a `.0` so readers see a
    /// float. Non-finite values have no JSON number; `nonFinite` says what to write instead.
    mutating func appendDouble(_ value: Double, nonFiniteAsStrings: Bool) {
        guard value.isFinite else {
            if nonFiniteAsStrings {
                appendRaw(value.isNaN ? "\"NaN\"" : value < 0 ? "\"-Infinity\"" : "\"Infinity\"")
            } else {
                appendRaw("null")
            }
            return
        }
        if value == value.rounded(), abs(value) < 1e15 {
            appendDecimal(Int64(value))
            appendRaw(".0")
        } else {
            append(contentsOf: value.description.utf8)
        }
    }

    /// Appends ids as lowercase hex in quotes.
    @inline(__always)
    mutating func appendQuotedHex(_ id: TraceID) {
        append(UInt8(ascii: "\""))
        HexDigits.append(id.high, into: &self)
        HexDigits.append(id.low, into: &self)
        append(UInt8(ascii: "\""))
    }

    @inline(__always)
    mutating func appendQuotedHex(_ id: SpanID) {
        append(UInt8(ascii: "\""))
        HexDigits.append(id.rawValue, into: &self)
        append(UInt8(ascii: "\""))
    }

    /// Appends a quoted, escaped JSON string. Escapes `"`, `\`, control characters and U+2028/2029
    /// (valid JSON, but they end lines for some line-oriented readers).
    mutating func appendJSONString(_ text: String) {
        append(UInt8(ascii: "\""))
        let done: Void? = text.utf8.withContiguousStorageIfAvailable { appendEscaped($0) }
        if done == nil {
            var copy = text
            copy.makeContiguousUTF8()
            copy.utf8.withContiguousStorageIfAvailable { appendEscaped($0) }
        }
        append(UInt8(ascii: "\""))
    }

    /// Appends a JSON string cut to `maximumBytes` of UTF-8 (see ``SpanLimits/truncate(_:toBytes:)``).
    @inline(__always)
    mutating func appendJSONString(_ text: String, maximumBytes: Int) {
        if maximumBytes == .max || text.utf8.count <= maximumBytes {
            appendJSONString(text)
        } else {
            appendJSONString(SpanLimits.truncate(text, toBytes: maximumBytes))
        }
    }

    private mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        var clean = 0
        var index = 0
        let count = utf8.count
        while index < count {
            let byte = utf8[index]
            if byte >= 0x20, byte != 0x22, byte != 0x5C, byte != 0xE2 {
                index += 1
                continue
            }
            if byte == 0xE2 {
                // U+2028 and U+2029 are E2 80 A8 / E2 80 A9; every other E2 sequence passes through.
                guard index + 2 < count, utf8[index + 1] == 0x80, utf8[index + 2] == 0xA8 || utf8[index + 2] == 0xA9
                else {
                    index += 1
                    continue
                }
                append(contentsOf: UnsafeBufferPointer(rebasing: utf8[clean..<index]))
                appendRaw(utf8[index + 2] == 0xA8 ? "\\u2028" : "\\u2029")
                index += 3
                clean = index
                continue
            }
            append(contentsOf: UnsafeBufferPointer(rebasing: utf8[clean..<index]))
            switch byte {
            case 0x22: appendRaw("\\\"")
            case 0x5C: appendRaw("\\\\")
            case 0x0A: appendRaw("\\n")
            case 0x0D: appendRaw("\\r")
            case 0x09: appendRaw("\\t")
            case 0x08: appendRaw("\\b")
            case 0x0C: appendRaw("\\f")
            default:
                appendRaw("\\u00")
                append(HexDigits.table[Int(byte >> 4)])
                append(HexDigits.table[Int(byte & 0x0F)])
            }
            index += 1
            clean = index
        }
        append(contentsOf: UnsafeBufferPointer(rebasing: utf8[clean..<count]))
    }
}
