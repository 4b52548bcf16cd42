import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The wall clock that stamps span starts, ends and events; injected so tests are deterministic.
public protocol TracingClock: Sendable {
    /// Nanoseconds since the Unix epoch, UTC.
    func nanosecondsSinceEpoch() -> UInt64
}

/// `CLOCK_REALTIME`, the clock OTLP timestamps are defined against.
public struct SystemTracingClock: TracingClock {
    public init() {}

    @inline(__always)
    public func nanosecondsSinceEpoch() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }
}

/// A clock that only moves when told to, or by a fixed step on every reading.
public final class ManualTracingClock: TracingClock {
    private let now: Atomic<UInt64>
    private let step: UInt64

    /// Starts at `start` nanoseconds since the epoch; each reading then advances by `step`.
    public init(start: UInt64, step: UInt64 = 0) {
        now = Atomic(start)
        self.step = step
    }

    public func nanosecondsSinceEpoch() -> UInt64 {
        now.wrappingAdd(step, ordering: .relaxed).oldValue
    }

    /// Moves the clock forward.
    public func advance(byNanoseconds nanoseconds: UInt64) {
        now.wrappingAdd(nanoseconds, ordering: .relaxed)
    }

    /// Sets the clock to an absolute time.
    public func set(nanosecondsSinceEpoch: UInt64) {
        now.store(nanosecondsSinceEpoch, ordering: .relaxed)
    }
}
