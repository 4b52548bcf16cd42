public import AgentTracing
import Foundation

/// Secrets that arrive as command-line arguments, which every local user can read in `/proc/PID/cmdline`
/// while hostscope runs: which values look like credentials (for a warning on stderr), and URL options that
/// take `@FILE` instead of the URL itself.
public enum ArgumentSecrets {
    /// Whether a header value given inline looks like a credential: a credential-like name
    /// (``Redaction/isSensitiveHeader(_:)``), an authentication scheme (`Bearer …`, `Basic …`), or a long
    /// token of letters and digits (an API key under a name such as `x-honeycomb-team`).
    public static func looksSecret(headerName: String, value: String) -> Bool {
        if Redaction.isSensitiveHeader(headerName) { return true }
        let words = value.split(whereSeparator: { $0 == " " || $0 == "\t" })
        if words.count == 2, Redaction.authenticationSchemes.contains(words[0].lowercased()) { return true }
        return looksLikeToken(value)
    }

    /// At least 16 characters without blanks, letters and digits both, and not a URL or a path.
    static func looksLikeToken(_ value: String) -> Bool {
        guard value.count >= 16, !value.contains(where: { $0 == " " || $0 == "\t" }) else { return false }
        guard !value.contains("://"), !value.hasPrefix("/") else { return false }
        return value.contains(where: \.isLetter) && value.contains(where: \.isNumber)
    }

    /// A warning for a URL given inline that carries credentials (userinfo, or a token in its query), or
    /// `nil` when it carries none. The URL is never quoted.
    public static func urlWarning(_ url: String, option: String, saferForm: String) -> String? {
        guard !Redaction.urlSecrets(url).isEmpty else { return nil }
        return "\(option) carries credentials (user:password@ or a token in its query), which every local user can "
            + "read on the command line (/proc/PID/cmdline) while hostscope runs; \(saferForm)"
    }

    /// A URL option's value: the argument itself, or with `@FILE` the file's first line (the file must be
    /// readable by its owner alone, as the credentials file). The URL's credentials are registered with
    /// `secrets` before it is returned.
    public static func url(
        _ argument: String, option: String, registeringWith secrets: SecretScrubber = ProcessSecrets.scrubber
    ) throws(PrivateFileError) -> (url: String, fromFile: Bool) {
        guard argument.hasPrefix("@") else {
            for secret in Redaction.urlSecrets(argument) { secrets.register(secret) }
            return (argument, false)
        }
        let text = try PrivateFile.text(at: String(argument.dropFirst()), describedAs: "the file given to \(option)")
        let url =
            text.split(whereSeparator: \.isNewline).lazy.map { $0.trimmingCharacters(in: .whitespaces) }
            .first { !$0.isEmpty && !$0.hasPrefix("#") } ?? ""
        for secret in Redaction.urlSecrets(url) { secrets.register(secret) }
        return (url, true)
    }
}
