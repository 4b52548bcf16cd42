import DequeModule
import Synchronization
import ValueFormats

/// The bounded store of ended spans: one ring under one lock that keeps exactly the newest
/// ``capacity`` spans.
///
/// Every span stored gets the next sequence number (1, 2, …), so a reader such as the batching
/// persister asks for "everything after what I have" with a ``SpanCursor`` and learns how many spans
/// were overwritten before it looked. The ring holds the ended ``RecordingSpan`` objects themselves;
/// a ``FinishedSpan`` is built only for a reader.
///
/// One lock is enough for hostscope's load: a 300-host watch records about 10,800 spans a minute,
/// and the whole tracer costs about 0.2 % of that watch's CPU (Scripts/bench/tracing/README.md).
final class SpanStore: Sendable {
    /// The most spans held at once.
    let capacity: Int
    private let state: Lock<State>

    private struct State {
        /// Held spans, in the order they were stored (end order on one thread), oldest first.
        var spans = Deque<RecordingSpan>()
        /// Spans ever stored: the newest one's sequence number.
        var stored: UInt64 = 0
        /// Spans overwritten while the ring was full.
        var dropped: UInt64 = 0

        /// The sequence number of the oldest span held (`stored + 1` when empty).
        var oldest: UInt64 { stored - UInt64(spans.count) + 1 }
    }

    /// A store of at most `capacity` spans.
    init(capacity: Int) {
        precondition(capacity > 0, "a span store needs room for at least one span")
        self.capacity = capacity
        var state = State()
        state.spans.reserveCapacity(min(capacity, 1_024))
        self.state = Lock(state)
    }

    /// Stores an ended span, overwriting the oldest one when the ring is full.
    func record(_ span: RecordingSpan) {
        let overwritten = state.withLock { state -> RecordingSpan? in
            state.stored &+= 1
            state.spans.append(span)
            guard state.spans.count > capacity else { return nil }
            state.dropped &+= 1
            return state.spans.removeFirst()
        }
        // Freed here, after the lock: freeing a span with its attributes is the dearest step of a store.
        _ = consume overwritten
    }

    /// Every span held, oldest first.
    func all() -> [RecordingSpan] {
        state.withLock { Array($0.spans) }
    }

    /// Up to `limit` spans stored after `cursor`, oldest first; the cursor past them; and how many spans
    /// after `cursor` were overwritten (or removed) before this read.
    func spans(after cursor: SpanCursor, limit: Int) -> (spans: [RecordingSpan], cursor: SpanCursor, missed: UInt64) {
        state.withLock { state in
            let first = max(cursor.sequence &+ 1, state.oldest)
            let missed = first - (cursor.sequence &+ 1)
            guard first <= state.stored, limit > 0 else {
                return ([], SpanCursor(sequence: max(cursor.sequence, first - 1)), missed)
            }
            let start = Int(first - state.oldest)
            let count = min(limit, state.spans.count - start)
            let spans = Array(state.spans[start..<(start + count)])
            return (spans, SpanCursor(sequence: first - 1 + UInt64(count)), missed)
        }
    }

    /// Spans ever stored, spans dropped, spans held now.
    var counts: (stored: UInt64, dropped: UInt64, held: Int) {
        state.withLock { ($0.stored, $0.dropped, $0.spans.count) }
    }

    /// Empties the ring, returning what it held (oldest first); sequence numbers and counts go on.
    func removeAll() -> [RecordingSpan] {
        let removed = state.withLock { state -> Deque<RecordingSpan> in
            var removed = Deque<RecordingSpan>()
            swap(&removed, &state.spans)
            return removed
        }
        return Array(removed)
    }
}

/// A reader's position in a tracer's store: the sequence number of the last span it passed.
public struct SpanCursor: Sendable, Hashable {
    var sequence: UInt64

    /// Before the first span.
    public static let start = SpanCursor(sequence: 0)

    /// The spans this cursor has passed, read or dropped unread.
    public var passedSpanCount: UInt64 { sequence }
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
