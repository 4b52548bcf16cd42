import AgentTracing
import HostStats

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

extension SnapshotRecord {
    /// The record with registered secrets scrubbed from its free text: process command lines (a host's
    /// `ps` shows every process's arguments, hostscope's own `--otlp-endpoint` included when the host is
    /// this machine), warnings and error messages.
    public func scrubbingSecrets() -> SnapshotRecord {
        let scrubber = ProcessSecrets.scrubber
        guard !scrubber.isEmpty else { return self }
        switch self {
        case .snapshot(var snapshot):
            for index in snapshot.processes.indices {
                snapshot.processes[index].command = scrubber.scrub(snapshot.processes[index].command)
            }
            snapshot.warnings = snapshot.warnings.map { scrubber.scrub($0) }
            return .snapshot(snapshot)
        case .failure(var failure):
            failure.message = scrubber.scrub(failure.message)
            return .failure(failure)
        }
    }
}
