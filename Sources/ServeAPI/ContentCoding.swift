import Foundation
import Gzip

/// The content codings `serve` sends a metrics body in.
public enum ContentCoding: Sendable, Equatable {
    /// The body as it is.
    case identity
    /// The body gzip-compressed (`Content-Encoding: gzip`), as Prometheus asks for in every scrape.
    case gzip

    /// The `Content-Encoding` header's value, `nil` for ``identity``.
    public var headerValue: String? { self == .gzip ? "gzip" : nil }

    /// `bytes` in this coding (gzip at its fastest level: a body is compressed per request or per rendering).
    public func encode(_ bytes: [UInt8]) -> [UInt8] {
        self == .gzip ? Gzip.compress(bytes, level: .fastest) : bytes
    }

    /// The coding an `Accept-Encoding` header asks for: gzip when it names `gzip` (or `x-gzip`, or `*`)
    /// with a weight above zero, else the body as it is (RFC 9110, section 12.5.3).
    public static func negotiate(acceptEncoding: String?) -> ContentCoding {
        guard let acceptEncoding else { return .identity }
        var gzip: Double?
        var any: Double?
        for item in acceptEncoding.split(separator: ",") {
            let parts = item.split(separator: ";")
            guard let name = parts.first?.trimmingCharacters(in: .whitespaces).lowercased(), !name.isEmpty else {
                continue
            }
            var weight = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                if pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "q" {
                    weight = Double(pair[1].trimmingCharacters(in: .whitespaces)) ?? 0
                }
            }
            switch name {
            case "gzip", "x-gzip": gzip = max(gzip ?? 0, weight)
            case "*": any = max(any ?? 0, weight)
            default: break
            }
        }
        return (gzip ?? any ?? 0) > 0 ? .gzip : .identity
    }
}
