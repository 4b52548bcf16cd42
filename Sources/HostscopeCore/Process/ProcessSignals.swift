import Dispatch
import Synchronization
import ValueFormats

#if canImport(Glibc)
    public import Glibc
#endif

/// Calls a handler on each SIGINT and SIGTERM (instead of ending the process) until cancelled: the one
/// place hostscope takes these signals, so that a face can turn them into cancellation and the core closes
/// what it opened.
// @unchecked Sendable: the sources are set up in init and only cancelled afterwards, which Dispatch allows
// from any thread.
public final class SignalWatcher: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    /// Watches `signals` (SIGINT and SIGTERM by default), calling `handler` with each signal's number.
    public init(_ signals: [Int32] = [SIGINT, SIGTERM], handler: @escaping @Sendable (Int32) -> Void) {
        let queue = DispatchQueue(label: "hostscope.signals")
        var made: [any DispatchSourceSignal] = []
        for number in signals {
            // Ignored so the default action does not end the process; a signal some other watcher already
            // handles (libdispatch's handler for a source made elsewhere, as serve's service group makes) keeps
            // that handler, which every source of the signal is fed from.
            var current = sigaction()
            if sigaction(number, nil, &current) != 0 || current.__sigaction_handler.sa_handler == nil {
                signal(number, SIG_IGN)
            }
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            made.append(source)
        }
        sources = made
    }

    /// Stops calling the handler (the signals stay ignored).
    public func cancel() {
        for source in sources { source.cancel() }
    }
}

/// Runs `body`, cancelling it when the process receives SIGINT (Ctrl-C) or SIGTERM, so that long-running
/// commands end through their normal path: files closed valid, sessions closed. A second signal while
/// shutting down exits at once.
public func withTerminationSignals<T: Sendable, Failure: Error>(
    _ body: @escaping @Sendable () async throws(Failure) -> T
) async throws(Failure) -> T {
    let task = Task { () async -> Result<T, Failure> in
        do throws(Failure) {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }
    let received = Counter()
    let watcher = SignalWatcher { number in
        if received.increment() > 1 { exit(128 + number) }
        task.cancel()
    }
    let result = await task.value
    watcher.cancel()
    return try result.get()
}

/// Counts the signals received.
private final class Counter: Sendable {
    private let value = Lock(0)

    func increment() -> Int {
        value.withLock { count in
            count += 1
            return count
        }
    }
}

/// Calls a handler on each SIGHUP, the signal a long-running command reads its files again on, until
/// stopped; SIGHUPs that come while the handler runs are folded into one more call.
public final class ReloadSignal: Sendable {
    private let watcher: SignalWatcher
    private let continuation: AsyncStream<Void>.Continuation
    private let task: Task<Void, Never>

    /// Watches SIGHUP, calling `handler` (off the signal's queue) after each.
    public init(_ handler: @escaping @Sendable () async -> Void) {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.continuation = continuation
        watcher = SignalWatcher([SIGHUP]) { _ in continuation.yield() }
        task = Task { for await _ in stream { await handler() } }
    }

    /// Stops calling the handler (SIGHUP stays ignored).
    public func stop() {
        watcher.cancel()
        continuation.finish()
        task.cancel()
    }
}

/// Whether the process still has a controlling terminal: after a hangup (the terminal closed, the SSH
/// session dropped) the kernel takes it away, and `/dev/tty` no longer opens.
public enum ControllingTerminal {
    public static func isPresent() -> Bool {
        let descriptor = open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        close(descriptor)
        return true
    }
}
