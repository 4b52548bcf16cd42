/// An HTTP request method, such as `GET` or `POST`.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The method as sent on the request line, e.g. `POST`.
    public let rawValue: String

    /// Creates a method from its token; validity is checked when the request is sent.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Creates a method from a string literal such as `"PATCH"`.
    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    /// `GET`.
    public static let get = HTTPMethod(rawValue: "GET")
    /// `HEAD`: the response has no body.
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// `POST`.
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PUT`.
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `PATCH`.
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// `DELETE`.
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// `OPTIONS`.
    public static let options = HTTPMethod(rawValue: "OPTIONS")

    /// The method token.
    public var description: String { rawValue }

    /// Whether the token is non-empty and made of RFC 9110 token characters only.
    var isValidToken: Bool {
        !rawValue.isEmpty && rawValue.utf8.allSatisfy(HTTPHeaders.isTokenByte)
    }
}
