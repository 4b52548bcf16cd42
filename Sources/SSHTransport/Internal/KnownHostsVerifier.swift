import CLibSSH2
import Digests
import Foundation

/// Checks the server's host key against OpenSSH known_hosts files, before any authentication.
///
/// Entries are read line by line so that one line libssh2 cannot parse (a FIDO key type, a
/// `@cert-authority` line) does not hide the rest of the file. Plain, hashed (`|1|`) and
/// `[host]:port` entries are understood. A key marked `@revoked` in any of the files is refused, whichever
/// file vouches for it and whatever host the revocation line names (OpenSSH applies a revocation only to
/// the hosts its pattern matches; hostscope refuses the key everywhere). A changed key is refused whatever
/// the policy: accepting new keys never means accepting replaced ones.
struct KnownHostsVerifier {
    var options: SSHConnectionOptions

    struct Verified {
        var status: HostKeyStatus
        var keyType: String
        var fingerprint: String
    }

    private struct Mismatch {
        var file: String
        var line: Int?
        var storedFingerprint: String
    }

    func verify(_ session: OpaquePointer) throws(SSHError) -> Verified {
        var keyLength = 0
        var keyType: Int32 = 0
        guard let keyPointer = libssh2_session_hostkey(session, &keyLength, &keyType), keyLength > 0 else {
            throw SSHError(.handshake, "\(options.displayName): the server sent no host key")
        }
        let key = Array(UnsafeRawBufferPointer(start: keyPointer, count: keyLength).bindMemory(to: UInt8.self))
        let typeName = LibSSH2.hostKeyTypeName(keyType)
        let fingerprint = LibSSH2.fingerprint(ofDigest: SHA256.hash(key))
        let typeMask =
            Int32(LIBSSH2_KNOWNHOST_TYPE_PLAIN) | Int32(LIBSSH2_KNOWNHOST_KEYENC_RAW)
            | LibSSH2.knownHostKeyBits(keyType)

        for path in options.revokedHostKeysFiles {
            try checkRevocationList(path, key: key, typeName: typeName, fingerprint: fingerprint)
        }
        let files = options.knownHostsFiles.filter { $0 != "none" }.compactMap(KnownHostsFile.read)
        // Every file's revocations are read before any file may vouch for the key, so a revocation in the
        // system file is not outvoted by the user's file that lists the key.
        for file in files {
            if let line = file.lines.first(where: { $0.marker == .revoked && $0.markedKey == key }) {
                throw SSHError(
                    .hostKeyChanged,
                    "\(options.displayName): the host key \(typeName) \(fingerprint) is marked @revoked in \(file.path) line \(line.number), so it may be a stolen key impersonating the host; refusing to connect"
                )
            }
        }

        var mismatch: Mismatch?
        for file in files {
            guard let collection = libssh2_knownhost_init(session) else { continue }
            defer { libssh2_knownhost_free(collection) }
            // A fleet's known_hosts has a line per host; only the few that may name this one go to
            // libssh2, so a thousand connects do not parse a thousand lines each.
            let host = Array(options.hostName.utf8)
            for line in file.lines where line.marker == nil && Self.mayName(line.text, host: host) {
                _ = (line.text + [0]).withUnsafeBufferPointer { buffer in
                    buffer.withMemoryRebound(to: CChar.self) { chars in
                        libssh2_knownhost_readline(
                            collection, chars.baseAddress, line.text.count, Int32(LIBSSH2_KNOWNHOST_FILE_OPENSSH))
                    }
                }
            }
            var entry: UnsafeMutablePointer<libssh2_knownhost>?
            let result = key.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { chars in
                    libssh2_knownhost_checkp(
                        collection, options.hostName, Int32(options.port), chars.baseAddress, buffer.count, typeMask,
                        &entry)
                }
            }
            switch result {
            case Int32(LIBSSH2_KNOWNHOST_CHECK_MATCH):
                return Verified(status: .known(file: file.path), keyType: typeName, fingerprint: fingerprint)
            case Int32(LIBSSH2_KNOWNHOST_CHECK_MISMATCH):
                if mismatch == nil {
                    let stored = entry.flatMap { $0.pointee.key }.map { String(cString: $0) }
                    let storedFingerprint =
                        stored.flatMap { Data(base64Encoded: $0) }.map {
                            LibSSH2.fingerprint(ofDigest: SHA256.hash($0))
                        }
                        ?? "a different key"
                    let lineNumber = stored.flatMap { storedKey in
                        file.lines.first { String(decoding: $0.text, as: UTF8.self).contains(storedKey) }?.number
                    }
                    mismatch = Mismatch(file: file.path, line: lineNumber, storedFingerprint: storedFingerprint)
                }
            default:
                continue
            }
        }

