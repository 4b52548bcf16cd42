public import HostscopeCore
import Synchronization
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// Writing to stdout and stderr: the only code of the command line that writes to either.
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
/// - ``error(_:)``, ``warning(_:)``, ``note(_:)``, ``notice(_:)`` (and the command line's `fail`): one sentence
///   on stderr, every control character escaped, newlines included, whether stderr is a terminal
///   or a log file.
/// - ``writeError(_:)``: styled text on stderr (progress lines, chat rows).
public enum Output {
    /// Whether stdout is a terminal (tables and colours) or a pipe (data only).
    public static let stdoutIsTerminal = isatty(1) == 1
    /// Whether stderr is a terminal (where the person reading stdout also reads it).
    public static let stderrIsTerminal = isatty(2) == 1

    /// The terminal's width, or 120 when unknown.
    public static var terminalWidth: Int {
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 20 { return Int(size.ws_col) }
        return 120
    }

    /// Writes text for people to stdout, control characters other than newline and tab escaped.
    public static func write(_ text: String) {
        writeAll(1, Array(TerminalText.sanitize(text, keepingLayout: true).utf8))
    }

    /// Writes styled text to stdout as it was built.
    public static func write(_ output: TerminalOutput) {
        writeAll(1, Array(output.text.utf8))
    }

    /// Writes data to stdout: exactly these bytes to a file or pipe, escaped on a terminal.
    public static func writeData(_ bytes: [UInt8]) {
        if stdoutIsTerminal, !TerminalText.isSafe(bytes: bytes) {
            writeAll(1, Array(TerminalText.sanitize(bytes: bytes).utf8))
        } else {
            writeAll(1, bytes)
        }
    }

    /// Writes data text (JSON, CSV) to stdout, as ``writeData(_:)-([UInt8])``.
    public static func writeData(_ text: String) {
        writeData(Array(text.utf8))
    }

    /// One line on stderr.
    public static func error(_ message: String) {
        writeAll(2, Array(("hostscope: " + TerminalText.sanitize(message) + "\n").utf8))
    }

    public static func warning(_ message: String) {
        writeAll(2, Array(("hostscope: warning: " + TerminalText.sanitize(message) + "\n").utf8))
    }

    /// Styled text on stderr as it was built.
    public static func writeError(_ output: TerminalOutput) {
        writeAll(2, Array(output.text.utf8))
    }

    /// `hostscope: note: message` on stderr: something hostscope changed that the user should know of.
    public static func note(_ message: String) {
        writeAll(2, Array(("hostscope: note: " + TerminalText.sanitize(message) + "\n").utf8))
    }

    /// Warnings already printed this run.
    private static let printedWarnings = Lock(Set<String>())

    /// A warning printed once per run however often it is raised (each command that resolves hosts reads
    /// ssh_config again), with control characters escaped since it quotes files.
    public static func warningOnce(_ message: String) {
        let text = TerminalText.sanitize(message)
        guard printedWarnings.withLock({ $0.insert(text).inserted }) else { return }
        warning(text)
    }

    /// A line on stderr worded by someone else (OpenSSH's notices), without hostscope's prefix and with
    /// control characters escaped.
    public static func notice(_ line: String) {
        writeAll(2, Array((TerminalText.sanitize(line) + "\n").utf8))
    }

    /// The core's warnings, errors and notes, as sentences on stderr.
    public static let diagnostics = Diagnostics(
        warning: { warning($0) }, error: { error($0) }, note: { note($0) })

    /// ``diagnostics``, and with `verbose` (`-v`) each step of reaching a host too (``debug(_:)``).
    public static func diagnostics(verbose: Bool) -> Diagnostics {
        var diagnostics = diagnostics
        if verbose { diagnostics.debug = { debug($0) } }
        return diagnostics
    }

    /// `hostscope: debug: message` on stderr: one step of reaching a host (`-v`), control characters escaped and
    /// every secret this process knows replaced, whoever worded it.
    public static func debug(_ message: String) {
        let text = TerminalText.sanitize(ProcessSecrets.scrub(message))
        writeAll(2, Array(("hostscope: debug: " + text + "\n").utf8))
    }

    /// Writes a data stream's bytes (`watch` records on standard output): exactly these bytes to a file or
    /// pipe, escaped on a terminal. Unlike ``writeData(_:)-([UInt8])``, a closed pipe is an error the
    /// caller reports (the records still go to the database), not the end of the program.
    public static func writeStream(_ bytes: [UInt8]) throws(RecordWriteError) {
        let bytes = stdoutIsTerminal && !TerminalText.isSafe(bytes: bytes) ? TerminalText.escaped(bytes: bytes) : bytes
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(1, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw RecordFileWriter.failure(errno, path: nil)
            }
            offset += written
        }
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
