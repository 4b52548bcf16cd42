import ValueFormats

/// Serialises ``JSONValue`` trees, and raw values for hand-written fast paths, to UTF-8 bytes.
///
/// Output is RFC 8259 JSON: strings escape `"`, `\\` and control characters (and U+2028/2029
/// so that a line of NDJSON stays one line for every consumer); non-finite doubles, which JSON
/// cannot represent, become `null`.
///
/// DEL, the C1 controls (U+0080–U+009F) and the bidirectional overrides (U+202A–U+202E,
/// U+2066–U+2069) are escaped too (`\u009b`), though JSON would allow them raw: strings come
/// from hosts, and JSON printed on a terminal must not be able to drive it or reorder what it
/// shows. A parser reads back the same string.
public struct JSONWriter: Sendable {
    /// Whether to indent nested containers with two spaces.
    public var pretty: Bool

    public init(pretty: Bool = false) {
        self.pretty = pretty
    }

    /// The value as a `String`.
    public func string(_ value: JSONValue) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        write(value, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the value's serialisation to `bytes`.
    public func write(_ value: JSONValue, into bytes: inout [UInt8]) {
        write(value, into: &bytes, depth: 0)
    }

    private func write(_ value: JSONValue, into bytes: inout [UInt8], depth: Int) {
        switch value {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case .int(let number): Self.appendInteger(number, into: &bytes)
        case .uint(let number): bytes.append(contentsOf: String(number).utf8)
        case .double(let number): Self.appendDouble(number, into: &bytes)
        case .string(let text): Self.appendString(text, into: &bytes)
        case .array(let elements):
            if elements.isEmpty {
                bytes.append(contentsOf: "[]".utf8)
                return
            }
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(into: &bytes, depth: depth + 1)
                write(element, into: &bytes, depth: depth + 1)
            }
            newline(into: &bytes, depth: depth)
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            if object.isEmpty {
                bytes.append(contentsOf: "{}".utf8)
                return
            }
            bytes.append(UInt8(ascii: "{"))
            for (index, member) in object.members.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(into: &bytes, depth: depth + 1)
                Self.appendString(member.key, into: &bytes)
                bytes.append(UInt8(ascii: ":"))
                if pretty { bytes.append(UInt8(ascii: " ")) }
                write(member.value, into: &bytes, depth: depth + 1)
            }
            newline(into: &bytes, depth: depth)
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private func newline(into bytes: inout [UInt8], depth: Int) {
        guard pretty else { return }
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: depth * 2))
    }

    /// Appends a decimal integer without going through `String`.
    @inlinable
    public static func appendInteger(_ value: Int64, into bytes: inout [UInt8]) {
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
            // Int64.min has no positive counterpart; its magnitude fits in UInt64.
            appendUnsigned(value.magnitude, into: &bytes)
        } else {
            appendUnsigned(UInt64(value), into: &bytes)
        }
    }

    @inlinable
    public static func appendUnsigned(_ value: UInt64, into bytes: inout [UInt8]) {
        if value < 10 {
            bytes.append(UInt8(truncatingIfNeeded: value) &+ 48)
            return
        }
        var digits: (UInt64, Int) = (value, 0)
        var buffer = [UInt8](repeating: 0, count: 20)
        while digits.0 > 0 {
            buffer[19 - digits.1] = UInt8(truncatingIfNeeded: digits.0 % 10) &+ 48
            digits.0 /= 10
            digits.1 += 1
        }
        bytes.append(contentsOf: buffer[(20 - digits.1)...])
    }

    /// Appends the shortest representation that reads back as the same `Double`.
    public static func appendDouble(_ value: Double, into bytes: inout [UInt8]) {
        guard value.isFinite else {
            bytes.append(contentsOf: "null".utf8)
            return
        }
        if value == value.rounded(), abs(value) < 1e15 {
            // Whole numbers print as "12.0" in Swift; keep the fraction so readers see a float.
            appendInteger(Int64(value), into: &bytes)
            bytes.append(contentsOf: ".0".utf8)
            return
        }
        bytes.append(contentsOf: value.description.utf8)
    }

    /// Appends a quoted, escaped JSON string: the one JSON string escaper of hostscope (records,
    /// spans, OTLP lines, chat events), with the policy above.
    public static func appendString(_ value: String, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        let done: Void? = value.utf8.withContiguousStorageIfAvailable { appendEscaped($0, into: &bytes) }
        if done == nil {
            var copy = value
            copy.makeContiguousUTF8()
            copy.utf8.withContiguousStorageIfAvailable { appendEscaped($0, into: &bytes) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Copies runs that need no escape whole, so a plain string costs one scan and one copy.
    private static func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>, into bytes: inout [UInt8]) {
        var clean = 0
        var index = 0
        let count = utf8.count
        while index < count {
            let byte = utf8[index]
            if byte >= 0x20, byte != 0x22, byte != 0x5C, byte != 0x7F, byte != 0xC2, byte != 0xE2 {
                index += 1
                continue
            }
            let length: Int
            let escape: UInt16?
            switch byte {
            case 0xC2:
                // U+0080–U+009F are C2 80–C2 9F.
                guard index + 1 < count, (0x80...0x9F).contains(utf8[index + 1]) else {
                    index += 1
                    continue
                }
                length = 2
                escape = UInt16(utf8[index + 1])
            case 0xE2:
                // U+2028/2029 (E2 80 A8/A9) end lines for some readers; U+202A–U+202E (E2 80 AA–AE) and
                // U+2066–U+2069 (E2 81 A6–A9) reorder what a terminal shows.
                guard index + 2 < count,
                    (utf8[index + 1] == 0x80 && (0xA8...0xAE).contains(utf8[index + 2]))
                        || (utf8[index + 1] == 0x81 && (0xA6...0xA9).contains(utf8[index + 2]))
                else {
                    index += 1
                    continue
                }
                length = 3
                escape = 0x2000 | UInt16(utf8[index + 1] & 0x3F) << 6 | UInt16(utf8[index + 2] & 0x3F)
            default:
                length = 1
                escape = nil
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[clean..<index]))
            switch (byte, escape) {
            case (_, let scalar?): appendEscape(scalar, into: &bytes)
            case (0x22, _): bytes.append(contentsOf: [0x5C, 0x22])
            case (0x5C, _): bytes.append(contentsOf: [0x5C, 0x5C])
            case (0x0A, _): bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case (0x0D, _): bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case (0x09, _): bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case (0x08, _): bytes.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case (0x0C, _): bytes.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            default: appendEscape(UInt16(byte), into: &bytes)
            }
            index += length
            clean = index
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[clean..<count]))
    }

    /// `\\uXXXX` for a scalar below U+10000.
    private static func appendEscape(_ scalar: UInt16, into bytes: inout [UInt8]) {
        bytes.append(contentsOf: [0x5C, UInt8(ascii: "u")])
        for shift in stride(from: 12, through: 0, by: -4) {
            bytes.append(Hex.digit(UInt8(truncatingIfNeeded: scalar >> UInt16(shift))))
        }
    }
}

extension JSONValue {
    /// Compact JSON text.
    public var jsonString: String { JSONWriter().string(self) }

    /// Indented JSON text.
    public var prettyJSONString: String { JSONWriter(pretty: true).string(self) }
}
