/// A host as given on the command line: an ssh_config alias or a host name or address, with an optional
/// user and port that win over the config's.
public struct SSHDestination: Sendable, Hashable, CustomStringConvertible {
    /// The alias, name or address, without brackets.
    public var host: String
    /// The user from `user@host`.
    public var user: String?
    /// The port from `host:port`.
    public var port: Int?

    public init(host: String, user: String? = nil, port: Int? = nil) {
        self.host = host
        self.user = user
        self.port = port
    }

    /// Reads `alias`, `host`, `user@host`, `host:port`, `user@host:port`, `[::1]:2222`,
    /// `user@[fe80::1%eth0]:22`, a bare IPv6 address (`::1`, no port), or `ssh://user@host:port` and
    /// `sftp://user@host:port` (user percent-decoded, no path).
    public init(parsing argument: String) throws(SSHError) {
        if let url = try HostURL(parsing: argument) {
            guard url.path.isEmpty || url.path == "/" else {
                throw HostSyntax.invalid(argument, "a host takes no path; give paths to `hostscope files`")
            }
            self = url.destination
            return
        }
        var rest = Substring(argument)
        var user: String? = nil
        if let at = rest.lastIndex(of: "@") {
            user = try HostSyntax.user(rest[..<at], in: argument)
            rest = rest[rest.index(after: at)...]
        }
        let host: Substring
        var portText: Substring? = nil
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw HostSyntax.invalid(argument, "\"[\" has no closing \"]\"; write [ADDRESS]:PORT")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else {
                    throw HostSyntax.invalid(argument, "only \":PORT\" may follow \"]\"")
                }
                portText = after.dropFirst()
            }
        } else {
            let colons = rest.filter { $0 == ":" }.count
            if colons == 1, let colon = rest.firstIndex(of: ":") {
                host = rest[..<colon]
                portText = rest[rest.index(after: colon)...]
            } else {
                // Two or more colons can only be a bare IPv6 address, which cannot carry a port.
                host = rest
            }
        }
        self.host = try HostSyntax.host(host, in: argument)
        self.user = user
        self.port = try portText.map { text throws(SSHError) in try HostSyntax.port(text, in: argument) }
    }

    /// The destination as an argument that parses back to it: `user@host:port`, IPv6 in brackets.
    public var description: String {
        var text = ""
        if let user {
            text += user + "@"
        }
        text += host.contains(":") ? "[\(host)]" : host
        if let port {
            text += ":\(port)"
        }
        return text
    }
}

/// A host argument: the machine itself, or one reached over SSH.
public enum HostTarget: Sendable, Hashable, CustomStringConvertible {
    /// The machine hostscope runs on, probed without SSH.
    case local
    /// A host reached over SSH.
    case remote(SSHDestination)

    /// The argument that names the machine itself.
    public static let localName = "local"

    /// Reads `local` or any form `SSHDestination(parsing:)` takes.
    public init(parsing argument: String) throws(SSHError) {
        if argument == Self.localName {
            self = .local
        } else {
            self = .remote(try SSHDestination(parsing: argument))
        }
    }

    public var description: String {
        switch self {
        case .local: Self.localName
        case .remote(let destination): destination.description
        }
    }
}

/// Where Unix-style host names and addresses end, as OpenSSH draws the lines.
enum HostAddress {
    /// OpenSSH's `is_addr_fast`: an address is not lower-cased, a name is.
    static func looksLikeAddress(_ host: String) -> Bool {
        host.contains("%") || host.contains(":") || host.allSatisfy { $0 == "." || ConfigText.isDigit($0) }
    }
}

/// Checks shared by host, file and hosts-file arguments.
enum HostSyntax {
    /// Characters `ssh` refuses in a host name because a shell or a `ProxyCommand` would read them, plus
    /// the separators of the argument forms and of hosts files.
    private static let forbidden: Set<Character> = [
        "'", "`", "\"", "$", "\\", ";", "&", "<", ">", "|", "(", ")", "{", "}", "/", "@", "[", "]", "#",
    ]

    static func invalid(_ argument: String, _ reason: String) -> SSHError {
        SSHError(.config, "\"\(argument)\" is not a valid host: \(reason)")
    }

    static func host(_ text: Substring, in argument: String) throws(SSHError) -> String {
        guard !text.isEmpty else {
            throw invalid(argument, "the host name is missing")
        }
        guard !text.hasPrefix("-") else {
            throw invalid(argument, "a host name cannot start with \"-\"")
        }
        if HostPattern.hasWildcards(String(text)) {
            throw invalid(argument, "it is a pattern; patterns select Host names from ~/.ssh/config")
        }
        if let bad = text.first(where: { forbidden.contains($0) || $0.isWhitespace || isControl($0) }) {
            throw invalid(argument, "the host name contains \"\(bad.isWhitespace ? " " : bad)\"")
        }
        return String(text)
    }

    static func user(_ text: Substring, in argument: String) throws(SSHError) -> String {
        guard !text.isEmpty else {
            throw invalid(argument, "the user before \"@\" is empty; write USER@HOST or leave out the \"@\"")
        }
        if text.contains(where: { $0.isWhitespace || isControl($0) }) {
            throw invalid(argument, "the user name contains a space or control character")
        }
        return String(text)
    }

    static func port(_ text: Substring, in argument: String) throws(SSHError) -> Int {
        guard ConfigText.isDigits(text), let port = Int(text), (1...65535).contains(port) else {
            throw invalid(argument, "the port \"\(text)\" is not a number from 1 to 65535")
        }
        return port
    }

    private static func isControl(_ character: Character) -> Bool {
        character.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}

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
