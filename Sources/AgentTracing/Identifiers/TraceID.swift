import ValueFormats

/// A W3C trace id: 16 bytes, never all zero.
///
/// Stored as two big-endian halves so that comparing, hashing and hex encoding work on two
/// machine words instead of a byte array.
public struct TraceID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The first eight bytes, big-endian.
    public let high: UInt64
    /// The last eight bytes, big-endian.
    public let low: UInt64

    /// An id from its two halves; `nil` when both are zero, which W3C reserves for "invalid".
    public init?(high: UInt64, low: UInt64) {
        guard high != 0 || low != 0 else { return nil }
        self.high = high
        self.low = low
    }

    /// An id from 32 lowercase hex digits, as in `traceparent` and OTLP JSON; `nil` otherwise.
    public init?(hex: some StringProtocol) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 32, let high = Hex.parseUInt64(utf8[0..<16]),
            let low = Hex.parseUInt64(utf8[16..<32])
        else { return nil }
        self.init(high: high, low: low)
    }

    /// The 16 bytes, most significant first.
    public var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }

    /// 32 lowercase hex digits.
    public var hex: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        Hex.append(high, into: &bytes)
        Hex.append(low, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    public var description: String { hex }

    public static func < (lhs: TraceID, rhs: TraceID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}

/// A W3C span id (parent-id): 8 bytes, never all zero.
public struct SpanID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The eight bytes as one big-endian integer.
    public let rawValue: UInt64

    /// An id from its integer value; `nil` for zero, which W3C reserves for "invalid".
    public init?(_ rawValue: UInt64) {
        guard rawValue != 0 else { return nil }
        self.rawValue = rawValue
    }

    /// An id from 16 lowercase hex digits; `nil` otherwise.
    public init?(hex: some StringProtocol) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 16, let value = Hex.parseUInt64(utf8[...]) else { return nil }
        self.init(value)
    }

    /// The 8 bytes, most significant first.
    public var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: rawValue >> (56 - 8 * $0)) }
    }

    /// 16 lowercase hex digits.
    public var hex: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        Hex.append(rawValue, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    public var description: String { hex }

    public static func < (lhs: SpanID, rhs: SpanID) -> Bool { lhs.rawValue < rhs.rawValue }
}
