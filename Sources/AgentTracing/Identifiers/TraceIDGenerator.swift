import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

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
/// SplitMix64 is a bijection of its counter, so ids never repeat within 2^64 draws, and the random
/// seed makes collisions between processes as unlikely as with fully random ids; the ids are not
/// secrets and are not meant to resist prediction. Each thread draws from its own block of 2^32
/// counter values (taken from a shared atomic once per block), so threads recording spans at the
/// same time do not contend on one cache line and still never draw the same value.
public final class RandomTraceIDGenerator: TraceIDGenerator {
    private let seed: UInt64
    private let nextBlock = Atomic<UInt64>(0)
    /// Where each thread keeps `[next counter, end of its block]`.
    private let threadState: pthread_key_t

    private static let blockSize: UInt64 = 1 << 32

    /// A generator seeded from `SystemRandomNumberGenerator`.
    public convenience init() {
        var system = SystemRandomNumberGenerator()
        self.init(seed: system.next())
    }

    /// A generator with a fixed seed: on one thread, the same seed gives the same sequence of ids.
    public init(seed: UInt64) {
        self.seed = seed
        var key = pthread_key_t()
        #if canImport(Darwin)
            let status = pthread_key_create(&key) { state in state.deallocate() }
        #else
            let status = pthread_key_create(&key) { state in state?.deallocate() }
        #endif
        precondition(status == 0, "pthread_key_create failed (\(status)): too many id generators")
        threadState = key
    }

    deinit {
        // Threads' blocks are freed as those threads exit; a generator lives as long as its tracer.
        pthread_key_delete(threadState)
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
        let state: UnsafeMutablePointer<UInt64>
        if let existing = pthread_getspecific(threadState) {
            state = existing.assumingMemoryBound(to: UInt64.self)
        } else {
            state = UnsafeMutablePointer<UInt64>.allocate(capacity: 2)
            state.initialize(repeating: 0, count: 2)
            pthread_setspecific(threadState, state)
        }
        if state[0] == state[1] {
            let block = nextBlock.wrappingAdd(1, ordering: .relaxed).oldValue
            state[0] = block &* Self.blockSize
            state[1] = state[0] &+ Self.blockSize
        }
        let counter = state[0]
        state[0] = counter &+ 1
        var mixed = seed &+ counter &* 0x9E37_79B9_7F4A_7C15
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
