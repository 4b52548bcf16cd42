import AgentTracing

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
