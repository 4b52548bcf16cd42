internal import CLibCrypto

/// Gets libcrypto's one-time set-up done ahead of the first connection that needs it.
///
/// The first digest and the first random bytes of a process make OpenSSL read its configuration,
/// load its default provider and seed its generator: about 3 ms here. libssh2 needs its first
/// random bytes for its key-exchange message, which it sends as soon as the server's banner
/// arrives, so that set-up would sit between the banner and the key exchange. Run on another thread
/// while the TCP connection is made and the banner awaited, it costs a connection nothing.
public enum CryptoWarmUp {
    /// Does the set-up (once per process; later calls return at once).
    public static func run() {
        _ = done
    }

    private static let done: Bool = {
        _ = SHA256.hash([])
        var bytes = [UInt8](repeating: 0, count: 16)
        return bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, 16) } == 1
    }()
}
