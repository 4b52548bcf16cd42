/// A path on a remote host, as bytes: names need not be valid UTF-8 and must still be addressable
/// exactly (SFTP takes and returns these bytes).
///
/// People see and type paths in the *escaped form* (``escaped``, ``init(escaped:)``): text that
/// is the name itself when that is printable UTF-8, with
/// - a backslash written `\\`,
/// - newline, tab and carriage return written `\n`, `\t`, `\r`,
/// - every other control character (C0, DEL, C1), the bidirectional overrides, and every byte
///   that is not part of valid UTF-8 written `\xHH`, one escape per byte (`caf\xe9` is the
///   Latin-1 name "café").
///
/// The form is reversible, safe to print on a terminal, and accepted by every path argument.
public struct RemotePath: Sendable, Hashable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The path's bytes as the server stores them.
    public var bytes: [UInt8]

    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// A path whose bytes are exactly the UTF-8 of `string` (no escapes are interpreted).
    public init(_ string: String) {
        bytes = Array(string.utf8)
    }

    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// Reads the escaped form: `\\`, `\n`, `\t`, `\r` and `\xHH` are decoded; a backslash before
    /// anything else is kept as a backslash, so hand-typed names with a lone backslash still work.
    public init(escaped text: String) {
        bytes = EscapedText.decode(text)
    }

    /// The escaped form (see the type's documentation).
    public var escaped: String { EscapedText.encode(bytes) }

    public var description: String { escaped }

    /// Whether the bytes are valid UTF-8.
    public var isUTF8: Bool { String(validating: bytes, as: UTF8.self) != nil }

    /// Byte order, which is the C locale's collation (how `LC_ALL=C ls` sorts).
    public static func < (lhs: RemotePath, rhs: RemotePath) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }

    public var isAbsolute: Bool { bytes.first == UInt8(ascii: "/") }

    /// The last component (`log` for `/var/log/`, `/` for `/`).
    public var lastComponent: [UInt8] {
        let parts = components
        if parts.isEmpty { return isAbsolute ? [UInt8(ascii: "/")] : [UInt8(ascii: ".")] }
        return parts[parts.count - 1]
    }

    /// The non-empty components between slashes.
    public var components: [[UInt8]] {
        bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).map(Array.init)
    }

    /// `self/name` with one slash between; a path of `.` yields `name` alone, so that paths shown
    /// for entries of the current directory read as a person would type them.
    public func appending(_ name: [UInt8]) -> RemotePath {
        if bytes.isEmpty || bytes == [UInt8(ascii: ".")] { return RemotePath(bytes: name) }
        var result = bytes
        if result.last != UInt8(ascii: "/") { result.append(UInt8(ascii: "/")) }
        result.append(contentsOf: name)
        return RemotePath(bytes: result)
    }

    /// The path up to its last component (`.` for a bare name, `/` for `/name`).
    public var parent: RemotePath {
        var trimmed = bytes
        while trimmed.count > 1 && trimmed.last == UInt8(ascii: "/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: UInt8(ascii: "/")) else { return RemotePath(".") }
        if slash == 0 { return RemotePath("/") }
        return RemotePath(bytes: Array(trimmed[..<slash]))
    }

    /// Whether `self` is `ancestor` or lies below it (component-wise: `/srv/app2` is not below `/srv/app`).
    public func isWithin(_ ancestor: RemotePath) -> Bool {
        let mine = components
        let theirs = ancestor.components
        return mine.count >= theirs.count && Array(mine.prefix(theirs.count)) == theirs
    }
}

/// The escaped form of byte strings (see ``RemotePath``).
public enum EscapedText {
    /// The escaped form of `bytes`.
    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x80 {
                switch byte {
                case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
                case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
                case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
                case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
                case 0x00..<0x20, 0x7F: appendHex(byte, to: &out)
                default: out.append(byte)
                }
                index += 1
                continue
            }
            let length = validSequenceLength(bytes, at: index)
            if length == 0 {
                appendHex(byte, to: &out)
                index += 1
                continue
            }
            let scalar = decodeScalar(bytes, at: index, length: length)
            if needsEscape(scalar) {
                for offset in 0..<length { appendHex(bytes[index + offset], to: &out) }
            } else {
                out += bytes[index..<index + length]
            }
            index += length
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes an escaped text stands for (lenient: unknown escapes stay literal).
    public static func decode(_ text: String) -> [UInt8] {
        let input = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            let byte = input[index]
            guard byte == UInt8(ascii: "\\"), index + 1 < input.count else {
                out.append(byte)
                index += 1
                continue
            }
            switch input[index + 1] {
            case UInt8(ascii: "\\"):
                out.append(UInt8(ascii: "\\"))
                index += 2
            case UInt8(ascii: "n"):
                out.append(0x0A)
                index += 2
            case UInt8(ascii: "t"):
                out.append(0x09)
                index += 2
            case UInt8(ascii: "r"):
                out.append(0x0D)
                index += 2
            case UInt8(ascii: "x") where index + 3 < input.count:
                if let high = Hex.value(of: input[index + 2]), let low = Hex.value(of: input[index + 3]) {
                    out.append(high << 4 | low)
                    index += 4
                } else {
                    out.append(byte)
                    index += 1
                }
            default:
                out.append(byte)
                index += 1
            }
        }
        return out
    }

    /// C1 controls and the bidirectional overrides and isolates that reorder what a terminal shows.
    private static func needsEscape(_ scalar: UInt32) -> Bool {
        switch scalar {
        case 0x80..<0xA0, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    private static func appendHex(_ byte: UInt8, to out: inout [UInt8]) {
        out += [UInt8(ascii: "\\"), UInt8(ascii: "x"), Hex.digit(byte >> 4), Hex.digit(byte)]
    }

    /// Length of the well-formed UTF-8 sequence starting at `index` (RFC 3629: no overlongs, no
    /// surrogates, nothing above U+10FFFF), or 0.
    public static func validSequenceLength(_ bytes: [UInt8], at index: Int) -> Int {
        let lead = bytes[index]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: return 0
        }
        guard index + length <= bytes.count else { return 0 }
        let second = bytes[index + 1]
        guard second >= low && second <= high else { return 0 }
        for offset in 2..<max(2, length) where !(0x80...0xBF).contains(bytes[index + offset]) { return 0 }
        return length
    }

    private static func decodeScalar(_ bytes: [UInt8], at index: Int, length: Int) -> UInt32 {
        var value = UInt32(bytes[index]) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
        for offset in 1..<length { value = value << 6 | UInt32(bytes[index + offset] & 0x3F) }
        return value
    }
}

extension RemotePath {
    /// Whether `path` is an absolute path of ASCII letters, digits, `.`, `_`, `-` and `/`, at most 1024 bytes:
    /// one a shell script holds unquoted and a probe's `PATH:line` output cannot misread (the textfile
    /// directory).
    public static func isPlainAbsolute(_ path: String) -> Bool {
        path.hasPrefix("/") && path.utf8.count <= 1024
            && path.unicodeScalars.allSatisfy { scalar in
                ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                    || "._-/".unicodeScalars.contains(scalar)
            }
    }
}
