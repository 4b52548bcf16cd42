import Digests
import Gzip

/// One file of the dashboard, compiled into the executable: its bytes, their gzip form and a strong
/// validator.
public struct WebAsset: Sendable {
    /// The file's name, as the page names it under `/assets/`.
    public let name: String
    /// The fixed `Content-Type` of its extension.
    public let contentType: String
    /// The file as written.
    public let bytes: [UInt8]
    /// The bytes gzip-compressed, or `nil` when that would not be smaller.
    public let gzipped: [UInt8]?
    /// A strong `ETag`: the first 16 bytes of the SHA-256 of `bytes`, quoted.
    public let etag: String

    init(name: String, contentType: String, bytes: [UInt8]) {
        self.name = name
        self.contentType = contentType
        self.bytes = bytes
        let compressed = Gzip.compress(bytes, level: .smallest)
        gzipped = compressed.count < bytes.count ? compressed : nil
        etag = "\"" + SHA256.hex(Array(SHA256.hash(bytes).prefix(16))) + "\""
    }
}

/// The dashboard `serve` answers at `/`: the page and its assets, embedded at build time (no file is read at
/// run time, so a copied binary serves its page), and the headers they go out with.
public enum WebAssets {
    /// The page itself.
    public static let page = WebAsset(
        name: "index.html", contentType: "text/html; charset=utf-8", bytes: PackageResources.index_html)

    /// Every asset under `/assets/`, by name.
    public static let assets: [String: WebAsset] = {
        let files: [(String, [UInt8])] = [
            ("app.css", PackageResources.app_css), ("app.js", PackageResources.app_js),
            ("api.js", PackageResources.api_js), ("dom.js", PackageResources.dom_js),
            ("format.js", PackageResources.format_js), ("chart.js", PackageResources.chart_js),
            ("fleet.js", PackageResources.fleet_js), ("alerts.js", PackageResources.alerts_js),
            ("host.js", PackageResources.host_js),
            ("tracing.js", PackageResources.tracing_js), ("icon.svg", PackageResources.icon_svg),
        ]
        var table: [String: WebAsset] = [:]
        for (name, bytes) in files {
            guard let type = contentType(of: name) else { continue }
            table[name] = WebAsset(name: name, contentType: type, bytes: bytes)
        }
        return table
    }()

    /// The `Content-Type` of a file name's extension; `nil` for any other extension (which is never served).
    public static func contentType(of name: String) -> String? {
        guard let dot = name.lastIndex(of: ".") else { return nil }
        switch name[name.index(after: dot)...] {
        case "html": return "text/html; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "js": return "text/javascript; charset=utf-8"
        case "svg": return "image/svg+xml"
        default: return nil
        }
    }

    /// The policy every page and asset goes out with: nothing inline, nothing from elsewhere, no framing,
    /// and DOM sinks that parse markup refused (Trusted Types), so remote text can only ever be text.
    public static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        + "font-src 'none'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; "
        + "require-trusted-types-for 'script'; trusted-types 'none'"

    /// The headers of every answer of the dashboard besides its type, length and coding.
    public static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy", contentSecurityPolicy), ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"), ("Referrer-Policy", "no-referrer"),
        ("Cross-Origin-Opener-Policy", "same-origin"), ("Cross-Origin-Resource-Policy", "same-origin"),
    ]

    /// What to answer for `asset`: 304 when the client's `If-None-Match` holds its tag, else the bytes,
    /// gzip-compressed when `gzip` is accepted and that is smaller. Always revalidated (`no-cache`), so a new
    /// binary's page is never mixed with an old one's scripts.
    public static func answer(_ asset: WebAsset, ifNoneMatch: String?, acceptsGzip: Bool) -> WebAnswer {
        var headers = securityHeaders
        headers.append(("ETag", asset.etag))
        headers.append(("Cache-Control", "no-cache"))
        headers.append(("Vary", "Accept-Encoding"))
        if let ifNoneMatch, matches(ifNoneMatch, asset.etag) {
            return WebAnswer(status: 304, headers: headers, body: [])
        }
        headers.append(("Content-Type", asset.contentType))
        if acceptsGzip, let gzipped = asset.gzipped {
            headers.append(("Content-Encoding", "gzip"))
            return WebAnswer(status: 200, headers: headers, body: gzipped)
        }
        return WebAnswer(status: 200, headers: headers, body: asset.bytes)
    }

    /// Whether an `If-None-Match` value (a list of tags, or `*`) names `etag`; weak tags compare by their
    /// opaque part, as RFC 9110 asks of `If-None-Match`.
    static func matches(_ header: String, _ etag: String) -> Bool {
        header.split(separator: ",").contains { item in
            var tag = item.trimmingSpaces
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag = String(tag.dropFirst(2)) }
            return tag == etag
        }
    }
}

/// An answer of the dashboard, without a server library: status, headers and body.
public struct WebAnswer: Sendable, Equatable {
    public let status: Int
    public let headers: [(String, String)]
    public let body: [UInt8]

    /// The value of the first header named `name` (compared without case).
    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    public static func == (left: WebAnswer, right: WebAnswer) -> Bool {
        left.status == right.status && left.body == right.body
            && left.headers.map { "\($0.0): \($0.1)" } == right.headers.map { "\($0.0): \($0.1)" }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
