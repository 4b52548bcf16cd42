import Dispatch

/// Runs blocking work (opening a file, waiting on another process's lock) on a dispatch queue of
/// its own, so that a waiting open never occupies a thread of Swift's cooperative pool. The
/// queue is concurrent: one open waiting out a lock does not hold up another database's open.
enum BlockingQueue {
    private static let queue = DispatchQueue(label: "hostscope.storage.blocking", attributes: .concurrent)

    static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result(catching: work)) }
        }
    }
}
