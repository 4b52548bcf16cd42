import Foundation

/// A `RevokedHostKeys` file: public keys, one per line (`ssh-ed25519 AAAA… comment`), that are refused for
/// every host, checked before known_hosts as `ssh` checks them.
///
/// As in `ssh`, a file that cannot be read, or a line that is not a public key, refuses every host key: a
/// revocation list that cannot be read must not count as one that revokes nothing. OpenSSH's binary key
/// revocation lists (KRL) are recognised and refused the same way, since hostscope cannot read them.
enum RevokedHostKeys {
    /// Why a host key may not be used, or nil when `file` does not revoke it.
    enum Verdict: Equatable {
        case revoked(line: Int)
        case unreadable
        case keyRevocationList
        case notAPublicKey(line: Int)
    }

    /// The first bytes of a KRL (`KRL_MAGIC` in OpenSSH's krl.c).
    private static let krlMagic = Array("SSHKRL\n\0".utf8)

    static func verdict(on key: [UInt8], in path: String) -> Verdict? {
        guard let data = FileManager.default.contents(atPath: path) else {
            return .unreadable
        }
        return verdict(on: key, in: Array(data))
    }

    static func verdict(on key: [UInt8], in bytes: [UInt8]) -> Verdict? {
        if bytes.starts(with: krlMagic) {
            return .keyRevocationList
        }
        for (number, line) in KnownHostsFile.contentLines(bytes) {
            let fields = KnownHostsFile.fields(line)
            guard fields.count >= 2, let blob = KnownHostsFile.decodedKey(fields[1]) else {
                return .notAPublicKey(line: number)
            }
            if blob == key {
                return .revoked(line: number)
            }
        }
        return nil
    }
}
