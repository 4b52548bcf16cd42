import Foundation

/// The bearer token every request must carry when `serve` listens beyond loopback.
///
/// Compared in time that does not depend on where the first difference is, so the time an
/// answer takes tells nothing about the token.
public struct BearerToken: Sendable {
    private let expected: [UInt8]

    /// The shortest token accepted: 32 characters, as `openssl rand -hex 16` prints.
    public static let minimumLength = 32

    /// Why a token file's text holds no usable token.
    public enum Problem: Error, Sendable, Equatable {
        /// The first line is empty or only blanks (the token must be the first line, not a later one).
        case emptyFirstLine
        /// The first line holds fewer than ``BearerToken/minimumLength`` bytes.
        case tooShort(length: Int)
    }

    /// The token from a token file's text: exactly its first line, blanks (and a CR) around it removed.
    ///
    /// - Throws: ``Problem`` when that line is empty or shorter than ``minimumLength`` bytes (a token a
    ///   person could guess). A token on a later line is not looked for: a file that starts with an empty
    ///   line is a mistake to report, not to work around.
    public init(fileText: String) throws(Problem) {
        // Split on the newline scalar: as a Character, "\r\n" is one grapheme that no "\n" matches.
        let line = String(
            String.UnicodeScalarView(fileText.unicodeScalars.prefix { $0 != "\n" }))
        let token = line.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\r")))
        guard !token.isEmpty else { throw .emptyFirstLine }
        guard token.utf8.count >= Self.minimumLength else { throw .tooShort(length: token.utf8.count) }
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
