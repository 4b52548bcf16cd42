import Foundation

/// The bearer token every request must carry when `serve` listens beyond loopback.
///
/// Compared in time that does not depend on where the first difference is, so the time an
/// answer takes tells nothing about the token.
public struct BearerToken: Sendable {
    private let expected: [UInt8]

    /// The shortest token accepted.
    public static let minimumLength = 16

    /// The token from a token file's text: its first line, blanks around it removed; `nil` when that
    /// is shorter than ``minimumLength`` bytes (a token a person could guess).
    public init?(fileText: String) {
        let line = fileText.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let token = line.trimmingCharacters(in: .whitespaces)
        guard token.utf8.count >= Self.minimumLength else { return nil }
        expected = Array(token.utf8)
    }

    /// The token itself, to register it as a secret that logs and spans scrub.
    public var secret: String { String(decoding: expected, as: UTF8.self) }

    /// Whether an `Authorization` header value carries this token (`Bearer TOKEN`, the scheme in any case).
    public func admits(authorization: String?) -> Bool {
        guard let authorization, authorization.utf8.count > 7,
            authorization.prefix(7).lowercased() == "bearer "
        else { return false }
        let given = Array(authorization.utf8.dropFirst(7))
        // Every byte of the expected token is compared whatever the given one holds.
        var difference = given.count == expected.count ? 0 : 1
        for index in expected.indices {
            difference |= Int(expected[index] ^ (index < given.count ? given[index] : 0))
        }
        return difference == 0
    }
}
