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

    /// Appends a quoted, escaped JSON string.
    public static func appendString(_ value: String, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var utf8 = value.utf8
        let needsEscaping = utf8.withContiguousStorageIfAvailable { buffer in
            buffer.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 }
        }
        if needsEscaping == false {
            bytes.append(contentsOf: utf8)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        if needsEscaping == nil {
            var copy = value
            copy.makeContiguousUTF8()
            utf8 = copy.utf8
        }
        var iterator = utf8.makeIterator()
        var pending: [UInt8] = []
        while let byte = iterator.next() {
            switch byte {
            case 0x22: bytes.append(contentsOf: "\\\"".utf8)
            case 0x5C: bytes.append(contentsOf: "\\\\".utf8)
            case 0x0A: bytes.append(contentsOf: "\\n".utf8)
            case 0x0D: bytes.append(contentsOf: "\\r".utf8)
            case 0x09: bytes.append(contentsOf: "\\t".utf8)
            case 0x08: bytes.append(contentsOf: "\\b".utf8)
            case 0x0C: bytes.append(contentsOf: "\\f".utf8)
            case 0x00..<0x20, 0x7F:
                appendEscape(UInt16(byte), into: &bytes)
            case 0xC2:
                // U+0080–U+009F are C2 80–C2 9F.
                guard let second = iterator.next() else {
                    bytes.append(byte)
                    break
                }
                if (0x80...0x9F).contains(second) {
                    appendEscape(UInt16(second), into: &bytes)
                } else {
                    bytes.append(byte)
                    bytes.append(second)
                }
            case 0xE2:
                // U+2028 and U+2029 (E2 80 A8/A9) are valid JSON but break line-oriented readers.
                pending = [byte]
                if let second = iterator.next() {
                    pending.append(second)
                    if let third = iterator.next() {
                        pending.append(third)
                    }
                }
                // U+2028/2029 (E2 80 A8/A9), U+202A–U+202E (E2 80 AA–AE), U+2066–U+2069 (E2 81 A6–A9).
                if pending.count == 3,
                    (pending[1] == 0x80 && (0xA8...0xAE).contains(pending[2]))
                        || (pending[1] == 0x81 && (0xA6...0xA9).contains(pending[2]))
                {
                    let scalar = 0x2000 | UInt16(pending[1] & 0x3F) << 6 | UInt16(pending[2] & 0x3F)
                    appendEscape(scalar, into: &bytes)
                } else {
                    // The bytes after E2 may themselves need escaping (only in malformed input,
                    // which String never holds), so appending them as they are is safe.
                    bytes.append(contentsOf: pending)
                }
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// `\\uXXXX` for a scalar below U+10000.
    private static func appendEscape(_ scalar: UInt16, into bytes: inout [UInt8]) {
        bytes.append(contentsOf: "\\u".utf8)
        for shift in stride(from: 12, through: 0, by: -4) {
            bytes.append(hexDigit(UInt8((scalar >> UInt16(shift)) & 0x0F)))
        }
    }

    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? nibble + 48 : nibble + 87
    }
}

extension JSONValue {
    /// Compact JSON text.
    public var jsonString: String { JSONWriter().string(self) }

    /// Indented JSON text.
    public var prettyJSONString: String { JSONWriter(pretty: true).string(self) }
}
