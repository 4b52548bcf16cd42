import Synchronization
import ValueFormats

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Replaces registered secret strings (passwords, API keys, passphrases) in text with `REDACTED`.
///
/// The composition root registers every credential it reads (from `--password-env`, a provider's
/// key variable, a key file's passphrase) before any span can see it; the tracer runs every string a
/// span records through ``scrub(_:)``. Matching is on UTF-8 bytes, so a secret is found inside any
/// text, and each secret is also looked for in its percent-encoded forms, upper- and lowercase hex
/// (as it appears in URLs and form bodies). An empty registry costs one atomic load per string.
///
/// Secrets shorter than a few characters redact every occurrence of those characters; that is the
/// price of never letting them through.
public final class SecretScrubber: Sendable {
    /// The published needle table: `[count][(offset, length) × count][bytes]`, longest needle first.
    ///
    /// Every string a span records is scrubbed, from any thread, so readers take no lock and touch no
    /// reference count: they load this pointer and read an immutable table. A registration builds a
    /// new table and publishes it; old tables stay allocated until the scrubber is released, because
    /// a reader may still be inside one. Registrations are few (one per credential), so that is little.
    /// The table's address (0 for none): an integer so the class stays plainly `Sendable`.
    private let published = Atomic<Int>(0)
    /// Writers' state: the needles and every table ever published (to free in `deinit`).
    private let registry = Lock<Registry>(Registry())

    private struct Registry {
        var needles: [[UInt8]] = []
        var tables: [UnsafeMutableRawPointer] = []
    }

    /// A scrubber that knows the given secrets (empty strings are ignored).
    public init(secrets: [String] = []) {
        for secret in secrets { register(secret) }
    }

    deinit {
        registry.withLock { registry in
            for table in registry.tables { table.deallocate() }
        }
    }

    /// Adds a secret; from now on it never survives ``scrub(_:)``.
    public func register(_ secret: String) {
        guard !secret.isEmpty else { return }
        let forms = Set(
            [secret, Self.percentEncoded(secret, uppercase: true), Self.percentEncoded(secret, uppercase: false)]
                .map { Array($0.utf8) })
        registry.withLock { registry in
            let before = registry.needles.count
            for form in forms where !registry.needles.contains(form) {
                registry.needles.append(form)
            }
            guard registry.needles.count > before else { return }
            registry.needles.sort { $0.count > $1.count }
            let table = Self.makeTable(registry.needles)
            registry.tables.append(table)
            published.store(Int(bitPattern: table), ordering: .releasing)
        }
    }

    private static func makeTable(_ needles: [[UInt8]]) -> UnsafeMutableRawPointer {
        let header = MemoryLayout<Int>.stride * (1 + 2 * needles.count)
        let size = header + needles.reduce(0) { $0 + $1.count }
        let table = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<Int>.alignment)
        table.storeBytes(of: needles.count, as: Int.self)
        var offset = header
        for (index, needle) in needles.enumerated() {
            table.storeBytes(of: offset, toByteOffset: MemoryLayout<Int>.stride * (1 + 2 * index), as: Int.self)
            table.storeBytes(of: needle.count, toByteOffset: MemoryLayout<Int>.stride * (2 + 2 * index), as: Int.self)
            needle.withUnsafeBytes { (table + offset).copyMemory(from: $0.baseAddress!, byteCount: needle.count) }
            offset += needle.count
        }
        return table
    }

    /// Whether no secret is registered.
    public var isEmpty: Bool { published.load(ordering: .acquiring) == 0 }

    /// The text with every occurrence of a registered secret replaced by `REDACTED`.
    public func scrub(_ text: String) -> String {
        guard let table = UnsafeRawPointer(bitPattern: published.load(ordering: .acquiring)), !text.isEmpty else {
            return text
        }
        let count = table.load(as: Int.self)
        // Needles are sorted longest first: a text shorter than the last one cannot contain any.
        let shortest = table.load(fromByteOffset: MemoryLayout<Int>.stride * (2 * count), as: Int.self)
        guard text.utf8.count >= shortest else { return text }
        var current = text
        for index in 0..<count {
            let offset = table.load(fromByteOffset: MemoryLayout<Int>.stride * (1 + 2 * index), as: Int.self)
            let length = table.load(fromByteOffset: MemoryLayout<Int>.stride * (2 + 2 * index), as: Int.self)
            let needle = UnsafeBufferPointer(start: (table + offset).assumingMemoryBound(to: UInt8.self), count: length)
            // Native strings are contiguous UTF-8: search them in place and copy only on a match.
            let replaced = current.utf8.withContiguousStorageIfAvailable { Self.replacing(needle, in: $0) }
            switch replaced {
            case .some(.some(let bytes)): current = String(decoding: bytes, as: UTF8.self)
            case .some(.none): continue
            case .none:
                if let bytes = Array(current.utf8).withUnsafeBufferPointer({ Self.replacing(needle, in: $0) }) {
                    current = String(decoding: bytes, as: UTF8.self)
                }
            }
        }
        return current
    }

    /// Every string of the value scrubbed.
    public func scrub(_ value: AttributeValue) -> AttributeValue {
        guard published.load(ordering: .acquiring) != 0 else { return value }
        switch value {
        case .string(let text): return .string(scrub(text))
        case .stringArray(let texts): return .stringArray(texts.map { scrub($0) })
        default: return value
        }
    }

    /// The haystack with non-overlapping occurrences of `needle` replaced, or `nil` when there are none.
    private static func replacing(
        _ needle: UnsafeBufferPointer<UInt8>, in haystack: UnsafeBufferPointer<UInt8>
    ) -> [UInt8]? {
        guard needle.count <= haystack.count, let base = haystack.baseAddress else { return nil }
        do {
            guard let first = needle.first, let needleBase = needle.baseAddress else { return nil }
            var output: [UInt8]?
            var copied = 0
            var position = 0
            let last = haystack.count - needle.count
            while position <= last {
                if haystack[position] == first, memcmp(base + position, needleBase, needle.count) == 0 {
                    if output == nil { output = [] }
                    output!.append(contentsOf: haystack[copied..<position])
                    output!.append(contentsOf: Redaction.marker.utf8)
                    position += needle.count
                    copied = position
                } else {
                    position += 1
                }
            }
            guard var result = output else { return nil }
            result.append(contentsOf: haystack[copied...])
            return result
        }
    }

    /// RFC 3986 percent-encoding of everything but unreserved characters.
    static func percentEncoded(_ text: String, uppercase: Bool) -> String {
        var output: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                output.append(byte)
            default:
                output.append(UInt8(ascii: "%"))
                output.append(Hex.digit(byte >> 4, uppercase: uppercase))
                output.append(Hex.digit(byte, uppercase: uppercase))
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
