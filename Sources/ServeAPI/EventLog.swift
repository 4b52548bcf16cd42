public import Foundation
import Synchronization
import ValueFormats

/// One server-sent event: `id`, `event` and a one-line JSON `data`.
public struct ServerSentEvent: Sendable, Equatable {
    /// Position in the log; ids go up by one per event for the life of a `serve` process.
    public var sequence: UInt64
    /// `record`, `host_state`, `span`, `fleet` or `reset`.
    public var name: String
    /// One line of JSON.
    public var data: String
    /// For a `record`: its host, and the record cut to the figures a fleet view shows
    /// (``APIEncoding/summaryRecord(_:)``), sent to clients that asked for `view=summary`.
    public var host: String?
    public var summaryData: String?

    public init(sequence: UInt64, name: String, data: String, host: String? = nil, summaryData: String? = nil) {
        self.sequence = sequence
        self.name = name
        self.data = data
        self.host = host
        self.summaryData = summaryData
    }

    /// The event on the wire, its id prefixed with the log's epoch: `id: EPOCH-SEQUENCE`; with `summary`, a
    /// record's summary data where it has one.
    public func framed(epoch: String, summary: Bool = false) -> String {
        "id: \(epoch)-\(sequence)\nevent: \(name)\ndata: \(summary ? summaryData ?? data : data)\n\n"
    }
}

/// The live updates of the API: a bounded log of the latest events, read by every event-stream
/// client at its own pace.
///
/// Clients do not get buffers of their own: each keeps its place (the last id it wrote) and reads
/// what follows from the shared log when its doorbell rings. A client that falls further behind
/// than the log holds, or that resumes with a `Last-Event-ID` the log no longer has (or from an
/// earlier process: the epoch differs), is told so with a `reset` event and carries on from the
/// newest events; it refetches the state it missed from the JSON API. So a slow client costs a
/// few bytes of bookkeeping, never unbounded memory, and never slows the watch.
public final class EventLog: Sendable {
    /// Identifies this process's ids: its start time in milliseconds since the Unix epoch.
    public let epoch: String
    /// How many of the latest events are kept for clients to read and resume from.
    public let capacity: Int

    private struct State {
        var events: [ServerSentEvent] = []
        /// Index in `events` of the oldest event, once the ring is full.
        var start = 0
        var nextSequence: UInt64 = 1
        var doorbells: [UInt64: AsyncStream<Void>.Continuation] = [:]
        var nextSubscriber: UInt64 = 0
        var finished = false
    }

    private let state = Lock(State())

    public init(capacity: Int = 1024, epoch: String = String(Int64(Date().timeIntervalSince1970 * 1000))) {
        self.capacity = max(1, capacity)
        self.epoch = epoch
    }

    /// Appends an event and wakes every client; returns its sequence number.
    @discardableResult
    public func append(_ name: String, data: String, host: String? = nil, summaryData: String? = nil) -> UInt64 {
        let (sequence, doorbells) = state.withLock { state -> (UInt64, [AsyncStream<Void>.Continuation]) in
            let event = ServerSentEvent(
                sequence: state.nextSequence, name: name, data: data, host: host, summaryData: summaryData)
            state.nextSequence += 1
            if state.events.count < capacity {
                state.events.append(event)
            } else {
                state.events[state.start] = event
                state.start = (state.start + 1) % capacity
            }
            return (event.sequence, Array(state.doorbells.values))
        }
        for doorbell in doorbells { doorbell.yield() }
        return sequence
    }

    /// What a client reads next.
    public struct Reading: Sendable, Equatable {
        /// The events after the client's place, oldest first.
        public var events: [ServerSentEvent]
        /// Events were lost between the client's place and `events`: it should refetch the state.
        public var gap: Bool
        /// The client's new place.
        public var position: UInt64
    }

    /// The events after `position` (0: from the oldest kept).
    public func read(after position: UInt64) -> Reading {
        state.withLock { state in
            let newest = state.nextSequence - 1
            guard position < newest else { return Reading(events: [], gap: false, position: max(position, newest)) }
            let oldest = state.events.isEmpty ? state.nextSequence : newest - UInt64(state.events.count) + 1
            let gap = position != 0 && position + 1 < oldest
            let first = max(position + 1, oldest)
            var events: [ServerSentEvent] = []
            events.reserveCapacity(Int(newest - first + 1))
            for sequence in first...newest {
                let offset = Int(sequence - oldest)
                events.append(state.events[(state.start + offset) % state.events.count])
            }
            return Reading(events: events, gap: gap, position: newest)
        }
    }

    /// Where a client that sent `Last-Event-ID` resumes: the sequence it names, when the id is of
    /// this process; 0 (and a gap to report) when it is of another or malformed; the newest event's
    /// sequence (only events from now on) when there is none.
    public func resumePosition(lastEventID: String?) -> (position: UInt64, gap: Bool) {
        let newest = state.withLock { $0.nextSequence - 1 }
        guard let lastEventID, !lastEventID.isEmpty else { return (newest, false) }
        let parts = lastEventID.split(separator: "-", maxSplits: 1)
        guard parts.count == 2, parts[0] == epoch, let sequence = UInt64(parts[1]), sequence <= newest else {
            return (newest, true)
        }
        return (sequence, false)
    }

    /// A doorbell that rings (at most one pending ring) when events arrive or ``ring()`` is called;
    /// it ends when the log finishes. Cancel the returned token's task, or call ``unsubscribe(_:)``.
    public func subscribe() -> (id: UInt64, doorbell: AsyncStream<Void>) {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state -> UInt64? in
            guard !state.finished else { return nil }
            state.nextSubscriber += 1
            state.doorbells[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        guard let id else {
            continuation.finish()
            return (0, stream)
        }
        return (id, stream)
    }

    /// Removes a client's doorbell.
    public func unsubscribe(_ id: UInt64) {
        state.withLock { $0.doorbells.removeValue(forKey: id) }?.finish()
    }

    /// The number of clients subscribed.
    public var subscriberCount: Int { state.withLock { $0.doorbells.count } }

    /// Rings every doorbell without an event (a keep-alive tick).
    public func ring() {
        for doorbell in state.withLock({ Array($0.doorbells.values) }) { doorbell.yield() }
    }

    /// Ends every client's stream (shutdown); later subscriptions end at once.
    public func finish() {
        let doorbells = state.withLock { state -> [AsyncStream<Void>.Continuation] in
            state.finished = true
            defer { state.doorbells = [:] }
            return Array(state.doorbells.values)
        }
        for doorbell in doorbells { doorbell.finish() }
    }
}
