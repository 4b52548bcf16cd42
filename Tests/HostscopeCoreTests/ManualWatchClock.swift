import Foundation
import HostscopeCore
import Synchronization
import ValueFormats

/// A watch clock that moves only when a test says so, so that a watch runs tick by tick: each host sleeps
/// until its slot, the test advances to the earliest slot, the host collects (for real, over SSH) and sleeps
/// again. Record counts and stamps then follow from the slots, not from how busy the machine is.
final class ManualWatchClock: WatchClock {
    private struct Sleeper {
        var deadline: Date
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Date
        var sleepers: [UInt64: Sleeper] = [:]
        var nextID: UInt64 = 0
    }

    private let state: Lock<State>

    init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        state = Lock(State(now: start))
    }

    func now() -> Date {
        state.withLock { $0.now }
    }

    func sleep(until deadline: Date) async throws {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let ready = state.withLock { state -> Result<Void, any Error>? in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }

    /// How many tasks sleep now.
    var sleepers: Int { state.withLock { $0.sleepers.count } }

    /// The earliest time a sleeper waits for.
    var nextDeadline: Date? { state.withLock { $0.sleepers.values.map(\.deadline).min() } }

    /// Moves the clock to `date` and wakes every sleeper due by then.
    func advance(to date: Date) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now = max(state.now, date)
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            for id in due.keys { state.sleepers.removeValue(forKey: id) }
            return due.values.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Moves the clock by `duration`.
    func advance(by duration: Duration) {
        advance(to: now().addingTimeInterval(duration.inSeconds))
    }
}
