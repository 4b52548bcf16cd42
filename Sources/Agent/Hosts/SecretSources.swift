import Foundation
import SSHTransport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where passwords and key passphrases come from: an environment variable named on the command
/// line, else a prompt on the controlling terminal. Never argv, never a file hostscope writes.
struct SecretSources: Sendable {
    var passwordVariable: String?
    var passphraseVariable: String?
    var environment: [String: String]
    var allowPrompts: Bool

    /// Whether password authentication has any source at all.
    var canSupplyPassword: Bool {
        passwordVariable.flatMap { environment[$0] } != nil || (allowPrompts && TerminalPrompt.isAvailable)
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
                guard sources.allowPrompts else { return nil }
                secret = TerminalPrompt.ask("\(user)@\(host)'s password: ")
            case .passphrase(let keyPath):
                if let name = sources.passphraseVariable, let value = sources.environment[name] { return Secret(value) }
                guard sources.allowPrompts else { return nil }
                secret = TerminalPrompt.ask("Enter passphrase for key '\(keyPath)': ")
            }
            if let secret { ProcessSecrets.register(secret.reveal) }
            return secret
        }
    }
}

/// Reads a secret from `/dev/tty` with echo off, one prompt at a time across all sessions.
enum TerminalPrompt {
    private static let lock = Mutex(())

    static var isAvailable: Bool {
        let descriptor = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        close(descriptor)
        return true
    }

    static func ask(_ prompt: String) -> Secret? {
        lock.withLock { _ in
            let descriptor = open("/dev/tty", O_RDWR | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            var original = termios()
            let isTerminal = tcgetattr(descriptor, &original) == 0
            if isTerminal {
                var silent = original
                silent.c_lflag &= ~tcflag_t(ECHO)
                tcsetattr(descriptor, TCSAFLUSH, &silent)
            }
            defer {
                if isTerminal {
                    tcsetattr(descriptor, TCSAFLUSH, &original)
                    _ = write(descriptor, "\n", 1)
                }
            }
            // The prompt names a host and a key path; neither may drive the terminal.
            _ = TerminalText.sanitize(prompt).withCString { write(descriptor, $0, strlen($0)) }
            var bytes: [UInt8] = []
            var byte: UInt8 = 0
            while read(descriptor, &byte, 1) == 1, byte != UInt8(ascii: "\n") {
                bytes.append(byte)
            }
            return Secret(String(decoding: bytes, as: UTF8.self))
        }
    }
}
