import Synchronization

/// Makes the ids of new traces and spans; injected into the tracer so tests get stable ids.
public protocol TraceIDGenerator: Sendable {
    /// A fresh trace id for a root span.
    func nextTraceID() -> TraceID
    /// A fresh span id.
    func nextSpanID() -> SpanID
}

/// Unpredictable-looking, never-zero ids from a SplitMix64 sequence seeded from the system's
/// random source.
///
/// A span costs one atomic add here instead of a `getrandom` system call: SplitMix64 is a
/// bijection of its counter, so ids from one generator never repeat within 2^64 draws, and the
/// random seed makes collisions between processes as unlikely as with fully random ids. The ids
/// are not secrets and are not meant to resist prediction.
public final class RandomTraceIDGenerator: TraceIDGenerator {
    private let state: Atomic<UInt64>

    /// A generator seeded from `SystemRandomNumberGenerator`.
    public convenience init() {
        var system = SystemRandomNumberGenerator()
        self.init(seed: system.next())
    }

    /// A generator with a fixed seed: the same seed gives the same sequence of ids.
    public init(seed: UInt64) {
        state = Atomic(seed)
    }

    public func nextTraceID() -> TraceID {
        while true {
            if let id = TraceID(high: next(), low: next()) { return id }
        }
    }

    public func nextSpanID() -> SpanID {
        while true {
            if let id = SpanID(next()) { return id }
        }
    }

    @inline(__always)
    private func next() -> UInt64 {
        let gamma: UInt64 = 0x9E37_79B9_7F4A_7C15
        var mixed = state.wrappingAdd(gamma, ordering: .relaxed).newValue
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

/// Counts up from 1: trace ids `000…001`, `000…002`, … and span ids likewise, for goldens.
public final class SequentialTraceIDGenerator: TraceIDGenerator {
    private let traces = Atomic<UInt64>(0)
    private let spans = Atomic<UInt64>(0)

    public init() {}

    public func nextTraceID() -> TraceID {
        // The counter starts at 0 and is incremented first, so the low half is never zero.
        TraceID(high: 0, low: traces.wrappingAdd(1, ordering: .relaxed).newValue)!
    }

    public func nextSpanID() -> SpanID {
        SpanID(spans.wrappingAdd(1, ordering: .relaxed).newValue)!
    }
}
