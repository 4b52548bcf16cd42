import Foundation
import ValueFormats

/// A host as given on the command line: an ssh_config alias or a host name or address, with an optional
/// user and port that win over the config's.
public struct SSHDestination: Sendable, Hashable, CustomStringConvertible {
    /// The alias, name or address, without brackets.
    public var host: String
    /// The user from `user@host`.
    public var user: String?
    /// The port from `host:port`.
    public var port: Int?

    /// A destination from its parts, unchecked.
    public init(host: String, user: String? = nil, port: Int? = nil) {
        self.host = host
        self.user = user
        self.port = port
    }

    /// Reads `alias`, `host`, `user@host`, `host:port`, `user@host:port`, `[::1]:2222`,
    /// `user@[fe80::1%eth0]:22`, a bare IPv6 address (`::1`, no port), or `ssh://user@host:port` and
    /// `sftp://user@host:port` (user percent-decoded, no path).
    public init(parsing argument: String) throws(SSHError) {
        if let url = try SSHDestination.url(parsing: argument) {
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
        // Two or more colons outside brackets can only be a bare IPv6 address, which cannot carry a port.
        let (host, portText) = try Self.hostAndPort(
            rest, bareIPv6: !rest.hasPrefix("[") && rest.filter { $0 == ":" }.count > 1, in: argument)
        self.host = try HostSyntax.host(host, in: argument)
        self.user = user
        self.port = try portText.map { text throws(SSHError) in try HostSyntax.port(text, in: argument) }
    }

    /// Splits `host`, `host:port`, `[address]` or `[address]:port` (the port unchecked); with `bareIPv6`,
    /// the whole text is the host.
    static func hostAndPort(
        _ text: Substring, bareIPv6: Bool = false, in argument: String
    ) throws(SSHError) -> (host: Substring, port: Substring?) {
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw HostSyntax.invalid(argument, "\"[\" has no closing \"]\"; write [ADDRESS]:PORT")
            }
            let host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            guard !after.isEmpty else { return (host, nil) }
            guard after.hasPrefix(":") else {
                throw HostSyntax.invalid(argument, "only \":PORT\" may follow \"]\"")
            }
            return (host, after.dropFirst())
        }
        if !bareIPv6, let colon = text.firstIndex(of: ":") {
            return (text[..<colon], text[text.index(after: colon)...])
        }
        return (text, nil)
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

extension SSHDestination {
    /// The URL forms of a destination: `ssh://` and `sftp://`.
    static let urlSchemes = ["ssh", "sftp"]

    /// Reads an `ssh://` or `sftp://` URL after the SSH URI draft,
    /// `scheme://[user[;params]@]host[:port][/path]`, the user and path percent-decoded (`+` is a plus
    /// sign, as RFC 3986 has it); the path is the decoded text after the authority, with its leading `/`,
    /// empty when there is none. Nil when `argument` is not a URL of one of `schemes`.
    static func url(
        parsing argument: String, schemes: [String] = urlSchemes
    ) throws(SSHError) -> (destination: SSHDestination, path: String)? {
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
            user = try HostSyntax.user(Substring(try PercentEncoding.decode(userInfo, in: argument)), in: argument)
            authority = authority[authority.index(after: at)...]
        }
        let (host, portText) = try hostAndPort(authority, in: argument)
        let port = try portText.map { text throws(SSHError) in try HostSyntax.port(text, in: argument) }
        let destination = SSHDestination(host: try HostSyntax.host(host, in: argument), user: user, port: port)
        return (destination, try PercentEncoding.decode(rest, in: argument))
    }
}

/// Percent-encoding of URL users and paths (RFC 3986).
enum PercentEncoding {
    /// Decodes `%XX` sequences; a malformed one, or bytes that are not UTF-8, is an error naming the
    /// argument.
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
            guard utf8.count >= 2, let high = Hex.value(of: utf8[utf8.startIndex]),
                let low = Hex.value(of: utf8[utf8.index(after: utf8.startIndex)])
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

    /// Encodes every byte but RFC 3986's unreserved characters and `allowed`.
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
                result += "%" + Hex.string(byte, width: 2, uppercase: true)
            }
        }
        return result
    }
}
