public import AgentTracing
import Foundation
public import Storage
import ValueFormats

/// Moves finished spans from the tracer's ring into the database, in batches, on its own schedule: the
/// code that ends a span never waits for SQLite.
///
/// It reads the ring with a cursor (``RingBufferTracer/finishedSpans(after:limit:)``) every
/// ``interval``; spans the ring overwrote before they were read are counted into the `meta` counter
/// ``droppedSpansKey`` in the same transaction as the batch, so `trace list` can say how many never
/// reached the file. A batch that fails to commit (disk full, a lock held too long) is kept and tried
/// again next time, up to the ring's capacity. Spans older than the retention are pruned when the
/// persister starts and every hour.
public actor SpanPersister {
    /// The `meta` counter of spans lost before they reached the database.
    public static let droppedSpansKey = "tracing.dropped_spans"

    /// The tracer read from.
    public let tracer: RingBufferTracer
    /// The database written to.
    public let database: StorageDatabase
    /// How often the ring is read.
    public let interval: Duration
    /// How long spans are kept; `nil` keeps them all.
    public let retention: Duration?

    private var cursor = SpanCursor.start
    private var pending: [StoredSpan] = []
    private var pendingMissed: UInt64 = 0
    private var loop: Task<Void, Never>?
    private var lastPrune: ContinuousClock.Instant?
    private var reportedFailure = false
    private let onError: @Sendable (String) -> Void
    /// Spans written so far.
    public private(set) var writtenSpans = 0

    public init(
        tracer: RingBufferTracer, database: StorageDatabase, interval: Duration = .milliseconds(500),
        retention: Duration? = nil, onError: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.tracer = tracer
        self.database = database
        self.interval = interval
        self.retention = retention
        self.onError = onError
    }

    /// Starts reading the ring periodically.
    public func start() {
        guard loop == nil else { return }
        let interval = interval
        loop = Task.detached { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled, let self else { return }
                await self.flush()
            }
        }
    }

    /// Stops the periodic reads and writes everything the ring holds now.
    public func shutdown() async {
        let running = loop
        loop = nil
        running?.cancel()
        await running?.value
        await flush()
    }

    /// Writes the spans finished since the last call (and any batch that failed before).
    public func flush() async {
        let batch = tracer.finishedSpans(after: cursor, limit: tracer.capacity)
        cursor = batch.cursor
        pendingMissed += batch.missed
        pending.append(contentsOf: batch.spans.map(StoredSpan.init))
        if pending.count > tracer.capacity {
            // Failed writes are retried, within the same bound as the ring.
            let excess = pending.count - tracer.capacity
            pending.removeFirst(excess)
            pendingMissed += UInt64(excess)
        }
        await prune()
        guard !pending.isEmpty || pendingMissed > 0 else { return }
        let counters = pendingMissed > 0 ? [Self.droppedSpansKey: Int64(clamping: pendingMissed)] : [:]
        let spans = pending
        let database = database
        do {
            // In a task of its own: a write is never abandoned half-way because the caller was cancelled
            // (a watch ending on Ctrl-C still stores its last spans).
            _ = try await Task { try await database.spans.insert(spans, incrementing: counters) }.value
            writtenSpans += pending.count
            pending.removeAll(keepingCapacity: true)
            pendingMissed = 0
            reportedFailure = false
        } catch {
            if !reportedFailure {
                reportedFailure = true
                let message = (error as? StorageError)?.message ?? "\(error)"
                onError("spans not stored in \(database.path): \(message); retrying")
            }
        }
    }

    private func prune() async {
        guard let retention else { return }
        if let lastPrune, lastPrune.duration(to: .now) < .seconds(3600) { return }
        lastPrune = .now
        let cutoff = Date().addingTimeInterval(-retention.inSeconds)
        do {
            try await database.spans.prune(olderThan: cutoff)
        } catch {
            onError("could not prune old spans in \(database.path): \(error.message)")
        }
    }
}
