import Synchronization
import ValueFormats

/// Bounds how many sessions connect at once (TCP, key exchange, authentication), so that a
/// thousand hosts started together neither time out nor starve the sessions already up.
///
/// A connect that finds every slot taken waits its turn, first come first served; its connect
/// timeout starts only when it gets a slot. When a slot frees while others wait, the next one
/// starts after a short random pause (``jitter``), so a burst of reconnects does not hit the
/// network, the servers and the I/O threads in one instant.
public final class HandshakeGate: Sendable {
    private struct State {
        var running = 0
        var waiting: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextID: UInt64 = 0
        var admitted = 0
        var peakWaiting = 0
    }

    /// Connects allowed at once.
    public let limit: Int
    /// The longest pause before a connect that had to wait.
    public let jitter: Duration
    private let state = Lock(State())

    public init(limit: Int, jitter: Duration = .milliseconds(20)) {
        self.limit = max(1, limit)
        self.jitter = jitter
    }

    /// What the gate is doing, for status displays and tests.
    public struct Counts: Sendable, Equatable {
        /// Connects under way.
        public var running: Int
        /// Connects waiting for a slot.
        public var waiting: Int
        /// The most connects that ever waited at once.
        public var peakWaiting: Int
        /// Connects let through so far.
        public var admitted: Int
    }

    public var counts: Counts {
        state.withLock {
            Counts(running: $0.running, waiting: $0.waiting.count, peakWaiting: $0.peakWaiting, admitted: $0.admitted)
        }
    }

    /// Waits for a slot; pair every successful call with ``leave()``.
    ///
    /// - Throws: `CancellationError` when the task is cancelled while waiting.
    func enter() async throws {
        let id = state.withLock { state -> UInt64? in
            if state.running < limit && state.waiting.isEmpty {
                state.running += 1
                state.admitted += 1
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let admitted = state.withLock { state -> Bool in
                    if state.running < limit && state.waiting.isEmpty {
                        state.running += 1
                        state.admitted += 1
                        return true
                    }
                    state.waiting.append((id, continuation))
                    state.peakWaiting = max(state.peakWaiting, state.waiting.count)
                    return false
                }
                if admitted { continuation.resume() }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiting.remove(at: index).continuation
            }
            cancelled?.resume(throwing: CancellationError())
        }
        // Admitted after a wait: spread the starts of those that queued together.
        if jitter > .zero {
            let nanoseconds = Int64.random(in: 0...max(0, jitter.wholeNanoseconds))
            try? await Task.sleep(for: .nanoseconds(nanoseconds))
        }
    }

    /// Frees a slot, handing it to the longest waiting connect if there is one.
    func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            if state.waiting.isEmpty {
                state.running -= 1
                return nil
            }
            state.admitted += 1
            return state.waiting.removeFirst().continuation
        }
        next?.resume()
    }
}
