import CTracingLinux
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Per-CPU staging areas in front of the ring, so that threads ending spans at the same time do not
/// take one lock or write one cache line per span.
///
/// A span that ends goes into the staging area of the CPU its thread runs on, under that area's own
/// lock; every ``batchSize`` spans the area moves its spans into the ring, one ring lock for the batch.
/// Readers first move every staged span into the ring (``drain()``), so a span is visible to
/// every read that starts after it ended. Threads on different CPUs use different areas; two threads
/// on one CPU (or one that migrated between choosing an area and locking it) merely share a lock.
final class SpanShards: Sendable {
    /// Spans an area collects before it moves them into the ring.
    let batchSize: Int
    private let shards: [Shard]
    /// Keeps the ring, written once per batch, off the cache line of the fields every span reads.
    private let padding = InlineArray<8, UInt64>(repeating: 0)
    /// The ring the areas move their spans into.
    let ring: Mutex<SpanRing>

    /// One area per configured CPU, each moving batches of up to 32 spans, fewer for small rings so that
    /// what waits in the areas stays a small part of the ring's capacity.
    init(ringCapacity: Int) {
        let count = Self.areaCount
        ring = Mutex(SpanRing(capacity: ringCapacity))
        shards = (0..<count).map { _ in Shard() }
        batchSize = max(1, min(32, ringCapacity / (4 * count)))
    }

    /// One per configured CPU, at most 256.
    static let areaCount = min(max(Int(sysconf(Int32(_SC_NPROCESSORS_CONF))), 1), 256)

    /// The index of the current CPU's area among `count`.
    @inline(__always)
    static func currentArea(of count: Int) -> Int {
        let cpu = Int(c_tracing_current_cpu())
        return cpu >= 0 ? cpu % count : 0
    }

    /// Stages a span in the current CPU's area, moving the area into the ring when a batch is full.
    @inline(__always)
    func stage(_ span: RecordingSpan) {
        let shard = shards[Self.currentArea(of: shards.count)]
        let retired = shard.state.withLock { state -> RecordingSpan? in
            state.staged.append(span)
            if state.staged.count >= batchSize {
                Self.move(&state.staged, into: ring, overwritten: &state.retired)
            }
            return state.retired.popLast()
        }
        // One overwritten span is freed per span recorded, after the lock: freeing a whole batch at once
        // would overflow the allocator's per-thread cache and take the arena lock of the thread that
        // allocated them.
        _ = consume retired
    }

    /// Moves every staged span into the ring (for readers, which free what the ring overwrote at once).
    func drain() {
        var overwritten = ContiguousArray<RecordingSpan>()
        for shard in shards {
            shard.state.withLock { state in
                if !state.staged.isEmpty { Self.move(&state.staged, into: ring, overwritten: &overwritten) }
            }
        }
    }

    private static func move(
        _ staged: inout ContiguousArray<RecordingSpan>, into ring: borrowing Mutex<SpanRing>,
        overwritten: inout ContiguousArray<RecordingSpan>
    ) {
        ring.withLock { $0.append(staged, overwritten: &overwritten) }
        staged.removeAll(keepingCapacity: true)
    }

    private final class Shard: Sendable {
        struct State {
            /// Ended spans not yet in the ring.
            var staged = ContiguousArray<RecordingSpan>()
            /// Spans the ring overwrote when this area moved a batch, freed one per staged span (so at most
            /// a batch of them waits here).
            var retired = ContiguousArray<RecordingSpan>()
        }

        let state: Mutex<State>
        /// Keeps two areas' locks off one cache line: each object spans more than two lines.
        private let padding = InlineArray<16, UInt64>(repeating: 0)

        init() {
            var state = State()
            state.staged.reserveCapacity(32)
            state.retired.reserveCapacity(64)
            self.state = Mutex(state)
        }
    }
}
