import CTracingLinux
import DequeModule
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The bounded store of ended spans: one ring per CPU (at most one per ``minimumShare`` spans of
/// capacity), so that threads on different CPUs neither take one lock nor free each other's spans.
///
/// - Bound: the rings together hold at most ``capacity`` spans. A ring takes slots from a common pool
///   as it fills, ``claimSize`` at a time; once the pool is empty, a ring that needs room overwrites its
///   own oldest span, which the thread that ended the new span frees after the lock.
/// - Balance: before every ``claimSize``-th overwrite a ring compares itself with the others, from hints
///   they publish at their own comparisons, and takes up to a claim of slots (dropping the spans in
///   them, oldest first) from a ring that
///   - holds only spans older than its own oldest (its CPU went quiet), or is empty with slots: while it
///     finds one it compares again each time it is full, so a busy CPU takes over a quiet one's slots
///     and the store ends up holding the newest spans overall; or
///   - holds more than an even ``share`` of the capacity while this ring holds less, and has spans
///     older than this ring's oldest: it takes no more than brings either ring to its share.
///   Rings of CPUs that record at the same time therefore keep at least their share each, trade no
///   slots once they have it, and never free each other's spans. Slots taken but not yet filled hold
///   nothing, which is why the store may hold up to a claim per ring fewer spans than its capacity.
/// - Order and cursors: each ring numbers its spans 1, 2, … in the order they reached it (end order on
///   one thread); a ``SpanCursor`` holds one such number per ring, so a reader gets every span after its
///   cursor once, merged across rings by end time, and learns how many were dropped before it looked.
final class SpanStore: Sendable {
    /// An ended span with its end, which the balancing and the merge read without the span's lock.
    struct Entry {
        let span: RecordingSpan
        let end: UInt64
    }

    /// The most spans held at once.
    let capacity: Int
    /// Slots a ring takes from the pool at a time, and spans it overwrites between two looks at the others.
    let claimSize: Int
    private let rings: [Ring]
    /// Slots no ring has taken yet.
    private let pool: Atomic<Int>

    /// Spans of capacity per ring at least: smaller stores keep one ring, and exact newest-first order.
    static let minimumShare = 1_024

    /// A store of `capacity` spans with one ring per configured CPU, fewer when the capacity is small.
    init(capacity: Int, rings ringCount: Int = SpanStore.areaCount) {
        precondition(capacity > 0, "a span store needs room for at least one span")
        let count = max(1, min(ringCount, capacity / Self.minimumShare))
        self.capacity = capacity
        claimSize = max(1, min(32, capacity / count / 32))
        rings = (0..<count).map { _ in Ring() }
        pool = Atomic(capacity)
    }

    /// Staging areas: one per configured CPU, at most 256.
    static let areaCount = min(max(Int(sysconf(Int32(_SC_NPROCESSORS_CONF))), 1), 256)

    /// The index of the current CPU's area among `count`.
    @inline(__always)
    static func currentArea(of count: Int) -> Int {
        let cpu = Int(c_tracing_current_cpu())
        return cpu >= 0 ? cpu % count : 0
    }

    /// The number of rings.
    var ringCount: Int { rings.count }

    // MARK: Recording

    /// Stores an ended span in the current CPU's ring.
    @inline(__always)
    func record(_ span: RecordingSpan, end: UInt64) {
        let index = rings.count == 1 ? 0 : Self.currentArea(of: rings.count)
        let ring = rings[index]
        let entry = Entry(span: span, end: end)
        switch ring.state.withLock({ store(entry, in: &$0, ring: ring) }) {
        case .stored:
            return
        case .overwrote(let old):
            _ = consume old  // Freed after the lock.
        case .compares(let oldest, let claimed):
            storeAfterTakingSlots(entry, in: index, ownOldest: oldest, ownClaimed: claimed)
        }
    }

    private enum Outcome {
        case stored
        /// The span the new one replaced, to free after the lock.
        case overwrote(RecordingSpan)
        /// Time to compare this ring (its oldest span's end and its slots) with the others before making
        /// room: the span is not stored yet.
        case compares(oldest: UInt64, claimed: Int)
    }

    @inline(__always)
    private func store(_ entry: Entry, in state: inout Ring.State, ring: Ring) -> Outcome {
        if state.entries.count < state.claimed {
            state.appended &+= 1
            state.entries.append(entry)
            return .stored
        }
        if !state.poolIsEmpty {
            let taken = claimFromPool()
            if taken > 0 {
                state.claimed += taken
                state.appended &+= 1
                state.entries.append(entry)
                return .stored
            }
            state.poolIsEmpty = true
        }
        guard let oldest = state.entries.first else { return .compares(oldest: .max, claimed: 0) }
        if rings.count > 1 && state.sinceComparison >= claimSize {
            ring.publishHints(of: state)
            return .compares(oldest: oldest.end, claimed: state.claimed)
        }
        state.sinceComparison += 1
        state.appended &+= 1
        state.entries.removeFirst()
        state.entries.append(entry)
        state.dropped &+= 1
        return .overwrote(oldest.span)
    }

    /// Up to ``claimSize`` slots from the pool; 0 once it is empty.
    private func claimFromPool() -> Int {
        var available = pool.load(ordering: .relaxed)
        while available > 0 {
            let taken = min(claimSize, available)
            let (exchanged, original) = pool.compareExchange(
                expected: available, desired: available - taken, ordering: .relaxed)
            if exchanged { return taken }
            available = original
        }
        return 0
    }

    /// Takes slots from another ring if the balance rules allow, then stores the span: in a slot taken,
    /// or over this ring's own oldest span. After taking slots the ring compares again as soon as it is
    /// full, so it goes on taking while the rules allow.
    private func storeAfterTakingSlots(_ entry: Entry, in index: Int, ownOldest: UInt64, ownClaimed: Int) {
        let (slots, dropped) = takeSlots(for: index, ownOldest: ownOldest, ownClaimed: ownClaimed)
        let ring = rings[index]
        let overwritten = ring.state.withLock { state -> RecordingSpan? in
            state.claimed += slots
            state.sinceComparison = slots > 0 ? claimSize : 0
            state.appended &+= 1
            if state.entries.count < state.claimed {
                state.entries.append(entry)
                return nil
            }
            state.dropped &+= 1
            // No slot anywhere (another thread holds the last free one for a moment): the span is dropped.
            guard !state.entries.isEmpty else { return entry.span }
            let old = state.entries.removeFirst()
            state.entries.append(entry)
            return old.span
        }
        _ = consume overwritten  // Freed after every lock, with the spans dropped from the other ring.
        _ = consume dropped
    }

    /// Takes up to a claim of slots for ring `index` (whose oldest span ended at `ownOldest` and which has
    /// `ownClaimed` slots) from one other ring, by the balance rules. Returns the slots and the spans
    /// dropped from them, to free after all locks.
    private func takeSlots(
        for index: Int, ownOldest: UInt64, ownClaimed: Int
    ) -> (slots: Int, dropped: ContiguousArray<RecordingSpan>) {
        let share = capacity / rings.count
        var quiet: [(newest: UInt64, ring: Int)] = []
        var fuller: [(oldest: UInt64, ring: Int)] = []
        for other in rings.indices where other != index {
            let hints = rings[other]
            let newest = hints.newestHint.load(ordering: .relaxed)
            if newest < ownOldest {
                quiet.append((newest, other))
            } else if ownClaimed < share, hints.claimedHint.load(ordering: .relaxed) > share,
                hints.oldestHint.load(ordering: .relaxed) < ownOldest
            {
                fuller.append((hints.oldestHint.load(ordering: .relaxed), other))
            }
        }
        guard !quiet.isEmpty || !fuller.isEmpty else { return (0, []) }
        quiet.sort { $0 < $1 }
        fuller.sort { $0 < $1 }
        var dropped = ContiguousArray<RecordingSpan>()
        for other in quiet.map(\.ring) + fuller.map(\.ring) {
            let ring = rings[other]
            let slots = ring.state.withLock { state -> Int in
                defer { ring.publishHints(of: state) }
                var limit = 0
                if (state.entries.last?.end ?? 0) < ownOldest {
                    limit = min(claimSize, state.claimed)
                } else if ownClaimed < share && state.claimed > share {
                    limit = min(claimSize, state.claimed - share, share - ownClaimed)
                }
                var slots = min(limit, state.claimed - state.entries.count)
                let unused = slots
                while slots < limit, let first = state.entries.first, first.end < ownOldest {
                    dropped.append(state.entries.removeFirst().span)
                    slots += 1
                }
                state.claimed -= slots
                state.dropped &+= UInt64(slots - unused)
                return slots
            }
            if slots > 0 { return (slots, dropped) }
        }
        return (0, dropped)
    }

    // MARK: Reading

    /// Every span held, ring by ring (each in the order it reached its ring).
    func all() -> [RecordingSpan] {
        var result: [RecordingSpan] = []
        for ring in rings {
            ring.state.withLock { state in
                result.reserveCapacity(result.count + state.entries.count)
                for entry in state.entries { result.append(entry.span) }
            }
        }
        return result
    }

    /// Up to `limit` spans after `cursor`, taken across rings by end time (each ring's spans in the order
    /// they reached it); the cursor past them; and how many spans after `cursor` were dropped unread.
    func spans(after cursor: SpanCursor, limit: Int) -> (spans: [RecordingSpan], cursor: SpanCursor, missed: UInt64) {
        var missed: UInt64 = 0
        var positions = [UInt64](repeating: 0, count: rings.count)
        var pending: [ArraySlice<Entry>] = []
        for (index, ring) in rings.enumerated() {
            let position = cursor.position(of: index)
            let unread = ring.state.withLock { state -> ArraySlice<Entry> in
                let oldest = state.appended - UInt64(state.entries.count) + 1
                let first = max(position &+ 1, oldest)
                missed += first - (position &+ 1)
                positions[index] = max(position, first - 1)
                guard first <= state.appended, limit > 0 else { return [] }
                let start = Int(first - oldest)
                let end = start + min(limit, state.entries.count - start)
                return Array(state.entries[start..<end])[...]
            }
            pending.append(unread)
        }
        var spans: [RecordingSpan] = []
        if pending.count == 1 {
            spans = pending[0].map(\.span)
            positions[0] += UInt64(spans.count)
        } else {
            spans.reserveCapacity(min(limit, pending.reduce(0) { $0 + $1.count }))
            while spans.count < limit {
                var next: Int?
                for index in pending.indices {
                    guard let candidate = pending[index].first else { continue }
                    if next == nil || candidate.end < pending[next!].first!.end { next = index }
                }
                guard let index = next else { break }
                spans.append(pending[index].removeFirst().span)
                positions[index] += 1
            }
        }
        return (spans, SpanCursor(positions: positions), missed)
    }

    /// Spans ever stored, spans dropped, spans held now.
    var counts: (appended: UInt64, dropped: UInt64, held: Int) {
        var counts: (appended: UInt64, dropped: UInt64, held: Int) = (0, 0, 0)
        for ring in rings {
            ring.state.withLock { state in
                counts.appended &+= state.appended
                counts.dropped &+= state.dropped
                counts.held += state.entries.count
            }
        }
        return counts
    }

    /// Empties every ring, returning what they held; numbering and counts go on, slots stay with their rings.
    func removeAll() -> [RecordingSpan] {
        var removed: [RecordingSpan] = []
        for ring in rings {
            let entries = ring.state.withLock { state -> Deque<Entry> in
                defer { ring.publishHints(of: state) }
                var entries = Deque<Entry>()
                swap(&entries, &state.entries)
                return entries
            }
            removed.append(contentsOf: entries.lazy.map(\.span))
        }
        return removed
    }

    private final class Ring: Sendable {
        struct State {
            /// Held spans, oldest first.
            var entries = Deque<Entry>()
            /// Slots this ring may fill: at least `entries.count`.
            var claimed = 0
            /// Spans ever stored here; the newest one's number.
            var appended: UInt64 = 0
            /// Spans dropped from this ring, by this ring or by another that took their slots.
            var dropped: UInt64 = 0
            /// Set once the pool had nothing left to give (it never refills).
            var poolIsEmpty = false
            /// Spans overwritten since this ring last compared itself with the others.
            var sinceComparison = 0
        }

        let state: Mutex<State>
        /// What the others compare with, as of this ring's last comparison or loss of slots: the ends of
        /// its oldest and newest spans (0 while unknown, so that a ring short of room looks at it) and its
        /// slots.
        let oldestHint = Atomic<UInt64>(0)
        let newestHint = Atomic<UInt64>(0)
        let claimedHint = Atomic<Int>(0)
        /// Keeps two rings' locks and hints off one cache line: each object spans more than two lines.
        private let padding = InlineArray<16, UInt64>(repeating: 0)

        init() {
            var state = State()
            state.entries.reserveCapacity(64)
            self.state = Mutex(state)
        }

        func publishHints(of state: State) {
            oldestHint.store(state.entries.first?.end ?? 0, ordering: .relaxed)
            newestHint.store(state.entries.last?.end ?? 0, ordering: .relaxed)
            claimedHint.store(state.claimed, ordering: .relaxed)
        }
    }
}

/// A reader's position in a tracer's store: how far it has read in each of the store's rings.
public struct SpanCursor: Sendable, Hashable {
    var positions: [UInt64]

    /// Before the first span.
    public static let start = SpanCursor(positions: [])

    /// The spans this cursor has passed, read or dropped unread.
    public var passedSpanCount: UInt64 { positions.reduce(0, &+) }

    func position(of ring: Int) -> UInt64 { ring < positions.count ? positions[ring] : 0 }
}

/// Spans read from the store after a cursor, for consumers that keep their own position.
public struct FinishedSpanBatch: Sendable {
    /// The spans, oldest first.
    public var spans: [FinishedSpan]
    /// Where the next read starts (pass it back to read on).
    public var cursor: SpanCursor
    /// Spans after the given cursor that were dropped before this read.
    public var missed: UInt64
}
