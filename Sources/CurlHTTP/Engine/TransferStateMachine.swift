/// The life of one transfer as both sides see it: the curl thread feeding head, chunks and the outcome in,
/// and the requesting task taking the head and chunks out or cancelling.
///
/// A value type with no I/O: each step returns what the caller must do (resume a waiter, pause or resume the
/// transfer, abort it), and the caller does it outside the lock. The waiter types are generic so tests can
/// drive it with plain values.
struct TransferStateMachine<HeadWaiter, ChunkWaiter> {
    /// What the requesting side is told about the head.
    enum HeadAction {
        case wait
        case resume(HeadWaiter, Result<HTTPResponseHead, HTTPError>)
    }

    /// What the curl side does with a chunk it received.
    enum ChunkDecision {
        /// The chunk was buffered.
        case accepted
        /// The chunk goes straight to a waiting reader.
        case deliver(ChunkWaiter, [UInt8])
        /// The buffer is full: pause receiving and offer this chunk again later.
        case pause
        /// Nobody will read: abort the transfer.
        case abort
    }

    /// What the reading side gets when it asks for the next chunk.
    enum ChunkAction {
        case wait
        /// A buffered chunk; `resumeTransfer` says the transfer was paused and the buffer has drained enough.
        case chunk([UInt8], resumeTransfer: Bool)
        case end
        case fail(HTTPError)
    }

    /// Waiters to resume once a transfer has ended.
    struct Completion {
        var head: (HeadWaiter, Result<HTTPResponseHead, HTTPError>)?
        var chunk: (ChunkWaiter, Result<[UInt8]?, HTTPError>)?
    }

    private enum End {
        case complete
        case failed(HTTPError)
    }

    /// Receiving pauses once this many bytes wait to be read.
    let highWater: Int
    /// A paused transfer resumes once the buffer has drained to this many bytes.
    let lowWater: Int

    private(set) var head: HTTPResponseHead?
    private var headWaiter: HeadWaiter?
    private var chunks: [[UInt8]] = []
    private var firstChunk = 0
    private(set) var bufferedBytes = 0
    private var chunkWaiter: ChunkWaiter?
    private var end: End?
    private(set) var isPaused = false

    init(highWater: Int = 256 * 1024, lowWater: Int = 64 * 1024) {
        self.highWater = highWater
        self.lowWater = lowWater
    }

    /// Whether the transfer still needs the network: neither finished nor given up by its reader.
    var isRunning: Bool { end == nil }

    // MARK: The requesting side

    /// The requester waits for the head.
    mutating func waitForHead(_ waiter: HeadWaiter) -> HeadAction {
        if let head {
            return .resume(waiter, .success(head))
        }
        switch end {
        case .failed(let error):
            return .resume(waiter, .failure(error))
        case .complete:
            return .resume(
                waiter,
                .failure(HTTPError(code: .internalError, message: "the transfer ended without a response head")))
        case nil:
            headWaiter = waiter
            return .wait
        }
    }

    /// The reader asks for the next chunk.
    mutating func nextChunk(_ waiter: ChunkWaiter) -> ChunkAction {
        if firstChunk < chunks.count {
            let chunk = chunks[firstChunk]
            firstChunk += 1
            bufferedBytes -= chunk.count
            if firstChunk == chunks.count {
                chunks.removeAll(keepingCapacity: true)
                firstChunk = 0
            }
            let resume = isPaused && bufferedBytes <= lowWater
            if resume {
                isPaused = false
            }
            return .chunk(chunk, resumeTransfer: resume)
        }
        switch end {
        case .complete:
            return .end
        case .failed(let error):
            return .fail(error)
        case nil:
            chunkWaiter = waiter
            return .wait
        }
    }

    /// The requester gives up (task cancelled, body dropped, body too large). Returns the waiters to fail and
    /// whether the transfer was still running and must be aborted.
    mutating func cancel(_ error: HTTPError) -> (Completion, abort: Bool) {
        let wasRunning = end == nil
        if case .failed = end {
            return (Completion(), false)
        }
        end = .failed(error)
        chunks.removeAll()
        firstChunk = 0
        bufferedBytes = 0
        isPaused = false
        return (takeWaiters(error), wasRunning)
    }

    // MARK: The curl side

    /// The response head is complete; returns the requester to resume with it, if one waits.
    mutating func receivedHead(_ received: HTTPResponseHead) -> HeadWaiter? {
        guard head == nil, end == nil else {
            return nil
        }
        head = received
        defer { headWaiter = nil }
        return headWaiter
    }

    /// A chunk of body arrived.
    mutating func receivedChunk(_ chunk: [UInt8]) -> ChunkDecision {
        guard end == nil else {
            return .abort
        }
        if let waiter = chunkWaiter {
            chunkWaiter = nil
            return .deliver(waiter, chunk)
        }
        if bufferedBytes >= highWater {
            isPaused = true
            return .pause
        }
        chunks.append(chunk)
        bufferedBytes += chunk.count
        return .accepted
    }

    /// The transfer ended, successfully (`nil`) or not. Buffered chunks stay readable before the outcome.
    mutating func finished(_ error: HTTPError?) -> Completion {
        guard end == nil else {
            return Completion()
        }
        if let error {
            end = .failed(error)
            return takeWaiters(error)
        }
        end = .complete
        var completion = Completion()
        if let waiter = headWaiter {
            headWaiter = nil
            completion.head = (
                waiter,
                .failure(HTTPError(code: .internalError, message: "the transfer ended without a response head"))
            )
        }
        if let waiter = chunkWaiter {
            chunkWaiter = nil
            completion.chunk = (waiter, .success(nil))
        }
        return completion
    }

    private mutating func takeWaiters(_ error: HTTPError) -> Completion {
        var completion = Completion()
        if let waiter = headWaiter {
            headWaiter = nil
            completion.head = (waiter, .failure(error))
        }
        if let waiter = chunkWaiter {
            chunkWaiter = nil
            completion.chunk = (waiter, .failure(error))
        }
        return completion
    }
}
