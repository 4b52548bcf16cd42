/// The bounded store of finished spans: a ring that overwrites its oldest span when full.
///
/// Overwriting the oldest keeps what a user asks about ("why did the last tick fail") and never
/// blocks or fails the code that ends a span. Every span gets a sequence number (1, 2, …) so that
/// readers such as a batching persister can ask for "everything after what I have" and learn how
/// many spans they missed.
struct SpanRing {
    let capacity: Int
    private var storage: ContiguousArray<FinishedSpan> = []
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

    /// Appends a span. When the ring is full the span takes the oldest one's slot and `span` comes
    /// back holding the overwritten span, for the caller to release outside its lock.
    mutating func append(_ span: inout FinishedSpan) {
        appended &+= 1
        if storage.count < capacity {
            storage.append(span)
            return
        }
        swap(&storage[head], &span)
        head = head + 1 == capacity ? 0 : head + 1
        dropped &+= 1
    }

    /// The sequence number of the oldest span held (appended + 1 when empty).
    var oldestSequence: UInt64 { appended - UInt64(storage.count) + 1 }

    /// The span with the given position from the oldest (0 = oldest).
    private func span(atAge age: Int) -> FinishedSpan {
        storage.count < capacity ? storage[age] : storage[(head + age) % capacity]
    }

    /// All spans, oldest first.
    func all() -> [FinishedSpan] {
        var result: [FinishedSpan] = []
        result.reserveCapacity(storage.count)
        if storage.count < capacity {
            result.append(contentsOf: storage)
        } else {
            result.append(contentsOf: storage[head...])
            result.append(contentsOf: storage[..<head])
        }
        return result
    }

    /// Up to `limit` spans with sequence numbers above `cursor`, oldest first.
    func spans(after cursor: UInt64, limit: Int) -> FinishedSpanBatch {
        let oldest = oldestSequence
        let first = max(cursor &+ 1, oldest)
        let missed = first > cursor &+ 1 ? first - (cursor &+ 1) : 0
        guard first <= appended, limit > 0 else {
            return FinishedSpanBatch(spans: [], cursor: max(cursor, first - 1), missed: missed)
        }
        let available = Int(appended - first + 1)
        let take = min(available, limit)
        let startAge = Int(first - oldest)
        var spans: [FinishedSpan] = []
        spans.reserveCapacity(take)
        for age in startAge..<(startAge + take) {
            spans.append(span(atAge: age))
        }
        return FinishedSpanBatch(spans: spans, cursor: first + UInt64(take) - 1, missed: missed)
    }

    /// Empties the ring; sequence numbers and the dropped count go on.
    mutating func removeAll() -> ContiguousArray<FinishedSpan> {
        head = 0
        var removed: ContiguousArray<FinishedSpan> = []
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
