import ValueFormats

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Redaction of credentials at the source, before a value enters a span.
///
/// What is covered:
/// - URLs (``url(_:)``): userinfo (`user:password@`) is removed; the values of query and fragment
///   parameters whose names look like credentials (``isSensitiveParameter(_:)``) become `REDACTED`.
/// - Headers (``headers(_:)``, ``headerAttributes(_:prefix:)``): values of `Authorization`,
///   `Proxy-Authorization`, `x-api-key`, `api-key`, `Cookie`, `Set-Cookie` and any header whose name
///   looks like a credential (``isSensitiveHeader(_:)``) become `REDACTED`.
/// - Span attributes (``attributeValue(key:_:)``, applied by every span of ``RingBufferTracer``):
///   `url.full`, `url.original`, `http.url` are cleaned as URLs and `url.query` as a query;
///   `http.request.header.*` / `http.response.header.*` follow the header rule; attributes whose last
///   key segment names a credential (`password`, `passphrase`, `secret`, `token`, `api_key`,
///   `authorization`, …) are replaced whole.
/// - Registered secret strings (``SecretScrubber``): every string a span records (name, attribute and
///   event values, status and error messages, link attributes) has occurrences of a registered
///   secret, or of its percent-encoded form, replaced by `REDACTED`.
///
/// Not covered: secrets that were never registered and hide in free text (a command line with
/// a password typed inline), or in encodings other than the two above; register such values.
public enum Redaction {
    /// What replaces a redacted value.
    public static let marker = "REDACTED"

    // MARK: URLs

