import Foundation

/// The parts of an absolute `http`/`https` URL that the client checks, reports and redacts, parsed without I/O.
///
/// Only what is needed to refuse bad input early and to describe a request safely is parsed here; curl parses
/// the URL again for the transfer itself.
struct RequestURL: Sendable, Hashable {
    /// `http` or `https`, lowercased.
    var scheme: String
    /// `user:password` as written, when present.
    var userinfo: String?
    /// The host without IPv6 brackets, as written.
    var host: String
    /// The explicit port, when written.
    var port: Int?
    /// The path, `/` when empty.
    var path: String
    /// The query without its `?`, when present.
    var query: String?

    /// Parses `text`, refusing anything that is not an absolute `http` or `https` URL with a host.
    init(parsing text: String) throws(HTTPError) {
        func invalid(_ why: String) -> HTTPError {
            HTTPError(code: .invalidRequest, message: "invalid URL \(RequestURL.roughlyRedacted(text)): \(why)")
        }
        if text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            throw invalid("it contains spaces or control characters; percent-encode them")
        }
        guard let schemeEnd = text.range(of: "://") else {
            throw invalid("expected an absolute URL such as https://host/path")
        }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw invalid("the scheme \"\(scheme)\" is not supported; use http or https")
        }
        let afterScheme = text[schemeEnd.upperBound...]
        let authorityEnd = afterScheme.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? afterScheme.endIndex
        var authority = afterScheme[..<authorityEnd]
        var rest = afterScheme[authorityEnd...]

        var userinfo: String?
        if let at = authority.lastIndex(of: "@") {
            userinfo = String(authority[..<at])
            authority = authority[authority.index(after: at)...]
        }

        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw invalid("an IPv6 address must be closed with ]")
            }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let afterHost = authority[authority.index(after: close)...]
            if afterHost.hasPrefix(":") {
                portText = afterHost.dropFirst()
            } else if !afterHost.isEmpty {
                throw invalid("unexpected text after the IPv6 address")
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else {
            throw invalid("the host is missing")
        }
        var port: Int?
        if let portText, !portText.isEmpty {
            guard portText.allSatisfy(\.isASCII), let value = Int(portText), (1...65535).contains(value) else {
                throw invalid("the port must be a number from 1 to 65535")
            }
            port = value
        }

        if let hash = rest.firstIndex(of: "#") {
            rest = rest[..<hash]
        }
        var query: String?
        var path = rest
        if let mark = rest.firstIndex(of: "?") {
            path = rest[..<mark]
            query = String(rest[rest.index(after: mark)...])
        }

        self.scheme = scheme
        self.userinfo = userinfo
        self.host = String(host)
        self.port = port
        self.path = path.isEmpty ? "/" : String(path)
        self.query = query
    }

    /// The port the connection goes to.
    var effectivePort: Int { port ?? (scheme == "https" ? 443 : 80) }

    /// Whether the host is this machine (`localhost`, 127.0.0.0/8, `::1`), which never goes through a proxy.
    var isLoopback: Bool {
        let name = host.lowercased()
        if name == "localhost" || name.hasSuffix(".localhost") || name == "::1" {
            return true
        }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    /// The URL with userinfo as `REDACTED:REDACTED@`, every query value as `REDACTED` and no fragment, in the
    /// form OpenTelemetry's `url.full` asks for.
    var redacted: String {
        var text = scheme + "://"
        if let userinfo {
            text += userinfo.contains(":") ? "REDACTED:REDACTED@" : "REDACTED@"
        }
        text += host.contains(":") ? "[\(host)]" : host
        if let port {
            text += ":\(port)"
        }
        text += path
        if let query {
            text += "?" + RequestURL.redactQuery(query)
        }
        return text
    }

    /// Text that must never appear in an output: the userinfo, its parts, and each query value.
    var secrets: [String] {
        var secrets: [String] = []
        if let userinfo, !userinfo.isEmpty {
            secrets.append(userinfo)
            secrets.append(contentsOf: userinfo.split(separator: ":").map(String.init))
        }
        if let query {
            for item in query.split(separator: "&") {
                if let equals = item.firstIndex(of: "=") {
                    secrets.append(String(item[item.index(after: equals)...]))
                } else {
                    secrets.append(String(item))
                }
            }
        }
        // Very short values would turn ordinary words of a message into REDACTED without protecting anything.
        return secrets.filter { $0.count >= 3 }.sorted { $0.count > $1.count }
    }

    /// Replaces every secret of this URL that occurs in `text` (a message from curl, say) by `REDACTED`.
    func scrub(_ text: String) -> String {
        secrets.reduce(text) { $0.replacing($1, with: "REDACTED") }
    }

    static func redactQuery(_ query: String) -> String {
        query.split(separator: "&", omittingEmptySubsequences: false).map { item -> String in
            if let equals = item.firstIndex(of: "=") {
                let value = item[item.index(after: equals)...]
                return value.isEmpty ? String(item) : item[..<equals] + "=REDACTED"
            }
            return item.isEmpty ? "" : "REDACTED"
        }.joined(separator: "&")
    }

    /// A best-effort redaction for text that did not even parse: keep only what precedes userinfo or a query.
    static func roughlyRedacted(_ text: String) -> String {
        var cut = text
        if let mark = cut.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            cut = String(cut[..<mark]) + "?REDACTED"
        }
        if let at = cut.firstIndex(of: "@") {
            let start = cut.range(of: "://")?.upperBound ?? cut.startIndex
            if start <= at {
                cut = String(cut[..<start]) + "REDACTED@" + cut[cut.index(after: at)...]
            }
        }
        return "\"" + String(cut.prefix(200)) + "\""
    }
}
