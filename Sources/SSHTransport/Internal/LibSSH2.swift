import CLibSSH2
import Foundation
import ValueFormats

/// Process-wide libssh2 set-up and small helpers shared by the session code.
enum LibSSH2 {
    /// `libssh2_init` is not thread-safe and must run once before any session exists.
    static let initialized: Bool = {
        libssh2_init(0) == 0
    }()

    static let eagain = Int32(LIBSSH2_ERROR_EAGAIN)

    /// The last error libssh2 recorded for `session`: its code and message.
    static func lastError(_ session: OpaquePointer) -> (code: Int32, message: String) {
        var message: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        let code = libssh2_session_last_error(session, &message, &length, 0)
        let text = message.map { String(cString: $0) } ?? "unknown error"
        return (code, text)
    }

    /// The default cipher order, of which only the names the linked libssh2 has are proposed.
    ///
    /// The AEAD ciphers come first: libssh2 decrypts them a packet per call, but CTR ciphers one
    /// 16-byte block per call, which makes CTR the dearest part of a download on the client. libssh2
    /// 1.10 has none of them (AES-GCM came in 1.11, chacha20-poly1305 in 1.11.1), so with it the
    /// order is OpenSSH's among CTR ciphers: aes128-ctr first.
    static let preferredCiphers = [
        "aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "chacha20-poly1305@openssh.com", "aes128-ctr",
        "aes192-ctr", "aes256-ctr",
    ]

    /// The default MAC order's head, of which only the names the linked libssh2 has are proposed.
    ///
    /// Encrypt-then-MAC first (libssh2 1.11 has it, 1.10 not). Then, among the plain HMACs, SHA-512
    /// before SHA-256 unless this CPU has SHA-256 instructions: without them a 64-bit CPU hashes
    /// SHA-512 about 1.5× as fast (577 against 392 MB/s through OpenSSL on this project's machine), and
    /// with libssh2 1.10 the MAC is most of the CPU each received byte costs, on the host's sshd too.
    /// Neither is weaker than the other for a MAC.
    static let preferredMACs: [String] = {
        let etm = ["hmac-sha2-512-etm@openssh.com", "hmac-sha2-256-etm@openssh.com"]
        return etm + (sha256Accelerated ? ["hmac-sha2-256", "hmac-sha2-512"] : ["hmac-sha2-512", "hmac-sha2-256"])
    }()

