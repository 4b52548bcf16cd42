import Synchronization
import ValueFormats

/// A request checked and completed on the caller's task, ready for the transfer thread.
struct PreparedRequest: Sendable {
    let method: HTTPMethod
    let url: String
    let parsedURL: RequestURL
    let headers: HTTPHeaders
    let body: [UInt8]
    let timeouts: HTTPTimeouts
    let userAgent: String
    let caBundlePath: String?
    /// `METHOD URL`, redacted: what every message says about this request.
    let summary: String

    init(_ request: HTTPRequest, configuration: HTTPClient.Configuration) throws(HTTPError) {
        let parsedURL = try RequestURL(parsing: request.url)
        let summary = "\(request.method) \(parsedURL.redacted)"
        guard request.method.isValidToken else {
            throw HTTPError(
                code: .invalidRequest, message: "\(summary): \"\(request.method)\" is not a valid HTTP method")
        }
        if request.method == .head && !request.body.isEmpty {
            throw HTTPError(code: .invalidRequest, message: "\(summary): a HEAD request cannot carry a body")
        }
        var headers = request.headers
        if let additional = configuration.additionalHeaders {
            for (name, value) in additional(request) where !headers.contains(name: name) {
                headers.add(name: name, value: value)
            }
        }
        try headers.validate(for: summary)
        self.method = request.method
        self.url = request.url
        self.parsedURL = parsedURL
        self.headers = headers
        self.body = request.body
        self.timeouts = request.timeouts
        self.userAgent = configuration.userAgent
        self.caBundlePath = configuration.caBundlePath
        self.summary = summary
    }

    /// Header lines as curl wants them. An empty value needs curl's `Name;` form, since `Name:` would remove
    /// the header instead; curl's own `Expect: 100-continue` (a round trip of delay on larger bodies) and
    /// form `Content-Type` are suppressed unless the caller set them.
    var headerLines: [String] {
        var lines = headers.map { $0.value.isEmpty ? "\($0.name);" : "\($0.name): \($0.value)" }
        if !headers.contains(name: "Expect") {
            lines.append("Expect:")
        }
        if !headers.contains(name: "Content-Type") {
            lines.append("Content-Type:")
        }
        return lines
    }
}

/// One request in flight: the part shared between the requesting task and the transfer thread.
///
/// All mutable state sits in a `TransferStateMachine` behind a `Lock`; continuations are resumed after the
/// lock is released.
final class Transfer: Sendable {
    typealias HeadContinuation = CheckedContinuation<Result<HTTPResponseHead, HTTPError>, Never>
    typealias ChunkContinuation = CheckedContinuation<Result<[UInt8]?, HTTPError>, Never>
    typealias Machine = TransferStateMachine<HeadContinuation, ChunkContinuation>

    enum Delivery {
        case accepted
        case pause
        case abort
    }

    let request: PreparedRequest
    private let loop: TransferLoop
    private let state: Lock<Machine>

    init(request: PreparedRequest, loop: TransferLoop, highWater: Int, lowWater: Int) {
        self.request = request
        self.loop = loop
        self.state = Lock(Machine(highWater: highWater, lowWater: lowWater))
    }

    /// The head, once it has arrived.
    var head: HTTPResponseHead? {
        state.withLock { $0.head }
    }

    /// Whether the transfer is neither finished nor given up; the transfer thread skips dead ones.
    var isRunning: Bool {
        state.withLock { $0.isRunning }
    }

    // MARK: The requesting task

    /// Waits for the response head; cancelling the task cancels the transfer.
    func awaitHead() async -> Result<HTTPResponseHead, HTTPError> {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: HeadContinuation) in
                let action = state.withLock { $0.waitForHead(continuation) }
                if case .resume(let waiter, let result) = action {
                    waiter.resume(returning: result)
                }
            }
        } onCancel: {
            cancel(cancelledError())
        }
    }

    /// Waits for the next body chunk (`nil` at the end); cancelling the task cancels the transfer.
    func nextChunk() async -> Result<[UInt8]?, HTTPError> {
        if Task.isCancelled {
            cancel(cancelledError())
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: ChunkContinuation) in
                let action = state.withLock { $0.nextChunk(continuation) }
                switch action {
                case .wait:
                    break
                case .chunk(let chunk, let resumeTransfer):
                    if resumeTransfer {
                        loop.send(.resume(self))
                    }
                    continuation.resume(returning: .success(chunk))
                case .end:
                    continuation.resume(returning: .success(nil))
                case .fail(let error):
                    continuation.resume(returning: .failure(error))
                }
            }
        } onCancel: {
            cancel(cancelledError())
        }
    }

    /// Gives up on the transfer: waiters fail with `error`, and a running transfer is aborted.
    func cancel(_ error: HTTPError) {
        let (completion, abort) = state.withLock { $0.cancel(error) }
        resume(completion)
        if abort {
            loop.send(.abort(self))
        }
    }

    // MARK: The transfer thread

    func deliverHead(_ head: HTTPResponseHead) {
        if let waiter = state.withLock({ $0.receivedHead(head) }) {
            waiter.resume(returning: .success(head))
        }
    }

    func deliverChunk(_ chunk: [UInt8]) -> Delivery {
        switch state.withLock({ $0.receivedChunk(chunk) }) {
        case .accepted:
            return .accepted
        case .deliver(let waiter, let chunk):
            waiter.resume(returning: .success(chunk))
            return .accepted
        case .pause:
            return .pause
        case .abort:
            return .abort
        }
    }

    func finish(_ error: HTTPError?) {
        resume(state.withLock { $0.finished(error) })
    }

    private func resume(_ completion: Machine.Completion) {
        if let (waiter, result) = completion.head {
            waiter.resume(returning: result)
        }
        if let (waiter, result) = completion.chunk {
            waiter.resume(returning: result)
        }
    }

    // MARK: Messages

    func cancelledError() -> HTTPError {
        HTTPError(code: .cancelled, message: "\(request.summary) was cancelled")
    }

    func droppedError() -> HTTPError {
        HTTPError(code: .cancelled, message: "\(request.summary) was cancelled: its response body was released unread")
    }

    func tooLargeError(limit: Int, declared: Int?) -> HTTPError {
        let size = declared.map { "declares \($0) bytes, more than" } ?? "is larger than"
        return HTTPError(
            code: .tooLarge,
            message: "the response body of \(request.summary) \(size) the \(limit)-byte limit; "
                + "raise the limit or stream the body")
    }
}
