/// An ordered list of HTTP header fields with case-insensitive lookup.
///
/// Printing, dumping or mirroring headers shows the values of secret fields (`Authorization`, `x-api-key`,
/// cookies, anything named like a token or key, and any field added with `secret: true`) as `REDACTED`; only
/// iteration and lookup give the real values.
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible,
    CustomDebugStringConvertible, CustomReflectable
{
    /// One header field.
    public typealias Element = (name: String, value: String)

    private struct Field: Hashable, Sendable {
        var name: String
        var value: String
        var key: String
        /// Whether the value is a secret whatever the name says (a header the user gave).
        var secret = false
    }

    private var fields: [Field] = []

    /// Creates an empty header list.
    public init() {}

    /// Creates headers from name–value pairs, keeping their order and duplicates.
    public init(_ pairs: [(String, String)]) {
        for (name, value) in pairs {
            add(name: name, value: value)
        }
    }

    /// Creates headers from a dictionary literal, in the literal's order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The number of fields, counting repeated names.
    public var count: Int { fields.count }

    /// Whether there is no field.
    public var isEmpty: Bool { fields.isEmpty }

    /// Appends a field, keeping any existing field of the same name.
    ///
    /// With `secret`, the value is shown as `REDACTED` whatever the name: a header a user passes may carry a
    /// credential under any name (`x-honeycomb-team`, a custom API token header).
    public mutating func add(name: String, value: String, secret: Bool = false) {
        fields.append(Field(name: name, value: value, key: name.lowercased(), secret: secret))
    }

    /// The fields added with `secret: true`, to scrub from text a server echoes those of their values that
    /// may be credentials.
    public var secretFields: [Element] {
        fields.filter(\.secret).map { ($0.name, $0.value) }
    }

    /// Replaces every field of this name by one field, or appends it when there was none.
    public mutating func replaceOrAdd(name: String, value: String) {
        let key = name.lowercased()
        guard let first = fields.firstIndex(where: { $0.key == key }) else {
            add(name: name, value: value)
            return
        }
        fields[first] = Field(name: name, value: value, key: key)
        var index = first + 1
        while index < fields.count {
            if fields[index].key == key {
                fields.remove(at: index)
            } else {
                index += 1
            }
        }
    }

    /// Removes every field of this name.
    public mutating func remove(name: String) {
        let key = name.lowercased()
        fields.removeAll { $0.key == key }
    }

    /// The value of the first field of this name, compared case-insensitively.
    public subscript(name: String) -> String? {
        let key = name.lowercased()
        return fields.first { $0.key == key }?.value
    }

    /// The values of every field of this name, in order.
    public func values(for name: String) -> [String] {
        let key = name.lowercased()
        return fields.filter { $0.key == key }.map(\.value)
    }

    /// Whether a field of this name is present.
    public func contains(name: String) -> Bool {
        let key = name.lowercased()
        return fields.contains { $0.key == key }
    }

    /// Iterates the fields in order, with their real values.
    public func makeIterator() -> AnyIterator<Element> {
        var iterator = fields.makeIterator()
        return AnyIterator {
            iterator.next().map { (name: $0.name, value: $0.value) }
        }
    }

    /// The fields with secret values replaced by `REDACTED`, safe for logs, spans and error messages.
    public var redacted: [(name: String, value: String)] {
        fields.map { (name: $0.name, value: $0.secret || HTTPHeaders.isSecret(name: $0.name) ? "REDACTED" : $0.value) }
    }

    /// `[Name: value, …]` with secret values redacted.
    public var description: String {
        "[" + redacted.map { "\($0.name): \($0.value)" }.joined(separator: ", ") + "]"
    }

    /// The same as `description`: secrets stay redacted in debug output too.
    public var debugDescription: String { description }

    /// A mirror of the redacted fields, so `dump` cannot reveal secret values.
    public var customMirror: Mirror {
        Mirror(self, unlabeledChildren: redacted.map { "\($0.name): \($0.value)" }, displayStyle: .collection)
    }

    /// Whether a header's value is a credential that must never be printed, traced or stored.
    ///
    /// Exact names (`Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie`) and any name containing
    /// `auth`, `token`, `secret`, `password`, `passwd`, `api-key`, `apikey`, `api_key`, `session`, `signature`,
    /// `credential` or `cookie` are secret. `traceparent` and the usual content headers are not.
    public static func isSecret(name: String) -> Bool {
        let key = name.lowercased()
        return secretNameFragments.contains { key.contains($0) }
    }

    private static let secretNameFragments = [
        "auth", "token", "secret", "password", "passwd", "api-key", "apikey", "api_key", "session", "signature",
        "credential", "cookie",
    ]

    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// Checks names and values before they reach the wire: a CR or LF in a value would let a caller's input
    /// inject headers or a second request.
    func validate(for request: String) throws(HTTPError) {
        for field in fields {
            guard !field.name.isEmpty, field.name.utf8.allSatisfy(HTTPHeaders.isTokenByte) else {
                throw HTTPError(
                    code: .invalidRequest,
                    message: "\(request): header name \"\(field.name)\" is not a valid HTTP token")
            }
            if field.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) {
                throw HTTPError(
                    code: .invalidRequest,
                    message: "\(request): the value of header \(field.name) contains a line break or NUL, "
                        + "which HTTP does not allow")
            }
        }
    }
}
