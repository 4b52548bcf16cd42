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

    /// Initializes libcrypto without its exit-time clean-up (once per process; later calls return at once).
    ///
    /// By default the first call into libcrypto registers `OPENSSL_cleanup` with `atexit`: it frees the
    /// library's locks and tables while other threads may still be inside it. A process that exits
    /// while a session is still being set up (a shell completion that gave up on a host, the warm-up
    /// below still running) then crashed in a freed lock, now and then. Only the first initialization
    /// decides, so every path into libcrypto here (libssh2's set-up, the warm-up, digests) makes this
    /// call first; the memory is the system's to reclaim at exit.
    public static func keepThroughExit() {
        _ = initializedWithoutCleanup
    }

    private static let initializedWithoutCleanup: Bool = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil) == 1

    private static let done: Bool = {
        keepThroughExit()
        _ = SHA256.hash([])
        var bytes = [UInt8](repeating: 0, count: 16)
        return bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, 16) } == 1
    }()
}
