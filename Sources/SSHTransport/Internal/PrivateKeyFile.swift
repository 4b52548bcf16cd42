import Foundation

/// What can be learnt from a private key file without its passphrase: its algorithm, whether it
/// is encrypted, and its public key blob (to match agent keys under `IdentitiesOnly`).
struct PrivateKeyFile {
    var path: String
    /// `ssh-ed25519`, `ssh-rsa`, `ecdsa-sha2-nistp256`, … or `nil` when not recognisable.
    var keyType: String?
    var isEncrypted: Bool
    var publicKeyBlob: [UInt8]?

    /// Reads the file (and its `.pub` neighbour); `nil` when the file does not exist or is
    /// unreadable.
    static func inspect(_ path: String) -> PrivateKeyFile? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        var info = PrivateKeyFile(path: path, keyType: nil, isEncrypted: false, publicKeyBlob: nil)
        if text.contains("-----BEGIN OPENSSH PRIVATE KEY-----") {
            info.parseOpenSSHFormat(text)
        } else if text.contains("-----BEGIN RSA PRIVATE KEY-----") {
            info.keyType = "ssh-rsa"
            info.isEncrypted = text.contains("ENCRYPTED")
        } else if text.contains("-----BEGIN EC PRIVATE KEY-----") {
            info.keyType = "ecdsa"
            info.isEncrypted = text.contains("ENCRYPTED")
        } else if text.contains("-----BEGIN DSA PRIVATE KEY-----") {
            info.keyType = "ssh-dss"
            info.isEncrypted = text.contains("ENCRYPTED")
        } else if text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") {
            info.isEncrypted = true
        }
        if let publicText = try? String(contentsOfFile: path + ".pub", encoding: .utf8) {
            let fields = publicText.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
            if fields.count >= 2 {
                if info.keyType == nil || info.keyType == "ecdsa" { info.keyType = String(fields[0]) }
                if info.publicKeyBlob == nil {
                    info.publicKeyBlob = Data(base64Encoded: String(fields[1])).map(Array.init)
                }
            }
        }
        return info
    }

    var isRSA: Bool { keyType == "ssh-rsa" }

    /// `openssh-key-v1`: magic, cipher name, KDF name, KDF options, key count, then the public
    /// key blob (whose first string is the algorithm name).
    private mutating func parseOpenSSHFormat(_ text: String) {
        let body = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        guard let data = Data(base64Encoded: body) else { return }
        var reader = BlobReader(bytes: Array(data))
        let magic = Array("openssh-key-v1".utf8) + [0]
        guard reader.take(magic.count) == magic, let cipher = reader.string(), reader.string() != nil,
            reader.string() != nil, reader.uint32() != nil, let publicBlob = reader.lengthPrefixed()
        else { return }
        isEncrypted = String(decoding: cipher, as: UTF8.self) != "none"
        publicKeyBlob = publicBlob
        var publicReader = BlobReader(bytes: publicBlob)
        keyType = publicReader.string().map { String(decoding: $0, as: UTF8.self) }
    }
}

/// Reads SSH wire-format fields (RFC 4251 `uint32` and length-prefixed `string`).
struct BlobReader {
    var bytes: [UInt8]
    var offset = 0

    mutating func take(_ count: Int) -> [UInt8]? {
        guard count >= 0, offset + count <= bytes.count else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    mutating func uint32() -> UInt32? {
        guard let raw = take(4) else { return nil }
        return raw.reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func lengthPrefixed() -> [UInt8]? {
        guard let length = uint32(), length < 1 << 20 else { return nil }
        return take(Int(length))
    }

    mutating func string() -> [UInt8]? { lengthPrefixed() }
}
