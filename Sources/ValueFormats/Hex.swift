/// Hexadecimal digits: digests, trace and span ids, escapes of bytes, percent-encoding.
public enum Hex {
    /// The lowercase ASCII digits, by value.
    public static let lowercaseDigits: [UInt8] = Array("0123456789abcdef".utf8)
    /// The uppercase ASCII digits, by value.
    public static let uppercaseDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// The ASCII digit of a value below 16.
    @inlinable
    public static func digit(_ nibble: UInt8, uppercase: Bool = false) -> UInt8 {
        (uppercase ? uppercaseDigits : lowercaseDigits)[Int(nibble & 0x0F)]
    }

    /// The value of one hex digit; with `lowercaseOnly`, `A`–`F` are refused (W3C trace ids).
    @inlinable
    public static func value(of digit: UInt8, lowercaseOnly: Bool = false) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F") where !lowercaseOnly: digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Two lowercase digits per byte: `0a1b…`.
    public static func string<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(lowercaseDigits[Int(byte >> 4)])
            out.append(lowercaseDigits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `value` in hex, left-padded with zeros to `width` digits.
    public static func string<Value: BinaryInteger>(_ value: Value, width: Int, uppercase: Bool = false) -> String {
        let digits = String(value, radix: 16, uppercase: uppercase)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    /// Appends the 16 lowercase digits of `value`, most significant first.
    @inlinable
    public static func append(_ value: UInt64, into bytes: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { buffer in
            lowercaseDigits.withUnsafeBufferPointer { digits in
                for index in 0..<16 {
                    buffer[index] = digits[Int(truncatingIfNeeded: (value >> (60 - 4 * UInt64(index))) & 0xF)]
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(buffer))
        }
    }

    /// Reads exactly 16 lowercase digits, the form of W3C trace and span ids.
    @inlinable
    public static func parseUInt64<Digits: Collection<UInt8>>(_ digits: Digits) -> UInt64? {
        guard digits.count == 16 else { return nil }
        var value: UInt64 = 0
        for byte in digits {
            guard let nibble = Hex.value(of: byte, lowercaseOnly: true) else { return nil }
            value = value << 4 | UInt64(nibble)
        }
        return value
    }
}