    /// The URL without userinfo and with credential-like query and fragment parameters redacted.
    ///
    /// Text without a `scheme://` prefix is treated as a path with an optional query.
    public static func url(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var rest = bytes[...]
        if let schemeEnd = firstIndex(of: Array("://".utf8), in: bytes) {
            output.append(contentsOf: bytes[..<(schemeEnd + 3)])
            rest = bytes[(schemeEnd + 3)...]
            let authorityEnd =
                rest.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
                )
                ?? rest.endIndex
            var authority = rest[..<authorityEnd]
            if let at = authority.lastIndex(of: UInt8(ascii: "@")) {
                authority = authority[(at + 1)...]
            }
            output.append(contentsOf: authority)
            rest = rest[authorityEnd...]
        }
        var fragment: ArraySlice<UInt8>?
        if let hash = rest.firstIndex(of: UInt8(ascii: "#")) {
            fragment = rest[(hash + 1)...]
            rest = rest[..<hash]
        }
        if let question = rest.firstIndex(of: UInt8(ascii: "?")) {
            output.append(contentsOf: rest[...question])
            output.append(contentsOf: query(String(decoding: rest[(question + 1)...], as: UTF8.self)).utf8)
        } else {
            output.append(contentsOf: rest)
        }
        if let fragment {
            output.append(UInt8(ascii: "#"))
            if fragment.contains(UInt8(ascii: "=")) {
                output.append(contentsOf: query(String(decoding: fragment, as: UTF8.self)).utf8)
            } else {
                output.append(contentsOf: fragment)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func firstIndex(of needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard needle.count <= bytes.count else { return nil }
        for start in 0...(bytes.count - needle.count) where bytes[start..<(start + needle.count)].elementsEqual(needle)
        {
            return start
        }
        return nil
    }

    /// The credentials a URL carries, as a scrubber should know them: the userinfo's password (or the whole
    /// userinfo when it has no `:`), and the values of credential-like query parameters, decoded and as
    /// written. Empty for a URL without any.
    public static func urlSecrets(_ text: String) -> [String] {
        var found: [String] = []
        if let schemeEnd = text.firstRange(of: "://")?.upperBound {
            let rest = text[schemeEnd...]
            let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@") {
                let userinfo = rest[..<at]
                if let colon = userinfo.firstIndex(of: ":") {
                    found.append(String(userinfo[userinfo.index(after: colon)...]))
                } else {
                    found.append(String(userinfo))
                }
            }
        }
        if let question = text.firstIndex(of: "?") {
            let end = text[question...].firstIndex(of: "#") ?? text.endIndex
            for parameter in text[text.index(after: question)..<end].split(separator: "&") {
                guard let equals = parameter.firstIndex(of: "=") else { continue }
                if isSensitiveParameter(percentDecoded(parameter[..<equals])) {
                    let value = parameter[parameter.index(after: equals)...]
                    found.append(percentDecoded(value))
                    found.append(String(value))
                }
            }
        }
        return found.filter { !$0.isEmpty }
    }

    /// A query string (without `?`) with credential-like parameter values redacted.
    public static func query(_ text: String) -> String {
        guard !text.isEmpty else { return text }
        return text.split(separator: "&", omittingEmptySubsequences: false).map { parameter -> String in
            guard let equals = parameter.firstIndex(of: "=") else { return String(parameter) }
            let name = parameter[..<equals]
            return isSensitiveParameter(percentDecoded(name)) ? String(name) + "=" + marker : String(parameter)
        }.joined(separator: "&")
    }

    /// Whether a query parameter with this (decoded) name carries a credential.
    public static func isSensitiveParameter(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return sensitiveParameterNames.contains(lowered)
            || sensitiveNameFragments.contains(where: { lowered.contains($0) })
    }

    /// Parameter names that are credentials whatever else they could mean.
    public static let sensitiveParameterNames: Set<String> = [
        "token", "key", "api_key", "apikey", "api-key", "access_token", "refresh_token", "id_token", "password",
        "passwd", "pwd", "pass", "secret", "client_secret", "sig", "signature", "auth", "authorization", "code",
        "session", "sessionid", "awsaccesskeyid", "x-amz-signature", "x-amz-credential", "x-amz-security-token",
        "x-goog-signature", "x-goog-credential", "credential", "private_key",
    ]

    /// Substrings that mark a parameter or header name as a credential (`X-Auth-Token`, `client_secret`).
    public static let sensitiveNameFragments: [String] = [
        "token", "secret", "passw", "apikey", "api_key", "api-key", "signature", "credential", "authoriz", "auth-",
        "auth_", "-auth", "_auth", "cookie", "session",
    ]

    // MARK: Headers

    /// Header names whose values are credentials.
    public static let sensitiveHeaderNames: Set<String> = [
        "authorization", "proxy-authorization", "x-api-key", "api-key", "cookie", "set-cookie", "x-auth-token",
        "x-amz-security-token", "x-goog-api-key", "x-csrf-token",
    ]

    /// Whether a header's value is a credential (case-insensitive).
    public static func isSensitiveHeader(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return sensitiveHeaderNames.contains(lowered)
            || sensitiveNameFragments.contains(where: { lowered.contains($0) })
    }

    /// The strings to register for a header value a user passed: the value, and the credential after an
    /// authentication scheme (`Bearer abc` also leaks as `abc` alone). Other values are kept whole: the last
    /// word of `tenant 4` is no secret of its own, and registering `4` would redact every 4.
    public static func headerValueSecrets(_ value: String) -> [String] {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let trimmed = String(value.drop(while: blank).reversed().drop(while: blank).reversed())
        guard !trimmed.isEmpty else { return [] }
        var secrets = [trimmed]
        let words = trimmed.split(whereSeparator: blank)
        if words.count == 2, authenticationSchemes.contains(words[0].lowercased()) {
            secrets.append(String(words[1]))
        }
        return secrets
    }

    /// The strings to register for the value of header `name` that a user passed: under a name that says
    /// credential (``isSensitiveHeader(_:)``), ``headerValueSecrets(_:)`` whatever their length; under any
    /// other name, those of at least ``shortestUnnamedHeaderSecret`` characters.
    ///
    /// A value may be a credential whatever its header's name (`x-honeycomb-team` carries an API key), so
    /// long values count as secrets everywhere. Short ones under other names are tenant and routing values
    /// (`X-Scope-OrgID: 1`, `x-tenant: ops`): registering `1` turned every 1 of every message, record and
    /// span into `REDACTED` (`webREDACTED`, `REDACTED27.0.0.REDACTED`), and no API key is that short.
    public static func headerSecrets(name: String, value: String) -> [String] {
        let secrets = headerValueSecrets(value)
        if isSensitiveHeader(name) { return secrets }
        return secrets.filter { $0.count >= shortestUnnamedHeaderSecret }
    }

    /// The length from which the value of a header whose name does not say credential is a secret.
    public static let shortestUnnamedHeaderSecret = 8

    /// HTTP authentication schemes (and the usual home-made ones) that come before a credential.
    public static let authenticationSchemes: Set<String> = [
        "bearer", "basic", "token", "apikey", "api-key", "key", "digest", "negotiate", "ntlm", "hmac", "sso-key",
    ]

    /// The headers with credential values replaced by `REDACTED`, order and names kept.
    public static func headers(_ headers: [(name: String, value: String)]) -> [(name: String, value: String)] {
        headers.map { isSensitiveHeader($0.name) ? ($0.name, marker) : $0 }
    }

    /// OpenTelemetry header attributes (`http.request.header.<lowercased name>` as string arrays),
    /// credential values redacted, repeated headers merged in order.
    public static func headerAttributes(
        _ headers: [(name: String, value: String)], prefix: String = "http.request.header."
    ) -> [Attribute] {
        var result: [Attribute] = []
        for header in headers {
            let key = prefix + header.name.lowercased()
            let value = isSensitiveHeader(header.name) ? marker : header.value
            if let index = result.firstIndex(where: { $0.key == key }),
                case .stringArray(var values) = result[index].value
            {
                values.append(value)
                result[index].value = .stringArray(values)
            } else {
                result.append(Attribute(key, .stringArray([value])))
            }
        }
        return result
    }

    // MARK: Attributes

    /// Last key segments that name a credential: `db.password`, `ssh.passphrase`, `llm.api_key`.
    public static let sensitiveAttributeNames: Set<String> = [
        "password", "passphrase", "secret", "token", "api_key", "apikey", "authorization", "access_token",
        "refresh_token", "private_key", "cookie", "credentials",
    ]

    /// A string attribute's value with the key-based rules applied: the path of every string attribute a
    /// span records, so it skips the enum and, for an ordinary key, returns the text untouched.
    static func attributeText(key: String, _ text: String) -> String {
        switch rule(forKey: key) {
        case .none: text
        case .url: url(text)
        case .query: query(text)
        case .header(let name): isSensitiveHeader(name) ? marker : text
        case .credential: marker
        }
    }

    /// The value with the key-based rules applied (URL keys cleaned, credential keys replaced).
    public static func attributeValue(key: String, _ value: AttributeValue) -> AttributeValue {
        switch value {
        case .string, .stringArray: break
        default: return value  // Only text can carry a credential.
        }
        switch rule(forKey: key) {
        case .none: return value
        case .url: return mapStrings(value, url)
        case .query: return mapStrings(value, query)
        case .header(let name): return isSensitiveHeader(name) ? mapStrings(value) { _ in marker } : value
        case .credential: return mapStrings(value) { _ in marker }
        }
    }

    private enum KeyRule {
        case none, url, query, header(String), credential
    }

    /// Which rule a key falls under, decided on its bytes without allocating: this runs for every
    /// string attribute a span records.
    private static func rule(forKey key: String) -> KeyRule {
        var key = key
        return key.withUTF8 { bytes -> KeyRule in
            switch bytes.count {
            case 8 where equals(bytes, "url.full") || equals(bytes, "http.url"): return .url
            case 12 where equals(bytes, "url.original"): return .url
            case 9 where equals(bytes, "url.query"): return .query
            default: break
            }
            // Both header prefixes are at least 20 bytes long: most keys are shorter than that.
            for prefix in headerPrefixes where bytes.count > 20 && hasPrefix(bytes, prefix) {
                let name = UnsafeBufferPointer(rebasing: bytes[prefix.utf8CodeUnitCount...])
                return .header(String(decoding: name, as: UTF8.self))
            }
            let start = bytes.lastIndex(of: UInt8(ascii: ".")).map { $0 + 1 } ?? 0
            let segment = bytes[start...]
            // Most last segments have a length no credential name has.
            guard segment.count < 64, sensitiveAttributeNameLengths & (1 << UInt64(segment.count)) != 0 else {
                return .none
            }
            for name in sensitiveAttributeNameBytes where name.count == segment.count {
                // ASCII case-insensitive: the names are lowercase letters and underscores.
                if zip(segment, name).allSatisfy({ $0 == $1 || $0 | 0x20 == $1 }) { return .credential }
            }
            return .none
        }
    }

    private static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        bytes.count == literal.utf8CodeUnitCount && hasPrefix(bytes, literal)
    }

