import ServeAPI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Where `serve` listens: `--listen HOST:PORT` (`127.0.0.1:9464`, `[::1]:9464`, `0.0.0.0:9464`,
/// `:9464` for every interface).
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    /// The default: loopback only, on Prometheus's registered port for hostscope-like exporters.
    public static let standard = ListenAddress(host: "127.0.0.1", port: 9464)

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Reads `HOST:PORT`; `nil` when it is not one.
    public init?(_ text: String) {
        var host: Substring
        var portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        if host.isEmpty { host = "0.0.0.0" }
        guard let port = Int(portText), (0...65535).contains(port),
            host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == ":" })
        else { return nil }
        self.init(host: String(host), port: port)
    }

    /// Whether only this machine can reach the address: `localhost`, `127.0.0.0/8` or `::1`, as
    /// addresses (a name such as `127.lan.example` is not one, whatever it looks like; see ``resolved(using:)``).
    public var isLoopback: Bool { HostHeaderPolicy.isLoopbackName(host) }

    /// Whether the host is an address rather than a name.
    public var isNumeric: Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// This address with a name replaced by the address the server binds: the first that `resolve` gives,
    /// as the system's resolver orders them; an address as it is. `nil` when the name resolves to nothing.
    ///
    /// Whether the listener is loopback (and so may go without a token) is decided on this address, the
    /// one bound, never on how the name reads.
    public func resolved(using resolve: (String) -> [String] = ListenAddress.systemAddresses) -> ListenAddress? {
        if isNumeric { return self }
        guard let first = resolve(host).first else { return nil }
        return ListenAddress(host: first, port: port)
    }

    /// The addresses a name resolves to on this machine (`getaddrinfo`, as NIO binds), in order, as text.
    public static func systemAddresses(_ name: String) -> [String] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(name, nil, &hints, &list) == 0, let list else { return [] }
        defer { freeaddrinfo(list) }
        var addresses: [String] = []
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            if let address = current.pointee.ai_addr,
                let text = numericText(address, length: current.pointee.ai_addrlen),
                !addresses.contains(text)
            {
                addresses.append(text)
            }
            entry = current.pointee.ai_next
        }
        return addresses
    }

    /// An address as digits (`10.0.0.5`, `fe80::1`, without a `%scope`).
    static func numericText(_ address: UnsafePointer<sockaddr>, length: socklen_t) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(address, length, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 else {
            return nil
        }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.split(separator: "%").first.map(String.init)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

extension ListenAddress {
    /// This machine's names (its host name, and the canonical name the resolver gives for it) and the
    /// addresses of its interfaces: what a `Host` header may name on a listener beyond loopback.
    public static func machineNames() -> [String] {
        var names: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        if gethostname(&buffer, buffer.count - 1) == 0 {
            let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !name.isEmpty { names.append(name) }
            var hints = addrinfo()
            hints.ai_flags = AI_CANONNAME
            var list: UnsafeMutablePointer<addrinfo>?
            if getaddrinfo(name, nil, &hints, &list) == 0, let list {
                if let canonical = list.pointee.ai_canonname {
                    names.append(String(cString: canonical))
                }
                freeaddrinfo(list)
            }
        }
        var interfaces: UnsafeMutablePointer<ifaddrs>?
        if getifaddrs(&interfaces) == 0, let interfaces {
            var entry: UnsafeMutablePointer<ifaddrs>? = interfaces
            while let current = entry {
                if let address = current.pointee.ifa_addr {
                    let family = Int32(address.pointee.sa_family)
                    let length =
                        family == AF_INET
                        ? socklen_t(MemoryLayout<sockaddr_in>.size)
                        : socklen_t(MemoryLayout<sockaddr_in6>.size)
                    if family == AF_INET || family == AF_INET6, let text = numericText(address, length: length) {
                        names.append(text)
                    }
                }
                entry = current.pointee.ifa_next
            }
            freeifaddrs(interfaces)
        }
        return names
    }
}
