import SSHTransport

/// Asks a person for a secret: the command line asks on the controlling terminal with echo off; a
/// service has no one to ask and gives none.
public struct SecretPrompter: Sendable {
    /// Whether anyone can be asked now (a controlling terminal exists).
    public var isAvailable: @Sendable () -> Bool
    /// The answer to `prompt` (`me@web1's password: `), or `nil` when none came.
    public var ask: @Sendable (_ prompt: String) -> String?

    public init(isAvailable: @escaping @Sendable () -> Bool, ask: @escaping @Sendable (String) -> String?) {
        self.isAvailable = isAvailable
        self.ask = ask
    }
}

/// Where passwords and key passphrases come from: an environment variable named on the command
/// line, else the face's prompter. Never argv, never a file hostscope writes.
struct SecretSources: Sendable {
    var passwordVariable: String?
    var passphraseVariable: String?
    var environment: [String: String]
    var prompter: SecretPrompter?

    /// Whether password authentication has any source at all.
    var canSupplyPassword: Bool {
        passwordVariable.flatMap { environment[$0] } != nil || (prompter?.isAvailable() ?? false)
    }

    var provider: SecretProvider {
        let sources = self
        // Secrets are registered with the span scrubber before anything can record them.
        for name in [passwordVariable, passphraseVariable].compactMap({ $0 }) {
            if let value = environment[name] { ProcessSecrets.register(value) }
        }
        return { request in
            let secret: Secret?
            switch request {
            case .password(let user, let host):
                if let name = sources.passwordVariable, let value = sources.environment[name] { return Secret(value) }
                secret = sources.prompter?.ask("\(user)@\(host)'s password: ").map(Secret.init)
            case .passphrase(let keyPath):
                if let name = sources.passphraseVariable, let value = sources.environment[name] { return Secret(value) }
                secret = sources.prompter?.ask("Enter passphrase for key '\(keyPath)': ").map(Secret.init)
            }
            if let secret { ProcessSecrets.register(secret.reveal) }
            return secret
        }
    }
}