        if let mismatch {
            let location = mismatch.line.map { "\(mismatch.file) line \($0)" } ?? mismatch.file
            throw SSHError(
                .hostKeyChanged,
                "\(options.displayName): HOST KEY CHANGED for \(options.knownHostsName) — \(location) has \(mismatch.storedFingerprint), the server offered \(typeName) \(fingerprint). Someone may be intercepting the connection, or the host was reinstalled; refusing to connect. If the change is expected, remove the old key with: ssh-keygen -R '\(options.knownHostsName)' -f \(mismatch.file)"
            )
        }

        guard options.hostKeyPolicy == .acceptNew else {
            let target = options.knownHostsFiles.first(where: { $0 != "none" }) ?? "~/.ssh/known_hosts"
            throw SSHError(
                .hostKeyUnknown,
                "\(options.displayName): host key for \(options.knownHostsName) is not known — the server offered \(typeName) \(fingerprint). Check it (on the host: ssh-keygen -lf /etc/ssh/ssh_host_\(Self.keyFileStem(typeName))_key.pub), then run again with --accept-new-host-key to record it in \(target)"
            )
        }
        let file = try append(key: key, typeMask: typeMask, session: session)
        options.hostKeyRecorded?(
            RecordedHostKey(
                knownHostsName: options.knownHostsName, keyType: Self.openSSHTypeName(typeName),
                fingerprint: fingerprint, file: file))
        return Verified(status: .accepted(file: file), keyType: typeName, fingerprint: fingerprint)
    }

    private func checkRevocationList(
        _ path: String, key: [UInt8], typeName: String, fingerprint: String
    ) throws(SSHError) {
        let name = options.displayName
        switch RevokedHostKeys.verdict(on: key, in: path) {
        case nil:
            return
        case .revoked(let line):
            throw SSHError(
                .hostKeyChanged,
                "\(name): the host key \(typeName) \(fingerprint) is revoked by \(path) line \(line) "
                    + "(RevokedHostKeys), so it may be a stolen key impersonating the host; refusing to connect")
        case .unreadable:
            throw SSHError(
                .hostKeyFile,
                "\(name): cannot read the RevokedHostKeys file \(path), and without it no host key can be trusted, "
                    + "as ssh also decides; refusing to connect; create the file (it may be empty) or fix the path")
        case .keyRevocationList:
            throw SSHError(
                .hostKeyFile,
                "\(name): the RevokedHostKeys file \(path) is a key revocation list (KRL), which hostscope cannot "
                    + "read, and it will not connect without checking it; list the revoked keys in a file of public "
                    + "keys, one per line, or mark them @revoked in known_hosts")
        case .notAPublicKey(let line):
            throw SSHError(
                .hostKeyFile,
                "\(name): \(path) line \(line) is not a public key, so the RevokedHostKeys file cannot be checked, as "
                    + "ssh also decides; refusing to connect; write one key per line as ssh-keygen prints them")
        }
    }

    /// The short key type name OpenSSH puts in its messages (`sshkey_type`): `ED25519`, `ECDSA`, `RSA`, `DSA`.
    static func openSSHTypeName(_ typeName: String) -> String {
        switch typeName {
        case "ssh-ed25519": "ED25519"
        case "ssh-rsa": "RSA"
        case "ssh-dss": "DSA"
        case let name where name.hasPrefix("ecdsa-"): "ECDSA"
        default: typeName
        }
    }

    /// The middle of sshd's default host key file name for a key type (`ed25519`, `ecdsa`, `rsa`).
    private static func keyFileStem(_ typeName: String) -> String {
        if typeName.hasPrefix("ecdsa") { return "ecdsa" }
        return typeName.hasPrefix("ssh-") ? String(typeName.dropFirst(4)) : typeName
    }

    /// Appends `[host]:port keytype base64` to the first known_hosts file, creating it (and its
    /// directory, mode 0700) when missing.
    private func append(key: [UInt8], typeMask: Int32, session: OpaquePointer) throws(SSHError) -> String {
        guard let file = options.knownHostsFiles.first(where: { $0 != "none" }) else {
            throw SSHError(
                .hostKeyFile,
                "\(options.displayName): cannot record the new host key: UserKnownHostsFile is none; name a file with --known-hosts"
            )
        }
        guard let collection = libssh2_knownhost_init(session) else {
            throw SSHError(.hostKeyFile, "\(options.displayName): cannot allocate a known_hosts list")
        }
        defer { libssh2_knownhost_free(collection) }
        var stored: UnsafeMutablePointer<libssh2_knownhost>?
        let added = key.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                libssh2_knownhost_addc(
                    collection, options.knownHostsName, nil, chars.baseAddress, buffer.count, nil, 0, typeMask, &stored)
            }
        }
        var line = [CChar](repeating: 0, count: 8192)
        var length = 0
        guard added == 0, let stored,
            libssh2_knownhost_writeline(
                collection, stored, &line, line.count, &length, Int32(LIBSSH2_KNOWNHOST_FILE_OPENSSH)) == 0
        else {
            throw SSHError(.hostKeyFile, "\(options.displayName): cannot format the host key for \(file)")
        }
        let text = String(decoding: line[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        do {
            let url = URL(fileURLWithPath: file)
            let directory = url.deletingLastPathComponent()
            if !FileManager.default.fileExists(atPath: directory.path) {
                try FileManager.default.createDirectory(
                    at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            var prefix = ""
            if let existing = FileManager.default.contents(atPath: file) {
                if let last = existing.last, last != UInt8(ascii: "\n") { prefix = "\n" }
            } else {
                _ = FileManager.default.createFile(atPath: file, contents: nil, attributes: [.posixPermissions: 0o600])
            }
            let handle = try FileHandle(forWritingTo: url)
            defer { try? handle.close() }
            try handle.seekToEnd()
            try handle.write(contentsOf: Data((prefix + text).utf8))
        } catch {
            throw SSHError(
                .hostKeyFile,
                "\(options.displayName): cannot write the new host key to \(file): \(error.localizedDescription); check the file's permissions or pass another file with --known-hosts"
            )
        }
        return file
    }

    /// Whether a known_hosts line may be about `host`: hashed names and patterns can only be told
    /// by libssh2; a plain list of names that does not contain the host's name cannot match it.
    static func mayName(_ line: [UInt8], host: [UInt8]) -> Bool {
        let blank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        let names = line.drop(while: blank).prefix { !blank($0) }
        guard let first = names.first, first != UInt8(ascii: "#") else { return false }
        if first == UInt8(ascii: "|") { return true }
        if names.contains(where: { $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "?") }) { return true }
        guard !host.isEmpty, names.count >= host.count else { return false }
        let bytes = Array(names)
        for start in 0...(bytes.count - host.count) where bytes[start..<(start + host.count)].elementsEqual(host) {
            return true
        }
        return false
    }
}
