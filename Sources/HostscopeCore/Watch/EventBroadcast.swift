import DequeModule
import Synchronization
import ValueFormats

/// Delivers one producer's events to any number of subscribers, each through a buffer of its own with a
/// fixed capacity.
///
/// A subscriber that falls behind loses its oldest events, and is told how many with the next event it
/// reads (``Subscription``'s `overflow` marker); the producer never waits for a subscriber, so a slow
/// consumer (a stalled HTTP client, a slow terminal) cannot hold up collection. Subscribing, reading and
/// producing are safe from any task.
final class EventBroadcast<Event: Sendable>: Sendable {
    private struct Subscriber {
        var buffer: Deque<Event> = []
        var capacity: Int
        var missed = 0
        var waiter: CheckedContinuation<Event?, Never>?
    }

    private struct State {
        var subscribers: [UInt64: Subscriber] = [:]
        var nextID: UInt64 = 0
        var finished = false
    }

    private let state = Lock(State())
    /// The event that stands for `count` lost events.
    private let overflow: @Sendable (Int) -> Event

    init(overflow: @escaping @Sendable (Int) -> Event) {
        self.overflow = overflow
    }

    /// A new subscriber, whose buffer starts with `initial` (the current state, say).
    func subscribe(capacity: Int, initial: [Event] = []) -> Subscription {
        let id = state.withLock { state -> UInt64 in
            let id = state.nextID
            state.nextID += 1
            guard !state.finished else { return id }
            var subscriber = Subscriber(capacity: max(1, capacity))
            for event in initial { Self.enqueue(event, into: &subscriber) }
            state.subscribers[id] = subscriber
            return id
        }
        return Subscription(handle: Handle(broadcast: self, id: id))
    }

    /// Hands `event` to every subscriber.
    func yield(_ event: Event) {
        // Subscribers are changed in place through their index: iterating `keys` while writing through
        // the dictionary would copy it, and with it every buffer, on each event.
        let woken = state.withLock { state -> [CheckedContinuation<Event?, Never>] in
            var woken: [CheckedContinuation<Event?, Never>] = []
            var index = state.subscribers.startIndex
            while index != state.subscribers.endIndex {
                if let waiter = state.subscribers.values[index].waiter {
                    state.subscribers.values[index].waiter = nil
                    woken.append(waiter)
                } else {
                    Self.enqueue(event, into: &state.subscribers.values[index])
                }
                state.subscribers.formIndex(after: &index)
            }
            return woken
        }
        for waiter in woken { waiter.resume(returning: event) }
    }

    /// Ends every subscription once its buffer is read; later subscriptions end at once.
    func finish() {
        let woken = state.withLock { state -> [CheckedContinuation<Event?, Never>] in
            state.finished = true
            var woken: [CheckedContinuation<Event?, Never>] = []
            var index = state.subscribers.startIndex
            while index != state.subscribers.endIndex {
                if let waiter = state.subscribers.values[index].waiter {
                    state.subscribers.values[index].waiter = nil
                    woken.append(waiter)
                }
                state.subscribers.formIndex(after: &index)
            }
            return woken
        }
        for waiter in woken { waiter.resume(returning: nil) }
    }

    /// How many subscribers are reading.
    var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    private static func enqueue(_ event: Event, into subscriber: inout Subscriber) {
        if subscriber.buffer.count >= subscriber.capacity {
            subscriber.buffer.removeFirst()
            subscriber.missed += 1
        }
        subscriber.buffer.append(event)
    }

    fileprivate func next(_ id: UInt64) async -> Event? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Event?, Never>) in
                let ready = state.withLock { state -> (Event?, Bool) in
                    // In place: a copy of the subscriber taken out would make the pop copy its whole buffer.
                    guard let index = state.subscribers.index(forKey: id) else { return (nil, true) }
                    if state.subscribers.values[index].missed > 0 {
                        let count = state.subscribers.values[index].missed
                        state.subscribers.values[index].missed = 0
                        return (overflow(count), true)
                    }
                    if let event = state.subscribers.values[index].buffer.popFirst() { return (event, true) }
                    if state.finished || Task.isCancelled {
                        return (nil, true)
                    }
                    state.subscribers.values[index].waiter = continuation
                    return (nil, false)
                }
                if ready.1 { continuation.resume(returning: ready.0) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Event?, Never>? in
                defer { state.subscribers[id]?.waiter = nil }
                return state.subscribers[id]?.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    fileprivate func unsubscribe(_ id: UInt64) {
        let waiter = state.withLock { $0.subscribers.removeValue(forKey: id)?.waiter }
        waiter?.resume(returning: nil)
    }

    /// Unsubscribes when the last copy of its subscription is gone.
    fileprivate final class Handle: Sendable {
        let broadcast: EventBroadcast
        let id: UInt64

        init(broadcast: EventBroadcast, id: UInt64) {
            self.broadcast = broadcast
            self.id = id
        }

        deinit {
            broadcast.unsubscribe(id)
        }
    }

    /// One subscriber's events, oldest first: ends when the producer finished and the buffer is read,
    /// or when the reading task is cancelled.
    struct Subscription: AsyncSequence, Sendable {
        fileprivate let handle: Handle

        func makeAsyncIterator() -> Iterator {
            Iterator(handle: handle)
        }

        struct Iterator: AsyncIteratorProtocol {
            fileprivate let handle: Handle

            mutating func next() async -> Event? {
                await handle.broadcast.next(handle.id)
            }
        }
    }
}
