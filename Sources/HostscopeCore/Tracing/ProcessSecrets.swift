public import AgentTracing
import Foundation
public import HostStats

/// The process's registry of secrets that must never reach a span, an export or the database:
/// passwords and passphrases as they are read, OTLP endpoint credentials and header values as they are
/// parsed. The tracer the CLI bootstraps scrubs every recorded string with it.
public enum ProcessSecrets {
    /// The scrubber shared by every tracer of this process.
    public static let scrubber = SecretScrubber()

    /// Adds a secret (empty strings are ignored).
    public static func register(_ secret: String) {
        scrubber.register(secret)
    }

    /// Scrubs registered secrets from a message before it is printed.
    public static func scrub(_ text: String) -> String {
        scrubber.scrub(text)
    }
}

/// hostscope's own process as a host's process list shows it, so that its arguments (headers, endpoint
/// URLs, whatever a user typed) are not reported back: by `top_processes` to a model, or by `snapshot`.
///
/// A process is taken for this one when its command line is this process's command line, or the start of it
/// that a `ps` cut short: that finds it on `local` and on this machine reached over SSH alike, where process
/// ids alone would not say which machine they belong to.
public enum OwnProcess {
    /// This process's arguments as a probe shows `/proc/PID/cmdline`: joined by spaces, newlines as spaces,
    /// no trailing blanks.
    public static let commandLine: String = {
        var bytes = Array(arguments.joined(separator: " ").utf8)
        for index in bytes.indices where bytes[index] == UInt8(ascii: "\n") { bytes[index] = UInt8(ascii: " ") }
        while bytes.last == UInt8(ascii: " ") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }()

    /// What a process list shows instead of this process's command line: its executable, no arguments.
    public static let concealed: String = (arguments.first ?? "hostscope") + " [arguments hidden]"

    /// Whether `command` is this process's command line, whole or cut short after the executable.
    public static func isOwn(_ command: String) -> Bool {
        guard let executable = arguments.first, !command.isEmpty else { return false }
        if command == commandLine { return true }
        return command.utf8.count > executable.utf8.count && command.hasPrefix(executable + " ")
            && commandLine.hasPrefix(command)
    }

    /// The command to show for a process: ``concealed`` for this one; for a wrapper that ends with this
    /// process's command line (`timeout 60 hostscope …`, `sudo hostscope …`) the wrapper's own words and
    /// ``concealed``; `command` for any other.
    public static func shown(_ command: String) -> String {
        if isOwn(command) { return concealed }
        if command.hasSuffix(" " + commandLine), !commandLine.isEmpty {
            return String(decoding: command.utf8.dropLast(commandLine.utf8.count), as: UTF8.self) + concealed
        }
        return command
    }

    /// /proc/self/cmdline is what another reader of /proc sees; CommandLine.arguments is the fallback.
    private static let arguments: [String] = {
        if let data = FileManager.default.contents(atPath: "/proc/self/cmdline"), !data.isEmpty {
            var arguments = data.split(separator: 0, omittingEmptySubsequences: false).map {
                String(decoding: $0, as: UTF8.self)
            }
            if arguments.last == "" { arguments.removeLast() }
            return arguments
        }
        return CommandLine.arguments
    }()
}

extension SnapshotRecord {
    /// The record with registered secrets scrubbed from its free text: process command lines (a host's
    /// `ps` shows every process's arguments, hostscope's own `--otlp-endpoint` included when the host is
    /// this machine), warnings and error messages. hostscope's own process shows no arguments at all
    /// (``OwnProcess``).
    public func scrubbingSecrets() -> SnapshotRecord {
        let scrubber = ProcessSecrets.scrubber
        switch self {
        case .snapshot(var snapshot):
            for index in snapshot.processes.indices {
                snapshot.processes[index].command = scrubber.scrub(OwnProcess.shown(snapshot.processes[index].command))
            }
            snapshot.warnings = snapshot.warnings.map { scrubber.scrub($0) }
            return .snapshot(snapshot)
        case .failure(var failure):
            failure.message = scrubber.scrub(failure.message)
            return .failure(failure)
        }
    }
}
