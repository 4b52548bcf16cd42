internal import CLibCrypto
import ValueFormats

/// SHA-256 (FIPS 180-4), incremental, computed by OpenSSL's libcrypto.
///
/// Used for OpenSSH-style key fingerprints (`SHA256:…`) and for the checksums of downloaded
/// files, where hashing runs beside a transfer at hundreds of MB/s: libcrypto uses the CPU's SHA
/// instructions. A value type: copying a hasher part-way and finishing both copies gives two
/// independent digests.
public struct SHA256: Sendable {
    private var context: DigestContext

    public init() {
        context = DigestContext()
    }

    /// The digest of `bytes`.
    public static func hash<Bytes: Sequence>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var hasher = SHA256()
        hasher.update(Array(bytes))
        return hasher.finalize()
    }

    /// Feeds more input.
    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { update($0) }
    }

    /// Feeds more input from a buffer.
    public mutating func update(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard !bytes.isEmpty else { return }
        if !isKnownUniquelyReferenced(&context) { context = context.copy() }
        EVP_DigestUpdate(context.pointer, bytes.baseAddress, bytes.count)
    }

    /// The 32-byte digest of everything fed so far. The hasher is spent afterwards; feeding it
    /// again starts a new digest.
    public mutating func finalize() -> [UInt8] {
        if !isKnownUniquelyReferenced(&context) { context = context.copy() }
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context.pointer, &digest, &length)
        context = DigestContext()
        return Array(digest.prefix(Int(length)))
    }

    /// Lower-case hex of a digest.
    public static func hex(_ digest: [UInt8]) -> String {
        Hex.string(digest)
    }
}

/// Owns one `EVP_MD_CTX`, freed in `deinit`.
// @unchecked Sendable: the context is mutated only through a `SHA256` value that holds the sole
// reference (copy-on-write checks `isKnownUniquelyReferenced` first).
final class DigestContext: @unchecked Sendable {
    let pointer: OpaquePointer

    init() {
        CryptoWarmUp.keepThroughExit()
        // EVP_MD_CTX_new fails only when memory is exhausted, where nothing can continue anyway.
        pointer = EVP_MD_CTX_new()!
        EVP_DigestInit_ex(pointer, EVP_sha256(), nil)
    }

    private init(copying other: DigestContext) {
        pointer = EVP_MD_CTX_new()!
        EVP_MD_CTX_copy_ex(pointer, other.pointer)
    }

    func copy() -> DigestContext {
        DigestContext(copying: self)
    }

    deinit {
        EVP_MD_CTX_free(pointer)
    }
}
