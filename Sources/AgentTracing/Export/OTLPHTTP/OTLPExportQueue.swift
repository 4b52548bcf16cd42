import Synchronization
import ValueFormats

/// What a continuous exporter has done so far; counts are of items (spans, or metric data points).
public struct OTLPExportStatistics: Sendable, Equatable {
    /// Items delivered and not rejected.
    public var exported = 0
    /// Items the receiver reported rejected (partial success).
    public var rejected: Int64 = 0
    /// The receivers' partial-success messages.
    public var rejectionMessages: [String] = []
    /// Items whose batch failed for good, and items still queued at shutdown.
    public var failed = 0
    /// Items dropped because the queue was full.
    public var dropped: UInt64 = 0
    /// The latest failure.
    public var lastFailure: TracingError?
}

/// The bounded queue and sending loop of a continuous OTLP exporter, whatever it sends.
///
/// - The queue is bounded (``Configuration/queueCapacity`` entries): when the receiver is slow or down, new
///   entries are dropped and counted (in items, through `weight`) rather than blocking whoever enqueues or
///   growing without bound.
/// - A batch goes out when ``Configuration/batchSize`` entries are waiting or every ``Configuration/interval``,
///   whichever is first; `send` retries it and reports what became of it.
/// - ``shutdown(timeout:)`` sends what is queued within the timeout, then stops.
final class OTLPExportQueue<Entry: Sendable>: Sendable {
    typealias Configuration = OTLPBatchExporter.Configuration
    /// Sends one batch; given the dropped count so far and the shutdown deadline, once there is one.
    typealias Send =
        @Sendable ([Entry], _ dropped: UInt64, _ deadline: ContinuousClock.Instant?) async -> OTLPExportResult

    let configuration: Configuration

    private struct State {
        var queue: [Entry] = []
        var statistics = OTLPExportStatistics()
        var stopping = false
        var deadline: ContinuousClock.Instant?
        var failing = false
        var loop: Task<Void, Never>?
    }

    private let state = Lock(State())
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let send: Send
    private let weight: @Sendable (Entry) -> Int
    private let onFailure: (@Sendable (TracingError) -> Void)?

    init(
        configuration: Configuration, weight: @escaping @Sendable (Entry) -> Int, send: @escaping Send,
        onFailure: (@Sendable (TracingError) -> Void)?
    ) {
        self.configuration = configuration
        self.weight = weight
        self.send = send
        self.onFailure = onFailure
        (wakeups, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    func start() {
        state.withLock { state in
            guard state.loop == nil else { return }
            // Detached: the loop must not inherit the starting task's span context or its tracer scope.
            state.loop = Task.detached { [self] in await self.run() }
        }
    }

    func enqueue(_ entry: Entry) {
        let batchSize = configuration.batchSize
        let capacity = configuration.queueCapacity
        let full = state.withLock { state -> Bool in
            guard state.queue.count < capacity else {
                state.statistics.dropped += UInt64(weight(entry))
                return false
            }
            state.queue.append(entry)
            return state.queue.count == batchSize
        }
        if full { wake.yield() }
    }

    func flush() {
        wake.yield()
    }

    var statistics: OTLPExportStatistics { state.withLock { $0.statistics } }

    var queuedCount: Int { state.withLock { $0.queue.count } }

    func shutdown(timeout: Duration) async -> OTLPExportStatistics {
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
        return state.withLock { state in
            state.statistics.failed += state.queue.reduce(0) { $0 + weight($1) }
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
                return (batch, state.statistics.dropped, state.deadline)
            }
            guard !batch.isEmpty else { return }
            let result = await send(batch, dropped, deadline)
            let report = state.withLock { state -> TracingError? in
                state.statistics.exported += result.accepted
                state.statistics.rejected += result.rejected
                for message in result.rejectionMessages where !state.statistics.rejectionMessages.contains(message) {
                    state.statistics.rejectionMessages.append(message)
                }
                state.statistics.failed += result.failed
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
