#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Replaces registered secret strings (passwords, API keys, passphrases) in text with `REDACTED`.
///
/// The composition root registers every credential it reads (from `--password-env`, a provider's
/// key variable, a key file's passphrase) before any span can see it; the tracer runs every string a
/// span records through ``scrub(_:)``. Matching is on UTF-8 bytes, so a secret is found inside any
/// text, and each secret is also looked for in its percent-encoded forms (upper- and lowercase hex) (as it appears in URLs and
/// form bodies). An empty registry costs one atomic load per string.
public final class SecretScrubber: Sendable {
    private struct State {
        /// Needles, longest first, so a secret that contains another is replaced whole.
        var needles: [[UInt8]] = []
    }

    private let state = Mutex(State())
    private let needleCount = Atomic<Int>(0)

    /// A scrubber that knows the given secrets (empty strings are ignored).
    public init(secrets: [String] = []) {
        for secret in secrets { register(secret) }
    }

    /// Adds a secret; from now on it never survives ``scrub(_:)``.
    public func register(_ secret: String) {
        guard !secret.isEmpty else { return }
        let forms = Set([secret, Self.percentEncoded(secret, uppercase: true), Self.percentEncoded(secret, uppercase: false)].map { Array($0.utf8) })
        let count = state.withLock { state in
            for form in forms where !state.needles.contains(form) {
                state.needles.append(form)
            }
            state.needles.sort { $0.count > $1.count }
            return state.needles.count
        }
        needleCount.store(count, ordering: .releasing)
    }

    /// Whether no secret is registered.
    public var isEmpty: Bool { needleCount.load(ordering: .acquiring) == 0 }

    /// The text with every occurrence of a registered secret replaced by `REDACTED`.
    public func scrub(_ text: String) -> String {
        guard needleCount.load(ordering: .acquiring) > 0, !text.isEmpty else { return text }
        let needles = state.withLock { $0.needles }
        var bytes = Array(text.utf8)
        var changed = false
        for needle in needles where needle.count <= bytes.count {
            if let replaced = Self.replacing(needle, in: bytes) {
                bytes = replaced
                changed = true
            }
        }
        return changed ? String(decoding: bytes, as: UTF8.self) : text
    }

    /// Every string of the value scrubbed.
    public func scrub(_ value: AttributeValue) -> AttributeValue {
        guard needleCount.load(ordering: .acquiring) > 0 else { return value }
        switch value {
        case .string(let text): return .string(scrub(text))
        case .stringArray(let texts): return .stringArray(texts.map { scrub($0) })
        default: return value
        }
    }

    /// `bytes` with non-overlapping occurrences of `needle` replaced, or `nil` when there are none.
    private static func replacing(_ needle: [UInt8], in bytes: [UInt8]) -> [UInt8]? {
        bytes.withUnsafeBufferPointer { haystack -> [UInt8]? in
            needle.withUnsafeBufferPointer { needle -> [UInt8]? in
                guard let first = needle.first, let needleBase = needle.baseAddress,
                    let base = haystack.baseAddress
                else { return nil }
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
    }

    /// RFC 3986 percent-encoding of everything but unreserved characters.
    static func percentEncoded(_ text: String, uppercase: Bool) -> String {
        let digits = Array((uppercase ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
        var output: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                output.append(byte)
            default:
                output.append(UInt8(ascii: "%"))
                output.append(digits[Int(byte >> 4)])
                output.append(digits[Int(byte & 0xF)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
