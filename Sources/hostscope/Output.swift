import Agent
import ArgumentParser
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Writing to stdout and stderr, and failing with one clear sentence: the only code of the
/// command line that writes to either.
///
/// Text from hosts (names, prompts, error messages, file contents), from models and from files
/// reaches these sinks inside messages, tables and data, and a control character in it could
/// drive the terminal (OSC 52 writes the clipboard, OSC 0 the title, `ESC[2J` clears the
/// screen). So every sink escapes with ``TerminalText``, whatever the caller did:
///
/// - ``write(_:)-(String)``: text for people (tables, listings, notes). Every control character
///   other than newline and tab is shown escaped (`\e`, `\x07`), on a terminal or not.
/// - ``write(_:)-(TerminalOutput)``: styled text (chat, live view). ``TerminalOutput`` escapes
///   text as it is built; the only control sequences in it are hostscope's own.
/// - ``writeData(_:)-([UInt8])``: data formats (JSON, NDJSON, CSV, OTLP lines, `files cat --raw`
///   and `files grep` into a pipe). To a file or a pipe the bytes go out exactly as given, so
///   data round-trips; to a terminal they are escaped like file contents
///   (``TerminalText/sanitize(bytes:)``), so a CSV field or a file cannot drive it. JSON is
///   unchanged either way: its writer escapes control characters (C1, DEL and bidirectional
///   overrides included) by construction.
/// - ``error(_:)``, ``warning(_:)``, ``note(_:)``, ``notice(_:)``, ``fail(_:_:)``: one sentence
///   on stderr, every control character escaped, newlines included, whether stderr is a terminal
///   or a log file.
/// - ``writeError(_:)``: styled text on stderr (progress lines, chat rows).
enum Output {
    /// Whether stdout is a terminal (tables and colours) or a pipe (data only).
    static let stdoutIsTerminal = isatty(1) == 1

    /// The terminal's width, or 120 when unknown.
    static var terminalWidth: Int {
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 20 { return Int(size.ws_col) }
        return 120
    }

    /// Writes text for people to stdout, control characters other than newline and tab escaped.
    static func write(_ text: String) {
        writeAll(1, Array(TerminalText.sanitize(text, keepingLayout: true).utf8))
    }

    /// Writes styled text to stdout as it was built.
    static func write(_ output: TerminalOutput) {
        writeAll(1, Array(output.text.utf8))
    }

    /// Writes data to stdout: exactly these bytes to a file or pipe, escaped on a terminal.
    static func writeData(_ bytes: [UInt8]) {
        if stdoutIsTerminal, !TerminalText.isSafe(bytes: bytes) {
            writeAll(1, Array(TerminalText.sanitize(bytes: bytes).utf8))
        } else {
            writeAll(1, bytes)
        }
    }

    /// Writes data text (JSON, CSV) to stdout, as ``writeData(_:)-([UInt8])``.
    static func writeData(_ text: String) {
        writeData(Array(text.utf8))
    }

    /// One line on stderr.
    static func error(_ message: String) {
        writeAll(2, Array(("hostscope: " + TerminalText.sanitize(message) + "\n").utf8))
    }

    static func warning(_ message: String) {
        writeAll(2, Array(("hostscope: warning: " + TerminalText.sanitize(message) + "\n").utf8))
    }

    /// Styled text on stderr as it was built.
    static func writeError(_ output: TerminalOutput) {
        writeAll(2, Array(output.text.utf8))
    }

    /// `hostscope: note: message` on stderr: something hostscope changed that the user should know of.
    static func note(_ message: String) {
        writeAll(2, Array(("hostscope: note: " + TerminalText.sanitize(message) + "\n").utf8))
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

    /// Ends the program for an error no command caught (usage errors, `--help`, `--version`):
    /// the argument parser's text through these sinks, then its exit status.
    static func exit<Command: ParsableCommand>(_ command: Command.Type, withError error: any Error) -> Never {
        let text = command.fullMessage(for: error)
        let code = command.exitCode(for: error)
        if !text.isEmpty {
            if code == .success {
                write(text + "\n")
            } else {
                writeError(TerminalOutput(text + "\n"))
            }
        }
        Glibc.exit(code.rawValue)
    }

    /// Writes all of `bytes`; a closed pipe (`| head`) ends the program quietly.
    private static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EPIPE { Glibc.exit(0) }
                return
            }
            offset += written
        }
    }
}