    /// Whether this CPU hashes SHA-256 in hardware (x86 SHA extensions, Arm's SHA2 without SHA512), as
    /// Linux's `/proc/cpuinfo` lists its features.
    static let sha256Accelerated: Bool = {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return false }
        for line in text.split(separator: "\n") where line.hasPrefix("flags") || line.hasPrefix("Features") {
            let features = Set(line.split(separator: " ").map(String.init))
            return features.contains("sha_ni") || (features.contains("sha2") && !features.contains("sha512"))
        }
        return false
    }()

    /// Sets what the session proposes for each kind of algorithm: ssh_config's list when there is one
    /// (``AlgorithmList``), otherwise libssh2's own order, except for ciphers and MACs, which follow
    /// ``preferredCiphers`` and ``preferredMACs``: libssh2 would put aes256-ctr and hmac-sha2-256 first,
    /// which cost both ends more CPU per byte for no gain a user asked for. Every algorithm libssh2
    /// supports stays in the default proposal after these, so servers with only older ones still connect.
    static func applyAlgorithmPreferences(
        _ session: OpaquePointer, _ preferences: SSHAlgorithmPreferences, host: String
    ) throws(SSHError) {
        let methods: [(SSHAlgorithmKind, [Int32])] = [
            (.kex, [LIBSSH2_METHOD_KEX]), (.hostKey, [LIBSSH2_METHOD_HOSTKEY]),
            (.cipher, [LIBSSH2_METHOD_CRYPT_CS, LIBSSH2_METHOD_CRYPT_SC]),
            (.mac, [LIBSSH2_METHOD_MAC_CS, LIBSSH2_METHOD_MAC_SC]),
        ]
        for (kind, types) in methods {
            for method in types {
                let supported = supportedAlgorithms(session, method)
                guard !supported.isEmpty else { continue }
                let preferred = kind == .cipher ? preferredCiphers : kind == .mac ? preferredMACs : []
                let defaults = preferred.filter(supported.contains) + supported.filter { !preferred.contains($0) }
                guard preferences[kind] != nil || !preferred.isEmpty else { continue }
                let order: [String]
                do {
                    order = try AlgorithmList.resolve(preferences[kind], defaults: defaults, supported: supported)
                } catch {
                    let source = preferences.sources[kind].map { " (\($0))" } ?? ""
                    throw SSHError(
                        .config,
                        "\(host): \(kind.keyword) \(preferences[kind] ?? "")\(source) leaves no \(kind.noun) that this "
                            + "build's libssh2 supports; it has \(defaults.joined(separator: ",")): name one of them in "
                            + "the list")
                }
                _ = libssh2_session_method_pref(session, method, order.joined(separator: ","))
            }
        }
    }

    /// The algorithms of one method type that libssh2 implements, in its order of preference.
    private static func supportedAlgorithms(_ session: OpaquePointer, _ method: Int32) -> [String] {
        var list: UnsafeMutablePointer<UnsafePointer<CChar>?>?
        let count = libssh2_session_supported_algs(session, method, &list)
        guard count > 0, let list else { return [] }
        defer { libssh2_free(session, list) }
        return (0..<Int(count)).compactMap { list[$0].map { String(cString: $0) } }
    }

    /// True for error codes that mean the transport is gone and the session cannot continue.
    static func isFatalTransportError(_ code: Int32) -> Bool {
        switch code {
        case Int32(LIBSSH2_ERROR_SOCKET_SEND), Int32(LIBSSH2_ERROR_SOCKET_RECV), Int32(LIBSSH2_ERROR_SOCKET_DISCONNECT),
            Int32(LIBSSH2_ERROR_SOCKET_TIMEOUT), Int32(LIBSSH2_ERROR_TIMEOUT), Int32(LIBSSH2_ERROR_DECRYPT),
            Int32(LIBSSH2_ERROR_INVALID_MAC), Int32(LIBSSH2_ERROR_PROTO), Int32(LIBSSH2_ERROR_BAD_SOCKET),
            Int32(LIBSSH2_ERROR_ENCRYPT), Int32(LIBSSH2_ERROR_KEX_FAILURE):
            true
        default:
            false
        }
    }

    enum DrainOutcome {
        /// Something was read.
        case progressed
        /// Nothing is waiting (or the stream ended or failed in a way EOF handling covers).
        case idle
        /// The transport broke with this libssh2 code.
        case broken(Int32)
    }

    /// Whether libssh2 already holds data for `channel` that a read would return without touching the
    /// socket (stream 0 stdout, 1 stderr).
    ///
    /// `libssh2_poll_channel_read` answers 1 or 0, or a negative error when a packet shorter than five
    /// bytes waits in the session's queue (a reply to a global request, which libssh2 never takes out of
    /// it): that is not data, and must not read as "data waiting", or every busy session of the thread
    /// spins on reads that find nothing.
    static func hasQueuedData(_ channel: OpaquePointer?, stream: Int32) -> Bool {
        libssh2_poll_channel_read(channel, stream) > 0
    }

    /// Reads one stream of a channel (0 stdout, 1 stderr) until libssh2 has nothing more for it
    /// now or `keepGoing` turns false, handing each piece to `body`. Reuses `buffer`.
    ///
    /// - Parameter queuedOnly: read only what libssh2 already holds for the stream, without
    ///   trying the socket (a read of another stream of the session just did). Each read that
    ///   finds nothing costs a `recv` that fails with EAGAIN.
    static func drain(
        _ channel: OpaquePointer?, stream: Int32, buffer: inout [UInt8], queuedOnly: Bool = false,
        while keepGoing: () -> Bool = { true }, _ body: (UnsafeBufferPointer<UInt8>) -> Void
    ) -> DrainOutcome {
        var progressed = false
        while keepGoing() {
            if queuedOnly && !hasQueuedData(channel, stream: stream) { break }
            let count = buffer.withUnsafeMutableBufferPointer { raw in
                raw.withMemoryRebound(to: CChar.self) { chars in
                    libssh2_channel_read_ex(channel, stream, chars.baseAddress, chars.count)
                }
            }
            if count > 0 {
                progressed = true
                buffer.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[0..<count])) }
                continue
            }
            if count == eagain || count == 0 { break }
            let code = Int32(truncatingIfNeeded: count)
            if isFatalTransportError(code) { return .broken(code) }
            // Any other read error ends the stream; EOF handling takes it from there.
            break
        }
        return progressed ? .progressed : .idle
    }

    /// How a closed channel's process ended: its exit status, or the signal that killed it
    /// (name without `SIG`), in which case the status is nil.
    static func exitStatus(of channel: OpaquePointer?, session: OpaquePointer) -> (status: Int32?, signal: String?) {
        var signal: UnsafeMutablePointer<CChar>?
        var signalLength = 0
        _ = libssh2_channel_get_exit_signal(channel, &signal, &signalLength, nil, nil, nil, nil)
        var signalName: String?
        if let signal {
            if signalLength > 0 {
                signalName = String(decoding: UnsafeRawBufferPointer(start: signal, count: signalLength), as: UTF8.self)
            }
            libssh2_free(session, signal)
        }
        let status = libssh2_channel_get_exit_status(channel)
        return (signalName == nil ? status : nil, signalName)
    }

    /// The OpenSSH name of a libssh2 host key type.
    static func hostKeyTypeName(_ type: Int32) -> String {
        switch type {
        case Int32(LIBSSH2_HOSTKEY_TYPE_RSA): "ssh-rsa"
        case Int32(LIBSSH2_HOSTKEY_TYPE_DSS): "ssh-dss"
        case Int32(LIBSSH2_HOSTKEY_TYPE_ECDSA_256): "ecdsa-sha2-nistp256"
        case Int32(LIBSSH2_HOSTKEY_TYPE_ECDSA_384): "ecdsa-sha2-nistp384"
        case Int32(LIBSSH2_HOSTKEY_TYPE_ECDSA_521): "ecdsa-sha2-nistp521"
        case Int32(LIBSSH2_HOSTKEY_TYPE_ED25519): "ssh-ed25519"
        default: "unknown"
        }
    }

    /// The known_hosts key-type bits for a libssh2 host key type, so that checks compare keys
    /// of the same algorithm only (a host may have an RSA and an ed25519 entry).
    static func knownHostKeyBits(_ type: Int32) -> Int32 {
        switch type {
        case Int32(LIBSSH2_HOSTKEY_TYPE_RSA): Int32(LIBSSH2_KNOWNHOST_KEY_SSHRSA)
        case Int32(LIBSSH2_HOSTKEY_TYPE_DSS): Int32(LIBSSH2_KNOWNHOST_KEY_SSHDSS)
        case Int32(LIBSSH2_HOSTKEY_TYPE_ECDSA_256): Int32(LIBSSH2_KNOWNHOST_KEY_ECDSA_256)
        case Int32(LIBSSH2_HOSTKEY_TYPE_ECDSA_384): Int32(LIBSSH2_KNOWNHOST_KEY_ECDSA_384)
        case Int32(LIBSSH2_HOSTKEY_TYPE_ECDSA_521): Int32(LIBSSH2_KNOWNHOST_KEY_ECDSA_521)
        case Int32(LIBSSH2_HOSTKEY_TYPE_ED25519): Int32(LIBSSH2_KNOWNHOST_KEY_ED25519)
        default: Int32(LIBSSH2_KNOWNHOST_KEY_UNKNOWN)
        }
    }

    /// `SHA256:` + unpadded base64, as OpenSSH prints fingerprints.
    static func fingerprint(ofDigest digest: [UInt8]) -> String {
        var encoded = Data(digest).base64EncodedString()
        while encoded.hasSuffix("=") { encoded.removeLast() }
        return "SHA256:" + encoded
    }
}

extension Duration {
    /// Milliseconds as a C `int`-sized count, rounded up so short timeouts never become 0 (which
    /// libssh2 and poll read as "forever" or "don't wait").
    var timeoutMilliseconds: Int {
        Int(max(0, min(roundedUpMilliseconds, Int64(Int32.max))))
    }
}
