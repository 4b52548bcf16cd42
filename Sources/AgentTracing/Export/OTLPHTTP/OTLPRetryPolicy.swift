/// When and how long an OTLP/HTTP exporter waits before sending a refused batch again.
///
/// Retried: 429, 502, 503 and 504 (the statuses the OTLP/HTTP specification calls retryable), and
/// transport failures (refused or dropped connections, timeouts). Never retried: any other 4xx (the
/// batch would be refused again), TLS failures, cancellation. The wait is the response's `Retry-After`
/// when it has one (capped at ``maximumRetryAfter``), else exponential backoff from
/// ``initialBackoff`` doubling up to ``maximumBackoff``, each wait passed through ``jitter`` so that
/// many exporters refused together do not come back together.
public struct OTLPRetryPolicy: Sendable {
    /// Attempts per request, the first included.
    public var maximumAttempts: Int
    /// The backoff before the first retry.
    public var initialBackoff: Duration
    /// The longest backoff.
    public var maximumBackoff: Duration
    /// The longest `Retry-After` honoured; a receiver asking for more is retried after this long.
    public var maximumRetryAfter: Duration
    /// Randomizes a backoff; by default a uniform draw between half of it and all of it. Tests inject
    /// a fixed function.
    public var jitter: @Sendable (Duration) -> Duration
    /// Waits; by default `Task.sleep`. Tests inject a recorder.
    public var sleep: @Sendable (Duration) async throws -> Void

    public init(
        maximumAttempts: Int = 5, initialBackoff: Duration = .seconds(1), maximumBackoff: Duration = .seconds(30),
        maximumRetryAfter: Duration = .seconds(60),
        jitter: @escaping @Sendable (Duration) -> Duration = OTLPRetryPolicy.halfJitter,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.maximumAttempts = max(1, maximumAttempts)
        self.initialBackoff = initialBackoff
        self.maximumBackoff = max(initialBackoff, maximumBackoff)
        self.maximumRetryAfter = maximumRetryAfter
        self.jitter = jitter
        self.sleep = sleep
    }

    /// Whether a response status is worth retrying.
    public static func isRetryable(status: Int) -> Bool {
        status == 429 || status == 502 || status == 503 || status == 504
    }

    /// The backoff before attempt `attempt + 1`, given that `attempt` attempts (from 1) have failed,
    /// before jitter.
    public func backoff(afterAttempt attempt: Int) -> Duration {
        var wait = initialBackoff
        for _ in 1..<max(1, attempt) {
            wait = wait * 2
            if wait >= maximumBackoff { return maximumBackoff }
        }
        return min(wait, maximumBackoff)
    }

    /// A uniform draw in [wait / 2, wait].
    public static let halfJitter: @Sendable (Duration) -> Duration = { wait in
        let nanoseconds = TraceClock.nanoseconds(wait)
        guard nanoseconds > 1 else { return wait }
        let half = nanoseconds / 2
        return .nanoseconds(Int64(half + UInt64.random(in: 0...(nanoseconds - half))))
    }
}
