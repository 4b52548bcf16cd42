/// The bounded store of ended spans: a ring that overwrites its oldest span when full.
///
/// Overwriting the oldest keeps what a user asks about ("why did the last tick fail") and never
/// blocks or fails the code that ends a span. Every span gets a sequence number (1, 2, …) so that
/// readers such as a batching persister can ask for "everything after what I have" and learn how
/// many spans they missed. The ring holds the ended ``RecordingSpan`` objects themselves: a
/// ``FinishedSpan`` is built only for a reader.
struct SpanRing {
    let capacity: Int
    private var storage: ContiguousArray<RecordingSpan> = []
    /// Where the next span goes once the storage is full; also the index of the oldest span then.
    private var head = 0
    /// Spans ever appended; the newest span's sequence number.
    private(set) var appended: UInt64 = 0
    /// Spans overwritten before anyone removed them.
    private(set) var dropped: UInt64 = 0

    init(capacity: Int) {
        precondition(capacity > 0, "a span ring needs room for at least one span")
        self.capacity = capacity
        storage.reserveCapacity(min(capacity, 1024))
    }

    var count: Int { storage.count }

    /// Appends the spans in order. When the ring is full each span takes the oldest one's slot, and
    /// the overwritten spans are appended to `overwritten`, for the caller to release outside its lock.
    mutating func append(
        _ spans: ContiguousArray<RecordingSpan>, overwritten: inout ContiguousArray<RecordingSpan>
    ) {
        for span in spans {
            appended &+= 1
            if storage.count < capacity {
                storage.append(span)
                continue
            }
            // Moved out, not copied: the overwritten span is cold in the cache, and a copy would retain it.
            let old = storage.withUnsafeMutableBufferPointer { slots in
                let slot = slots.baseAddress! + head
                let old = slot.move()
                slot.initialize(to: span)
                return old
            }
            overwritten.append(consume old)
            head = head + 1 == capacity ? 0 : head + 1
            dropped &+= 1
        }
    }

    /// The sequence number of the oldest span held (appended + 1 when empty).
    var oldestSequence: UInt64 { appended - UInt64(storage.count) + 1 }

    /// The span with the given position from the oldest (0 = oldest).
    private func span(atAge age: Int) -> RecordingSpan {
        storage.count < capacity ? storage[age] : storage[(head + age) % capacity]
    }

    /// All spans, oldest first.
    func all() -> [RecordingSpan] {
        var result: [RecordingSpan] = []
        result.reserveCapacity(storage.count)
        if storage.count < capacity {
            result.append(contentsOf: storage)
        } else {
            result.append(contentsOf: storage[head...])
            result.append(contentsOf: storage[..<head])
        }
        return result
    }

    /// Up to `limit` spans with sequence numbers above `cursor`, oldest first; the cursor of the last
    /// one returned; and how many spans after `cursor` were overwritten.
    func spans(after cursor: UInt64, limit: Int) -> (spans: [RecordingSpan], cursor: UInt64, missed: UInt64) {
        let oldest = oldestSequence
        let first = max(cursor &+ 1, oldest)
        let missed = first > cursor &+ 1 ? first - (cursor &+ 1) : 0
        guard first <= appended, limit > 0 else {
            return ([], max(cursor, first - 1), missed)
        }
        let available = Int(appended - first + 1)
        let take = min(available, limit)
        let startAge = Int(first - oldest)
        var spans: [RecordingSpan] = []
        spans.reserveCapacity(take)
        for age in startAge..<(startAge + take) {
            spans.append(span(atAge: age))
        }
        return (spans, first + UInt64(take) - 1, missed)
    }

    /// Empties the ring; sequence numbers and the dropped count go on.
    mutating func removeAll() -> ContiguousArray<RecordingSpan> {
        head = 0
        var removed: ContiguousArray<RecordingSpan> = []
        swap(&removed, &storage)
        return removed
    }
}

/// Spans read from the ring after a cursor, for consumers that keep their own position.
public struct FinishedSpanBatch: Sendable {
    /// The spans, oldest first.
    public var spans: [FinishedSpan]
    /// The sequence number of the last span returned (pass it back to read on).
    public var cursor: UInt64
    /// Spans after the given cursor that were overwritten before this read.
    public var missed: UInt64
}
