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
