import Foundation

/// The parameters of a request's query string, read strictly: a request the API cannot read
/// exactly is refused with a sentence saying why, never half-understood.
///
/// Limits keep a hostile query cheap: at most ``maximumLength`` bytes, ``maximumCount`` parameters,
/// each named once, each one the endpoint knows.
public struct QueryParameters: Sendable, Equatable {
    /// The longest query string read, in bytes.
    public static let maximumLength = 2048
    /// The most parameters in one query.
    public static let maximumCount = 16

    /// The decoded parameters by name.
    public let values: [String: String]

    /// Reads `query` (without the `?`), accepting only parameters named in `allowed`.
    public init(_ query: String?, allowed: Set<String>) throws(APIError) {
        guard let query, !query.isEmpty else {
            values = [:]
            return
        }
        guard query.utf8.count <= Self.maximumLength else {
            throw APIError(
                status: 414, code: "query_too_long",
                message: "the query string is \(query.utf8.count) bytes; at most \(Self.maximumLength) are read")
        }
        let pairs = query.split(separator: "&", omittingEmptySubsequences: true)
        guard pairs.count <= Self.maximumCount else {
            throw APIError.badRequest(
                "the query has \(pairs.count) parameters; at most \(Self.maximumCount) are read")
        }
        var values: [String: String] = [:]
        for pair in pairs {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(parts[0]), let value = Self.decode(parts.count > 1 ? parts[1] : "") else {
                throw APIError.badRequest("the query parameter \(Self.shown(pair)) is not valid percent-encoded UTF-8")
            }
            guard allowed.contains(name) else {
                let known = allowed.sorted().joined(separator: ", ")
                throw APIError.badRequest(
                    "unknown query parameter \(Self.shown(Substring(name)))"
                        + (known.isEmpty ? "; this endpoint takes none" : "; this endpoint takes: \(known)"))
            }
            guard values[name] == nil else {
                throw APIError.badRequest("the query parameter \(name) is given twice; give it once")
            }
            values[name] = value
        }
        self.values = values
    }

    public subscript(name: String) -> String? { values[name] }

    /// `+` as space, then percent-decoding; `nil` for malformed escapes or bytes that are not UTF-8.
    static func decode(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    /// A parameter as quoted in a message: at most 64 characters, control characters escaped.
    static func shown(_ text: Substring) -> String {
        let cut = text.count > 64 ? text.prefix(64) + "…" : text
        var shown = "\""
        for scalar in cut.unicodeScalars {
            shown +=
                scalar.value < 0x20 || scalar.value == 0x7f ? "\\u{\(String(scalar.value, radix: 16))}" : "\(scalar)"
        }
        return shown + "\""
    }
}
