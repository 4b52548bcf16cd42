public import Foundation
import ValueFormats

/// The time a watch schedules by: when ticks are due, what records are stamped with, when backoffs and
/// retention pruning end. Injected so that tests drive a watch tick by tick instead of racing the clock.
public protocol WatchClock: Sendable {
    /// The current time.
    func now() -> Date
    /// Returns at `deadline` (at once when it has passed); throws `CancellationError` when the task is
    /// cancelled first.
    func sleep(until deadline: Date) async throws
}

/// The machine's clock: wall-clock time read once at the start, then advanced by the monotonic clock, so
/// that a clock step (NTP, a suspended laptop's resume) neither bunches nor skips ticks and stamps and
/// slots stay consistent with each other.
public struct SystemWatchClock: WatchClock {
    private let wallStart: Date
    private let monotonicStart: ContinuousClock.Instant

    /// A clock that starts now.
    public init() {
        wallStart = Date()
        monotonicStart = .now
    }

    public func now() -> Date {
        wallStart.addingTimeInterval(monotonicStart.duration(to: .now).inSeconds)
    }

    public func sleep(until deadline: Date) async throws {
        let offset = Duration.seconds(inSeconds: deadline.timeIntervalSince(wallStart))
        try await Task.sleep(until: monotonicStart + offset, clock: .continuous)
    }
}
