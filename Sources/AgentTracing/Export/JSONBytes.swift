import OrderedJSON
import ValueFormats

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
        Hex.append(id.high, into: &self)
        Hex.append(id.low, into: &self)
        append(UInt8(ascii: "\""))
    }

    @inline(__always)
    mutating func appendQuotedHex(_ id: SpanID) {
        append(UInt8(ascii: "\""))
        Hex.append(id.rawValue, into: &self)
        append(UInt8(ascii: "\""))
    }

    /// Appends a quoted, escaped JSON string (``JSONWriter/appendString(_:into:)``, the one escaper).
    @inline(__always)
    mutating func appendJSONString(_ text: String) {
        JSONWriter.appendString(text, into: &self)
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
}