    private static func hasPrefix(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        guard bytes.count >= literal.utf8CodeUnitCount, let base = bytes.baseAddress else { return false }
        return memcmp(base, literal.utf8Start, literal.utf8CodeUnitCount) == 0
    }

    /// Key prefixes of OpenTelemetry's HTTP header attributes.
    private static let headerPrefixes: [StaticString] = ["http.request.header.", "http.response.header."]

    /// ``sensitiveAttributeNames`` as lowercase bytes.
    private static let sensitiveAttributeNameBytes = sensitiveAttributeNames.map { Array($0.utf8) }

    /// Bit n is set when some name in ``sensitiveAttributeNames`` is n bytes long.
    private static let sensitiveAttributeNameLengths: UInt64 = sensitiveAttributeNames.reduce(0) {
        $0 | 1 << UInt64($1.utf8.count)
    }

    private static func mapStrings(_ value: AttributeValue, _ transform: (String) -> String) -> AttributeValue {
        switch value {
        case .string(let text): .string(transform(text))
        case .stringArray(let texts): .stringArray(texts.map(transform))
        default: value
        }
    }

    /// `%XX` sequences decoded, and `+` as a space unless `plusAsSpace` is false (a form query reads `+` as a
    /// space; the W3C Baggage lists of `OTEL_EXPORTER_OTLP_HEADERS` do not). Anything else is kept as written.
    public static func percentDecoded(_ text: Substring, plusAsSpace: Bool = true) -> String {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8)[...]
        while let byte = iterator.popFirst() {
            if byte == UInt8(ascii: "%"), iterator.count >= 2,
                let high = Hex.value(of: iterator[iterator.startIndex]),
                let low = Hex.value(of: iterator[iterator.startIndex + 1])
            {
                bytes.append(high << 4 | low)
                iterator = iterator.dropFirst(2)
            } else if plusAsSpace, byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
