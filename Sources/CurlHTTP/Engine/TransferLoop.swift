internal import CCurl
import Foundation
import Synchronization
import ValueFormats

/// The hand-over point between tasks and the one thread that drives all of a client's curl handles.
///
/// Tasks append commands under the lock and wake the thread with `curl_multi_wakeup`; the thread takes the
/// whole queue at the top of each turn. No blocking curl call ever runs on Swift's cooperative pool.
final class TransferLoop: Sendable {
    enum Command: Sendable {
        case start(Transfer)
        case abort(Transfer)
        case resume(Transfer)
    }

    /// The multi handle as other threads may use it: only for `curl_multi_wakeup`.
    struct Wakeup: @unchecked Sendable {  // curl documents curl_multi_wakeup as safe from any thread.
        let multi: UnsafeMutableRawPointer

        func signal() {
            curl_multi_wakeup(multi)
        }
    }

    private struct Shared {
        var commands: [Command] = []
        var shutdownRequested = false
        var exited = false
        /// The multi handle, for `curl_multi_wakeup`; `nil` before the thread made it and after it freed it.
        var wakeup: Wakeup?
        var exitWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let shared = Lock(Shared())

    /// Starts the transfer thread.
    init(threadName: String) {
        let thread = Thread { [self] in
            CurlDriver(loop: self).run()
        }
        thread.name = threadName
        thread.start()
    }

    /// Queues a command and wakes the thread; after shutdown, a `start` fails its transfer at once.
    func send(_ command: Command) {
        let accepted = shared.withLock { shared -> Bool in
            if shared.shutdownRequested {
                return false
            }
            shared.commands.append(command)
            shared.wakeup?.signal()
            return true
        }
        if !accepted, case .start(let transfer) = command {
            transfer.finish(
                HTTPError(
                    code: .shutdown,
                    message: "\(transfer.request.summary) was not sent: the HTTP client was already shut down"))
        }
    }

    /// Asks the thread to fail every transfer with `shutdown` and exit; does not wait.
    func requestShutdown() {
        shared.withLock { shared in
            shared.shutdownRequested = true
            shared.wakeup?.signal()
        }
    }

    /// Asks the thread to exit and waits until it has freed every handle.
    func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let exited = shared.withLock { shared -> Bool in
                shared.shutdownRequested = true
                shared.wakeup?.signal()
                if shared.exited {
                    return true
                }
                shared.exitWaiters.append(continuation)
                return false
            }
            if exited {
                continuation.resume()
            }
        }
    }

    // MARK: Called by the transfer thread

    func attach(multi: UnsafeMutableRawPointer) {
        let wakeup = Wakeup(multi: multi)
        shared.withLock { $0.wakeup = wakeup }
    }

    /// Takes the queued commands and whether shutdown was asked for.
    func takeCommands() -> ([Command], shutdown: Bool) {
        shared.withLock { shared in
            defer { shared.commands.removeAll() }
            return (shared.commands, shared.shutdownRequested)
        }
    }

    /// Forgets the multi handle before the thread frees it, so no wakeup can reach freed memory.
    func detach() {
        shared.withLock { $0.wakeup = nil }
    }

    /// Marks the thread gone and releases everyone waiting in `shutdown()`.
    func markExited() {
        let waiters = shared.withLock { shared in
            shared.exited = true
            defer { shared.exitWaiters.removeAll() }
            return shared.exitWaiters
        }
        for waiter in waiters {
            waiter.resume()
        }
    }
}
