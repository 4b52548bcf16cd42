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

    /// Whether only this machine can reach the address: `localhost`, `127.0.0.0/8` or `::1`.
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.") && host.split(separator: ".").count == 4
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
