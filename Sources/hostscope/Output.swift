import Agent
import ArgumentParser
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Writing to stdout and stderr, and failing with one clear sentence.
enum Output {
    /// Whether stdout is a terminal (tables and colours) or a pipe (data only).
    static var stdoutIsTerminal: Bool { isatty(1) == 1 }

    /// The terminal's width, or 120 when unknown.
    static var terminalWidth: Int {
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 20 { return Int(size.ws_col) }
        return 120
    }

    /// Writes all of `text` to stdout; a closed pipe (`| head`) ends the program quietly.
    static func write(_ text: String) {
        writeAll(1, Array(text.utf8))
    }

    static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EPIPE { exit(0) }
                return
            }
            offset += written
        }
    }

    /// One line on stderr.
    static func error(_ message: String) {
        writeAll(2, Array(("hostscope: " + message + "\n").utf8))
    }

    static func warning(_ message: String) {
        writeAll(2, Array(("hostscope: warning: " + message + "\n").utf8))
    }

    /// `hostscope: note: message` on stderr: something hostscope changed that the user should know of.
    static func note(_ message: String) {
        writeAll(2, Array(("hostscope: note: " + message + "\n").utf8))
    }

    /// Warnings already printed this run.
    private static let printedWarnings = Mutex(Set<String>())

    /// A warning printed once per run however often it is raised (each command that resolves hosts reads
    /// ssh_config again), with control characters escaped since it quotes files.
    static func warningOnce(_ message: String) {
        let text = TerminalText.sanitize(message)
        guard printedWarnings.withLock({ $0.insert(text).inserted }) else { return }
        warning(text)
    }

    /// A line on stderr worded by someone else (OpenSSH's notices), without hostscope's prefix and with
    /// control characters escaped.
    static func notice(_ line: String) {
        writeAll(2, Array((TerminalText.sanitize(line) + "\n").utf8))
    }

    /// Prints `message` on stderr and exits with `status`.
    static func fail(_ message: String, _ status: ExitStatus) -> ExitCode {
        error(message)
        return ExitCode(status.rawValue)
    }
}
