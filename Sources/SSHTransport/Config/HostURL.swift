/// `ssh://` and `sftp://` URLs, after the SSH URI draft: `scheme://[user[;params]@]host[:port][/path]`, the
/// user and path percent-decoded (`+` is a plus sign, as RFC 3986 has it).
struct HostURL {
    var destination: SSHDestination
    /// The path after the authority, decoded, with its leading `/`; empty when there is none.
    var path: String

    static let schemes = ["ssh", "sftp"]

    /// Nil when `argument` is not a URL of one of `schemes`.
    init?(parsing argument: String, schemes: [String] = HostURL.schemes) throws(SSHError) {
        guard let separator = argument.range(of: "://"),
            schemes.contains(argument[..<separator.lowerBound].lowercased())
        else {
            return nil
        }
        var rest = argument[separator.upperBound...]
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        rest = rest[authorityEnd...]
        var user: String? = nil
        if let at = authority.lastIndex(of: "@") {
            // `;fingerprint=…` connection parameters are allowed by the draft and ignored, as by `ssh`.
            let userInfo = authority[..<at].prefix { $0 != ";" }
            user = try HostSyntax.user(Substring(try PercentDecoding.decode(userInfo, in: argument)), in: argument)
            authority = authority[authority.index(after: at)...]
        }
        let host: Substring
        var portText: Substring? = nil
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw HostSyntax.invalid(argument, "\"[\" has no closing \"]\"")
            }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else {
                    throw HostSyntax.invalid(argument, "only \":PORT\" may follow \"]\"")
                }
                portText = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        let port = try portText.map { text throws(SSHError) in try HostSyntax.port(text, in: argument) }
        destination = SSHDestination(host: try HostSyntax.host(host, in: argument), user: user, port: port)
        path = try PercentDecoding.decode(rest, in: argument)
    }
}

enum PercentDecoding {
    static func decode(_ text: Substring, in argument: String) throws(SSHError) -> String {
        guard text.contains("%") else {
            return String(text)
        }
        var bytes: [UInt8] = []
        var utf8 = text.utf8[...]
        while let byte = utf8.first {
            utf8 = utf8.dropFirst()
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard utf8.count >= 2, let high = hexValue(utf8[utf8.startIndex]),
                let low = hexValue(utf8[utf8.index(after: utf8.startIndex)])
            else {
                throw HostSyntax.invalid(argument, "\"%\" must be followed by two hex digits; write %25 for \"%\"")
            }
            bytes.append(high << 4 | low)
            utf8 = utf8.dropFirst(2)
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw HostSyntax.invalid(argument, "its percent-encoded bytes are not UTF-8 text")
        }
        return decoded
    }

    static func encode(_ text: String, keeping allowed: Set<UInt8>) -> String {
        var result = ""
        for byte in text.utf8 {
            let isUnreserved =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "~")
            if isUnreserved || allowed.contains(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return result
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
