import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// Runs `body`, cancelling it when the process receives SIGINT (Ctrl-C) or SIGTERM, so that
/// long-running commands end through their normal path: files closed valid, sessions closed.
/// A second signal while shutting down exits at once.
public func withTerminationSignals<T: Sendable>(_ body: @escaping @Sendable () async -> T) async -> T {
    let task = Task { await body() }
    let queue = DispatchQueue(label: "hostscope.signals")
    var sources: [any DispatchSourceSignal] = []
    var received = 0
    for number in [SIGINT, SIGTERM] {
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
        source.setEventHandler {
            received += 1
            if received > 1 { exit(128 + number) }
            task.cancel()
        }
        source.resume()
        sources.append(source)
    }
    let result = await task.value
    for source in sources { source.cancel() }
    return result
}
