import Foundation
public import HostscopeCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Reads a secret from `/dev/tty` with echo off, one prompt at a time across all sessions.
public enum TerminalPrompt {
    private static let lock = Mutex(())

    /// Whether the process has a controlling terminal to ask on.
    public static var isAvailable: Bool {
        let descriptor = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        close(descriptor)
        return true
    }

    /// Asks `prompt` on the terminal with echo off; `nil` without a terminal.
    public static func ask(_ prompt: String) -> String? {
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
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// The prompter the core asks for passwords and passphrases.
    public static let prompter = SecretPrompter(isAvailable: { isAvailable }, ask: { ask($0) })
}
