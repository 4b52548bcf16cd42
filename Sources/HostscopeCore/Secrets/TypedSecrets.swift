public import AgentTracing

/// Whether text a person typed holds what looks like a credential, so that it is kept out of files that outlive
/// the run (the chat's input history).
///
/// It errs on the side of leaving a line out: a line is taken for secret when it holds a secret this process
/// knows (an API key, a password read for SSH), a URL with credentials, a `name=value` or `name: value` whose name
/// is a credential's (`password=`, `token:`, `api_key=`), `Bearer` or `Basic` before a token, a PEM private key,
/// a word with a well-known key prefix (`sk-`, `ghp_`, `AKIA`, …), or a long random-looking word (24 characters or
/// more of letters and digits mixing upper and lower case). Hex digits alone (span and trace ids, commit hashes)
/// are not taken for secrets.
public enum TypedSecrets {
    /// Whether `text` looks like it holds a credential.
    public static func looksSecret(_ text: String, registered: SecretScrubber = ProcessSecrets.scrubber) -> Bool {
        if registered.scrub(text) != text { return true }
        if text.contains("-----BEGIN"), text.contains("PRIVATE KEY") { return true }
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
        for (index, word) in words.enumerated() {
            if word.contains("://"), !Redaction.urlSecrets(String(word)).isEmpty { return true }
            if assignsCredential(word, next: index + 1 < words.count ? words[index + 1] : nil) { return true }
            if ["bearer", "basic"].contains(word.lowercased()), index + 1 < words.count,
                words[index + 1].count >= 8, words[index + 1].contains(where: \.isNumber)
            {
                return true
            }
            if hasKeyPrefix(word) || looksRandom(word) { return true }
        }
        return false
    }

    /// `password=hunter2`, `token: abc`, `api_key="…"`: a credential's name with a value.
    private static func assignsCredential(_ word: Substring, next: Substring?) -> Bool {
        guard let separator = word.firstIndex(where: { $0 == "=" || $0 == ":" }) else { return false }
        let name = word[..<separator].trimmingCharacters(in: "\"'-")
        guard !name.isEmpty, Redaction.isSensitiveParameter(name) else { return false }
        let value = word[word.index(after: separator)...]
        return !value.isEmpty || (word[separator] == ":" && !(next ?? "").isEmpty)
    }

    /// Prefixes of keys issued by well-known services.
    static let keyPrefixes = [
        "sk-", "sk_live_", "sk_test_", "rk_live_", "ghp_", "gho_", "ghs_", "ghu_", "github_pat_", "glpat-", "xoxb-",
        "xoxp-", "xoxa-", "AKIA", "ASIA", "AIza", "hf_", "npm_", "pypi-",
    ]

    private static func hasKeyPrefix(_ word: Substring) -> Bool {
        keyPrefixes.contains { prefix in word.hasPrefix(prefix) && word.count >= prefix.count + 12 }
    }

    /// 24 characters or more of a key's alphabet (letters, digits, `+/=_-.`), with upper and lower case letters and
    /// digits, and not hex digits alone.
    private static func looksRandom(_ word: Substring) -> Bool {
        guard word.count >= 24, !word.hasPrefix("/") else { return false }
        var upper = false
        var lower = false
        var digit = false
        for character in word.unicodeScalars {
            switch character {
            case "A"..."Z": upper = true
            case "a"..."z": lower = true
            case "0"..."9": digit = true
            case "+", "/", "=", "_", "-", ".": break
            default: return false
            }
        }
        return upper && lower && digit
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        String(drop(while: { set.contains($0) }).reversed().drop(while: { set.contains($0) }).reversed())
    }
}
