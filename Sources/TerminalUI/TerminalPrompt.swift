import Foundation
public import HostscopeCore
import Synchronization
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// Reads a secret from `/dev/tty` with echo off, one prompt at a time across all sessions.
///
/// Only an attended run asks: one with a terminal on standard input and a controlling terminal. Ctrl-C at the
/// prompt cancels it at once (the run then ends as a Ctrl-C anywhere else ends it) and Ctrl-D gives no answer;
/// the terminal's mode is restored on every way out, exit included.
public enum TerminalPrompt {
    /// Whether a prompt was answered with Ctrl-C: the person wants the run to stop, so nothing more is asked.
    private static let lock = Lock(false)

    /// Whether a person is there to ask: standard input is a terminal and there is a controlling one, and no
    /// prompt was interrupted.
    public static var isAvailable: Bool {
        guard isatty(0) == 1, !lock.withLock({ $0 }) else { return false }
        let descriptor = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        close(descriptor)
        return true
    }

    /// Asks `prompt` on the terminal with echo off; `nil` without a terminal, on Ctrl-C or on Ctrl-D.
    public static func ask(_ prompt: String) -> String? {
        lock.withLock { interrupted in
            guard !interrupted else { return nil }
            let descriptor = open("/dev/tty", O_RDWR | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            guard let original = TerminalModes.save(descriptor) else { return nil }
            // Without ISIG, Ctrl-C arrives here as a byte rather than as a signal the blocked read would
            // outlast; without ICANON every byte arrives as typed, so erasing is done here.
            var silent = original
            silent.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG)
            withUnsafeMutablePointer(to: &silent.c_cc) {
                $0.withMemoryRebound(to: cc_t.self, capacity: Int(NCCS)) { characters in
                    characters[Int(VMIN)] = 1
                    characters[Int(VTIME)] = 0
                }
            }
            tcsetattr(descriptor, TCSAFLUSH, &silent)
            // The prompt names a host and a key path; neither may drive the terminal.
            _ = TerminalText.sanitize(prompt).withCString { write(descriptor, $0, strlen($0)) }
            let answer = readLine(descriptor, original: original)
            TerminalModes.restore(descriptor)
            _ = write(descriptor, "\n", 1)
            switch answer {
            case .line(let text):
                return text
            case .interrupted:
                interrupted = true
                // The run is interrupted as if the signal had come, which the command's handler turns into
                // cancellation.
                kill(getpid(), SIGINT)
                return nil
            case .ended:
                return nil
            }
        }
    }

    /// How a prompt's line ended.
    enum Answer: Equatable {
        case line(String)
        case interrupted
        case ended
    }

    /// Reads up to Enter, honouring the terminal's erase and kill characters; `nil` on its interrupt
    /// character (Ctrl-C) or end of file (Ctrl-D on an empty line).
    private static func readLine(_ descriptor: Int32, original: termios) -> Answer {
        var mode = original
        let characters = withUnsafeBytes(of: &mode.c_cc) { Array($0) }
        let interrupt = characters[Int(VINTR)]
        let erase = characters[Int(VERASE)]
        let kill = characters[Int(VKILL)]
        let endOfFile = characters[Int(VEOF)]
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(descriptor, &byte, 1)
            if count < 0, errno == EINTR { continue }
            guard count == 1 else {
                return bytes.isEmpty ? .ended : .line(String(decoding: bytes, as: UTF8.self))
            }
            switch byte {
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                return .line(String(decoding: bytes, as: UTF8.self))
            case interrupt, 0x03:
                return .interrupted
            case endOfFile where bytes.isEmpty:
                return .ended
            case erase, 0x7F, 0x08:
                // A whole character: its UTF-8 continuation bytes, then its first byte.
                while let last = bytes.popLast(), last & 0xC0 == 0x80 {}
            case kill, 0x15:
                bytes.removeAll()
            default:
                bytes.append(byte)
            }
        }
    }

    /// The prompter the core asks for passwords and passphrases.
    public static let prompter = SecretPrompter(isAvailable: { isAvailable }, ask: { ask($0) })
}
