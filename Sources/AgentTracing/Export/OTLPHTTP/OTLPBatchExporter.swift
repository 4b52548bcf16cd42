import Synchronization

/// Exports spans continuously while a command runs (`watch --otlp-endpoint`): a ``FinishedSpanSink``
/// that queues each finished span and sends batches from a task of its own.
///
/// - The queue is bounded (``Configuration/queueCapacity``): when the receiver is slow or down, new
///   spans are dropped and counted (``Statistics/droppedSpans``) rather than blocking the code that
///   ends them or growing without bound. The count rides on every later request as the scope attribute
///   `hostscope.tracer.dropped_spans`.
/// - A batch goes out when ``Configuration/batchSize`` spans are waiting or every
///   ``Configuration/interval``, whichever is first; each batch is retried per the exporter's
///   ``OTLPRetryPolicy`` and counted failed when that gives up.
/// - Spans of export requests (marked with ``HTTPClientTracing/exportMarkerKey``) are not queued, so an
///   export never causes another.
/// - ``shutdown(timeout:)`` sends what is queued within the timeout, then stops.
public final class OTLPBatchExporter: FinishedSpanSink {
    /// Queue and batching bounds.
    public struct Configuration: Sendable {
        /// Spans waiting at most; more are dropped and counted.
        public var queueCapacity: Int
        /// Spans per batch.
        public var batchSize: Int
        /// The longest a span waits in the queue before its batch goes out.
        public var interval: Duration

        public init(queueCapacity: Int = 8_192, batchSize: Int = 512, interval: Duration = .seconds(2)) {
            self.queueCapacity = max(1, queueCapacity)
            self.batchSize = max(1, batchSize)
            self.interval = interval
        }
    }

    /// What the exporter has done so far.
    public struct Statistics: Sendable, Equatable {
        /// Spans delivered and not rejected.
        public var exportedSpans = 0
        /// Spans the receiver reported rejected (partial success).
        public var rejectedSpans: Int64 = 0
        /// The receivers' partial-success messages.
        public var rejectionMessages: [String] = []
        /// Spans whose batch failed for good, and spans still queued at shutdown.
        public var failedSpans = 0
        /// Spans dropped because the queue was full.
        public var droppedSpans: UInt64 = 0
        /// The latest failure.
        public var lastFailure: TracingError?
    }

    /// The exporter that sends the batches.
    public let exporter: OTLPHTTPExporter
    /// The bounds in force.
    public let configuration: Configuration

    private struct State {
        var queue: [FinishedSpan] = []
        var statistics = Statistics()
        var stopping = false
        var deadline: ContinuousClock.Instant?
        var failing = false
        var loop: Task<Void, Never>?
    }

    private let state = Mutex(State())
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let onFailure: (@Sendable (TracingError) -> Void)?

    /// An exporter; `onFailure` hears of the first failure after a stretch of successes (for one warning
    /// line, not one per batch). Call ``start()`` to begin sending.
    public init(
        exporter: OTLPHTTPExporter, configuration: Configuration = Configuration(),
        onFailure: (@Sendable (TracingError) -> Void)? = nil
    ) {
        self.exporter = exporter
        self.configuration = configuration
        self.onFailure = onFailure
        (wakeups, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Starts the sending task and its timer. Calling it again does nothing.
    public func start() {
        state.withLock { state in
            guard state.loop == nil else { return }
            // Detached: the loop must not inherit the starting task's span context or its tracer scope.
            state.loop = Task.detached { [self] in await self.run() }
        }
    }

    public func spanFinished(_ span: FinishedSpan) {
        if span.attributes[HTTPClientTracing.exportMarkerKey] == .bool(true) { return }
        let batchSize = configuration.batchSize
        let capacity = configuration.queueCapacity
        let full = state.withLock { state -> Bool in
            guard state.queue.count < capacity else {
                state.statistics.droppedSpans += 1
                return false
            }
            state.queue.append(span)
            return state.queue.count == batchSize
        }
        if full { wake.yield() }
    }

    public func forceFlush() {
        wake.yield()
    }

    /// The counts so far.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Spans waiting to be sent.
    public var queuedSpanCount: Int { state.withLock { $0.queue.count } }

    /// Sends what is queued, giving up at `timeout` from now, and stops; spans not delivered by then
    /// count as failed. Returns the final counts.
    @discardableResult
    public func shutdown(timeout: Duration) async -> Statistics {
        let deadline = ContinuousClock.now + timeout
        let loop = state.withLock { state -> Task<Void, Never>? in
            state.stopping = true
            state.deadline = deadline
            return state.loop
        }
        wake.yield()
        if let loop {
            // A request in flight at the deadline is abandoned: cancelling aborts its transfer.
            let watchdog = Task {
                try? await Task.sleep(until: deadline + .milliseconds(200), clock: .continuous)
                loop.cancel()
            }
            await loop.value
            watchdog.cancel()
        }
        await exporter.shutdown()
        return state.withLock { state in
            state.statistics.failedSpans += state.queue.count
            state.queue.removeAll()
            return state.statistics
        }
    }

    private func run() async {
        let interval = configuration.interval
        let timer = Task { [wake] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                wake.yield()
            }
        }
        defer { timer.cancel() }
        for await _ in wakeups {
            await sendQueued()
            if state.withLock({ $0.stopping }) || Task.isCancelled { break }
        }
    }

    private func sendQueued() async {
        let batchSize = configuration.batchSize
        while !Task.isCancelled {
            let (batch, dropped, deadline) = state.withLock { state in
                let count = min(batchSize, state.queue.count)
                let batch = Array(state.queue.prefix(count))
                state.queue.removeFirst(count)
                return (batch, state.statistics.droppedSpans, state.deadline)
            }
            guard !batch.isEmpty else { return }
            let result = await exporter.export(batch, droppedSpanCount: dropped, deadline: deadline)
            let report = state.withLock { state -> TracingError? in
                state.statistics.exportedSpans += result.acceptedSpans
                state.statistics.rejectedSpans += result.rejectedSpans
                for message in result.rejectionMessages where !state.statistics.rejectionMessages.contains(message) {
                    state.statistics.rejectionMessages.append(message)
                }
                state.statistics.failedSpans += result.failedSpans
                guard let failure = result.failure else {
                    state.failing = false
                    return nil
                }
                state.statistics.lastFailure = failure
                defer { state.failing = true }
                return state.failing ? nil : failure
            }
            if let report { onFailure?(report) }
        }
    }
}
