import AgentTracing
public import Foundation

/// An API key and where it came from. Printing, dumping or interpolating it shows only its origin.
public struct APIKey: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The secret itself; read only to build the authentication header and to scrub it from server text.
    let secret: String
    /// Where the key came from, for messages: `OPENAI_API_KEY`, `the credentials file ~/.config/…`.
    public let origin: String

    /// Creates a key; `origin` says where it came from in words a user recognises.
    public init(_ secret: String, origin: String) {
        self.secret = secret
        self.origin = origin
    }

    /// `API key from ORIGIN`.
    public var description: String { "API key from \(origin)" }
    /// The same as `description`.
    public var debugDescription: String { description }
    /// A mirror without the secret, so `dump` cannot show it.
    public var customMirror: Mirror { Mirror(self, children: ["origin": origin]) }

    /// Hands the key to `register`, for a redaction list that scrubs it from everything printed or traced (and
    /// for nothing else). A key shorter than ``shortestKey`` bytes is not handed over, as ``scrub(_:)`` leaves
    /// it: it is a local server's placeholder (`OPENAI_API_KEY=x` for a server that checks none), and
    /// registering `x` made every x of every message and span `REDACTED`.
    public func registerForRedaction(_ register: (String) -> Void) {
        guard secret.utf8.count >= Self.shortestKey else { return }
        register(secret)
    }

    /// The length from which a key is scrubbed from text: no provider issues shorter keys.
    static let shortestKey = 4

    /// Replaces every occurrence of the key in `text` (a server may echo it in an error) by `REDACTED`.
    public func scrub(_ text: String) -> String {
        guard secret.utf8.count >= Self.shortestKey, text.contains(secret) else {
            return text
        }
        return text.replacingOccurrences(of: secret, with: "REDACTED")
    }
}

/// Finds the API key for a provider: a credentials file, a named environment variable, or the provider's own
/// variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `OPENROUTER_API_KEY`), in that order.
public struct APIKeyResolver: Sendable {
    /// The environment to read variables from.
    public var environment: [String: String]

    /// Creates a resolver over an environment, the process's by default.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    /// The key for `kind`, or `nil` when no source holds one and none was named.
    ///
    /// A named variable that is unset or empty is an error, and so is a credentials file that others can read
    /// (its mode must allow nobody but its owner, e.g. 0600), that cannot be read, or that has no key for the
    /// provider. A credentials file holds either the key alone or `NAME=value` lines (`#` comments allowed),
    /// of which the provider's variable name is used.
    public func resolve(
        for kind: ProviderKind, variable: String? = nil, credentialsFile: String? = nil
    ) throws(ChatError) -> APIKey? {
        if let credentialsFile {
            return try readCredentialsFile(credentialsFile, kind: kind)
        }
        if let variable {
            guard let value = environment[variable]?.trimmingCharacters(in: .whitespacesAndNewlines),
                !value.isEmpty
            else {
                throw ChatError(
                    kind: .auth, message: "the environment variable \(variable) named for the API key is not set")
            }
            return APIKey(value, origin: variable)
        }
        if let name = kind.apiKeyVariable,
            let value = environment[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty
        {
            return APIKey(value, origin: name)
        }
        return nil
    }

    private func readCredentialsFile(_ path: String, kind: ProviderKind) throws(ChatError) -> APIKey {
        let text: String
        do {
            text = try PrivateFile.text(at: path, describedAs: "the credentials file")
        } catch {
            throw ChatError(kind: .configuration, message: error.message)
        }
        let origin = "the credentials file \(path)"
        var assignments: [String: String] = [:]
        var plain: [String] = []
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") {
                continue
            }
            if let equals = line.firstIndex(of: "="), Self.isVariableName(line[..<equals]) {
                var value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
                if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first {
                    value = String(value.dropFirst().dropLast())
                }
                assignments[String(line[..<equals])] = value
            } else {
                plain.append(line)
            }
        }
        if assignments.isEmpty, plain.count == 1 {
            return APIKey(plain[0], origin: origin)
        }
        if let name = kind.apiKeyVariable, let value = assignments[name], !value.isEmpty {
            return APIKey(value, origin: origin)
        }
        let wanted = kind.apiKeyVariable.map { "a line \($0)=… or " } ?? ""
        throw ChatError(
            kind: .configuration,
            message: "the credentials file \(path) has no key for \(kind.displayName); write \(wanted)the key alone")
    }

    private static func isVariableName(_ text: Substring) -> Bool {
        guard let first = text.first, first == "_" || first.isLetter else {
            return false
        }
        return text.allSatisfy { $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }
    }
}
