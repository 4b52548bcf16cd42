#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which `Host` header values a server answers, so that a page served from another name cannot read
/// it through DNS rebinding (a name the attacker controls, pointed at this machine's address).
///
/// A browser sends the name it was asked for in `Host`, whatever address that name resolved to; so
/// only names that cannot be an attacker's are admitted:
/// - on every listener, loopback names and addresses (`localhost`, `127.0.0.0/8`, `[::1]`);
/// - on a listener beyond loopback, also the listen address as given, the machine's own names and
///   addresses (given by the caller);
/// - everywhere, the names of ``allowed`` (`--allowed-hosts`), for a reverse proxy or a DNS name.
///
/// A name admitted by the first two lists must come with the listen port, or with no port when the
/// listen port is the scheme's default (80, or 443 under TLS), as RFC 9110 reads a `Host` without one.
/// An allowed name without a port is admitted with any port (behind a proxy the port is the proxy's);
/// `name:port` only with that port; `*` admits every `Host` and so turns the check off. Names are
/// compared without case and without a final dot. A request with no `Host` at all (HTTP/1.0) is
/// admitted: a browser always sends one.
public struct HostHeaderPolicy: Sendable, Equatable {
    /// A `Host` value: a name or address (IPv6 without brackets), lower case without a final dot, and
    /// its port when it has one.
    public struct Authority: Sendable, Equatable, Hashable, CustomStringConvertible {
        public var host: String
        public var port: Int?

        public init(host: String, port: Int?) {
            self.host = Self.normalized(host)
            self.port = port
        }

        /// Reads `name`, `name:port`, `[v6]`, `[v6]:port`; `nil` for anything else (an empty name, a
        /// port that is not 0–65535, spaces or control characters).
        public init?(_ text: String) {
            var host: Substring
            var portText: Substring?
            if text.hasPrefix("[") {
                guard let close = text.firstIndex(of: "]") else { return nil }
                host = text[text.index(after: text.startIndex)..<close]
                let rest = text[text.index(after: close)...]
                if !rest.isEmpty {
                    guard rest.hasPrefix(":") else { return nil }
                    portText = rest.dropFirst()
                }
                guard host.contains(":") else { return nil }
            } else {
                if let colon = text.lastIndex(of: ":") {
                    guard !text[..<colon].contains(":") else { return nil }
                    host = text[..<colon]
                    portText = text[text.index(after: colon)...]
                } else {
                    host = Substring(text)
                }
            }
            var port: Int?
            if let portText {
                guard portText.count <= 5, let value = Int(portText), (0...65535).contains(value) else { return nil }
                port = value
            }
            guard !host.isEmpty,
                host.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F && $0 != "/" && $0 != "@" })
            else { return nil }
            self.init(host: String(host), port: port)
        }

        /// Lower case, one final dot dropped (`LocalHost.` and `localhost` are the same name).
        static func normalized(_ host: String) -> String {
            let lower = host.lowercased()
            return lower.hasSuffix(".") && lower.count > 1 ? String(lower.dropLast()) : lower
        }

        public var description: String {
            let name = host.contains(":") ? "[\(host)]" : host
            return port.map { "\(name):\($0)" } ?? name
        }
    }

    /// An `--allowed-hosts` value: a name (any port), a `name:port`, or `*` (any `Host` at all).
    public enum Allowed: Sendable, Equatable, Hashable {
        case any
        case name(Authority)

        /// Reads an `--allowed-hosts` value; `nil` when it is neither `*` nor a host with an optional port.
        public init?(_ text: String) {
            if text == "*" {
                self = .any
            } else if let authority = Authority(text), !authority.host.contains("*") {
                self = .name(authority)
            } else {
                return nil
            }
        }
    }

    /// The port the server listens on (the bound one, when port 0 was asked for).
    public var port: Int
    /// The port a `Host` without one stands for: 80, or 443 under TLS.
    public var defaultPort: Int
    /// Names and addresses admitted with the listen port, besides loopback ones.
    public var ownNames: Set<String>
    /// The operator's `--allowed-hosts`.
    public var allowed: [Allowed]

    /// - Parameters:
    ///   - port: the listen port.
    ///   - secure: whether the listener serves TLS (the default port is then 443).
    ///   - ownNames: besides loopback names, the names and addresses admitted with the listen port: none on a
    ///     loopback listener; elsewhere the listen address, the machine's names and addresses.
    ///   - allowed: the values of `--allowed-hosts`.
    public init(port: Int, secure: Bool, ownNames: [String], allowed: [Allowed]) {
        self.port = port
        defaultPort = secure ? 443 : 80
        self.ownNames = Set(ownNames.map(Authority.normalized))
        self.allowed = allowed
    }

    /// Whether the check admits every `Host` (`--allowed-hosts '*'`).
    public var admitsAny: Bool { allowed.contains(.any) }

    /// Whether a request whose `Host` header is `host` (`nil` when it has none) is answered.
    public func admits(_ host: String?) -> Bool {
        if admitsAny { return true }
        guard let host else { return true }
        guard let authority = Authority(host) else { return false }
        for entry in allowed {
            if case .name(let name) = entry, name.host == authority.host,
                name.port == nil || name.port == authority.port
            {
                return true
            }
        }
        guard authority.port == port || authority.port == nil && port == defaultPort else { return false }
        return Self.isLoopbackName(authority.host) || ownNames.contains(authority.host)
    }

    /// `localhost`, an address of `127.0.0.0/8` written as a dotted quad, or `::1` in any IPv6 spelling.
    public static func isLoopbackName(_ host: String) -> Bool {
        let host = Authority.normalized(host)
        if host == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            return UInt32(bigEndian: v4.s_addr) >> 24 == 127
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { bytes in bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1 }
        }
        return false
    }
}
