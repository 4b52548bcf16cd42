import CLibSSH2
import Synchronization
public import ValueFormats

/// A file's bytes from its current position to its end, read ahead by the session's thread.
///
/// A loop of ``SFTPFile/read(maxBytes:timeout:)`` calls lets libssh2 read the socket only
/// while a call is in progress: between one call's return and the next call's arrival on the
/// session's I/O thread, the server's answers wait in the socket. A stream instead keeps reading
/// on that thread into buffers of its own and hands full chunks over; it stops reading only
/// when `maximumBufferedChunks` wait for the consumer (the server is then held back by the SSH
/// window, so memory stays bounded).
///
/// Between chunks the stream leaves the SFTP subsystem free, so other SFTP requests on the same
/// session are not held up for the length of a download.
public final class SFTPReadStream: Sendable {
    private struct State {
        var chunks: [SFTPReadChunk] = []
        var head = 0
        var ended: Result<Void, any Error>?
        var waiter: CheckedContinuation<SFTPReadChunk?, any Error>?
        var producerPaused = false

        var queued: Int { chunks.count - head }
    }

    public let path: RemotePath
    private let state = Lock(State())
    private let maximumBufferedChunks: Int
    private let loop: SessionLoop
    private let operation = OperationBox()

    init(path: RemotePath, loop: SessionLoop, maximumBufferedChunks: Int) {
        self.path = path
        self.loop = loop
        self.maximumBufferedChunks = max(1, maximumBufferedChunks)
    }

    deinit {
        operation.cancel()
        loop.wake()
    }

    /// The next chunk, or `nil` at the end of the file. Throws what ended the stream (the
    /// connection broke, the read failed, the stream went without data past its timeout).
    public func next() async throws -> SFTPReadChunk? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<SFTPReadChunk?, any Error>) in
                enum Outcome {
                    case chunk(SFTPReadChunk, wake: Bool)
                    case ended(Result<Void, any Error>)
                    case wait
                }
                let outcome = state.withLock { state -> Outcome in
                    if state.head < state.chunks.count {
                        let chunk = state.chunks[state.head]
                        state.head += 1
                        if state.head == state.chunks.count {
                            state.chunks.removeAll(keepingCapacity: true)
                            state.head = 0
                        }
                        let wake = state.producerPaused && state.queued < maximumBufferedChunks
                        if wake { state.producerPaused = false }
                        return .chunk(chunk, wake: wake)
                    }
                    if let ended = state.ended { return .ended(ended) }
                    if Task.isCancelled { return .ended(.failure(CancellationError())) }
                    state.waiter = continuation
                    return .wait
                }
                switch outcome {
                case .chunk(let chunk, let wake):
                    if wake { loop.wake() }
                    continuation.resume(returning: chunk)
                case .ended(.success):
                    continuation.resume(returning: nil)
                case .ended(.failure(let error)):
                    continuation.resume(throwing: error)
                case .wait:
                    break
                }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Stops reading ahead; a waiting ``next()`` throws `CancellationError`.
    public func cancel() {
        operation.cancel()
        loop.wake()
        let waiter = state.withLock { state -> CheckedContinuation<SFTPReadChunk?, any Error>? in
            if state.ended == nil { state.ended = .failure(CancellationError()) }
            // What was read ahead is not wanted any more: its memory goes back now.
            state.chunks = []
            state.head = 0
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(throwing: CancellationError())
    }

    func start(_ readOperation: SFTPReadStreamOperation) {
        operation.set(readOperation)
        loop.submit(readOperation)
    }

    // MARK: Producer side (the session's I/O thread)

    /// Hands a chunk to the consumer; false when the consumer has enough waiting and the
    /// producer should pause until ``next()`` wakes the loop.
    func deliver(_ chunk: SFTPReadChunk) -> Bool {
        let (waiter, keepReading) = state.withLock { state -> (CheckedContinuation<SFTPReadChunk?, any Error>?, Bool) in
            guard state.ended == nil else { return (nil, false) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, true)
            }
            state.chunks.append(chunk)
            let full = state.queued >= maximumBufferedChunks
            if full { state.producerPaused = true }
            return (nil, !full)
        }
        waiter?.resume(returning: chunk)
        return keepReading
    }

    /// Whether the consumer has taken enough chunks for reading to go on.
    var consumerHasRoom: Bool {
        state.withLock { !$0.producerPaused }
    }

    func finish(_ result: Result<Void, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<SFTPReadChunk?, any Error>? in
            if state.ended == nil { state.ended = result }
            defer { state.waiter = nil }
            return state.waiter
        }
        switch result {
        case .success: waiter?.resume(returning: nil)
        case .failure(let error): waiter?.resume(throwing: error)
        }
    }
}

/// Bytes of a file read by an ``SFTPReadStream``. Its memory goes back to the stream's pool
/// when the last copy of the chunk is dropped.
public struct SFTPReadChunk: Sendable {
    let buffer: SFTPChunkBuffer
    /// The number of bytes.
    public let count: Int

    /// Calls `body` with the bytes.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: buffer.pointer, count: count))
    }

    /// The bytes as an array (a copy).
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
}

/// Recycled chunk memory: downloads would otherwise fault in fresh pages for every chunk.
final class SFTPChunkPool: Sendable {
    let chunkCapacity: Int
    private let free = Lock<[FreeBlock]>([])
    private let keep: Int

    init(chunkCapacity: Int, keep: Int) {
        self.chunkCapacity = chunkCapacity
        self.keep = keep
    }

    deinit {
        free.withLock { blocks in blocks.forEach { $0.pointer.deallocate() } }
    }

    func take() -> SFTPChunkBuffer {
        let pointer =
            free.withLock { $0.popLast()?.pointer }
            ?? UnsafeMutableRawPointer.allocate(byteCount: chunkCapacity, alignment: 16)
        return SFTPChunkBuffer(pointer: pointer, pool: self)
    }

    func give(_ pointer: UnsafeMutableRawPointer) {
        let block = FreeBlock(pointer: pointer)
        let kept = free.withLock { blocks in
            guard blocks.count < keep else { return false }
            blocks.append(block)
            return true
        }
        if !kept { pointer.deallocate() }
    }
}

/// Memory in the pool's free list.
// @unchecked Sendable: a free block belongs to the pool alone; nothing else holds its address.
private struct FreeBlock: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
}

/// One chunk's memory, returned to its pool in `deinit`.
// @unchecked Sendable: the session's I/O thread writes the bytes before the chunk is handed over
// (through the stream's Lock); afterwards they are only read.
final class SFTPChunkBuffer: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
    private let pool: SFTPChunkPool

    init(pointer: UnsafeMutableRawPointer, pool: SFTPChunkPool) {
        self.pointer = pointer
        self.pool = pool
    }

    deinit { pool.give(pointer) }
}

/// The session-thread side of an ``SFTPReadStream``.
///
/// libssh2 1.10 keeps a read's progress in the SFTP session, so once `libssh2_sftp_read`
/// returned EAGAIN it must be called again before any other SFTP call: the operation holds the
/// SFTP subsystem from such a call until the read returns, and lets it go between reads.
// @unchecked Sendable: everything but `cancellation` is used only on the session's I/O thread.
final class SFTPReadStreamOperation: LoopOperation, @unchecked Sendable {
    let wantsChannel = false
    let holdsChannel = false
    private unowned let loop: SessionLoop
    /// Weak: a consumer that drops the stream cancels the reading (the stream's `deinit`).
    private weak var stream: SFTPReadStream?
    private let path: RemotePath
    private let handleID: UInt64
    private let pool: SFTPChunkPool
    /// Bytes offered to each `libssh2_sftp_read`; libssh2 keeps up to four times this in flight.
    private let readSize: Int
    private let idleTimeout: Duration
    private let cancellation = CancellationFlag()
    private var current: SFTPChunkBuffer?
    private var filled = 0
    /// When the first bytes of `current` arrived: a chunk is handed over after at most
    /// ``partialChunkAge`` even if not full, so a slow link still shows progress.
    private var currentStarted = ContinuousClock.now
    private static let partialChunkAge = Duration.milliseconds(250)
    /// A read returned EAGAIN: libssh2 holds it half done.
    private var midRead = false
    private var expired = false
    private var lastProgress = ContinuousClock.now
    private var waitingForConsumer = false

    init(
        loop: SessionLoop, stream: SFTPReadStream, handleID: UInt64, readSize: Int, chunkCapacity: Int,
        bufferedChunks: Int, idleTimeout: Duration
    ) {
        self.loop = loop
        self.stream = stream
        self.path = stream.path
        self.handleID = handleID
        self.readSize = readSize
        self.idleTimeout = idleTimeout
        pool = SFTPChunkPool(chunkCapacity: max(chunkCapacity, readSize), keep: bufferedChunks + 2)
    }

    /// No deadline while the consumer holds the stream back: a slow disk is not a slow server.
    var deadline: ContinuousClock.Instant? { waitingForConsumer ? nil : lastProgress + idleTimeout }

    var isWaitingForConsumer: Bool { waitingForConsumer && !midRead }

    func requestCancel() { cancellation.set() }

    func hasQueuedData() -> Bool { midRead && loop.sftpHasQueuedData() }

    func expire() { expired = true }

    func abandon(_ error: SSHError) {
        loop.releaseSFTP(self)
        stream?.finish(.failure(error))
    }

    func advance(_ session: OpaquePointer) -> Advance {
        let name = loop.options.displayName
        if !midRead {
            if cancellation.isSet {
                loop.releaseSFTP(self)
                stream?.finish(.failure(CancellationError()))
                return .finished
            }
            if expired {
                loop.releaseSFTP(self)
                stream?.finish(
                    .failure(SSHError(.timeout, "\(name): no data for \(path) within \(idleTimeout) of reading")))
                return .finished
            }
            if waitingForConsumer {
                guard stream?.consumerHasRoom ?? true else { return .blocked }
                waitingForConsumer = false
                lastProgress = .now
            }
        } else if expired {
            return .sessionBroken(
                SSHError(
                    .timeout, "\(name): SFTP read of \(path) timed out; the session is closed and will be reopened"))
        }
        guard loop.claimSFTP(self) else { return .blocked }
        let context: SFTPContext
        switch loop.sftpContext(session) {
        case .pending: return .blocked
        case .failed(let error):
            loop.releaseSFTP(self)
            stream?.finish(.failure(error))
            return .finished
        case .ready(let ready): context = ready
        }
        guard let handle = context.handle(handleID) else {
            loop.releaseSFTP(self)
            stream?.finish(.failure(SSHError(.sftp, "\(name): file \(path) is already closed")))
            return .finished
        }
        let chunkCapacity = pool.chunkCapacity
        var progressed = false
        // A bounded number of reads per turn keeps other operations of the session moving.
        for _ in 0..<64 {
            let buffer = current ?? pool.take()
            current = buffer
            let room = min(readSize, chunkCapacity - filled)
            let count = libssh2_sftp_read(
                handle, buffer.pointer.advanced(by: filled).assumingMemoryBound(to: CChar.self), room)
            if count == LibSSH2.eagain {
                midRead = true
                return progressed ? .progressed : .blocked
            }
            midRead = false
            loop.releaseSFTP(self)
            if count < 0 {
                current = nil
                switch context.failure("read", path) as SFTPAttempt<Void> {
                case .broken(let error): return .sessionBroken(error)
                case .failed(let error): stream?.finish(.failure(error))
                case .again, .done: stream?.finish(.failure(SSHError(.sftp, "\(name): cannot read \(path)")))
                }
                return .finished
            }
            if cancellation.isSet {
                current = nil
                stream?.finish(.failure(CancellationError()))
                return .finished
            }
            progressed = true
            let now = ContinuousClock.now
            lastProgress = now
            if filled == 0 { currentStarted = now }
            filled += count
            if count == 0 {
                if filled > 0 { _ = stream?.deliver(SFTPReadChunk(buffer: buffer, count: filled)) }
                current = nil
                filled = 0
                stream?.finish(.success(()))
                return .finished
            }
            // Hand the chunk over once another read of `readSize` no longer fits, so every read
            // offers libssh2 its full size (its read-ahead is a multiple of what it is offered),
            // or once it has been filling for a while (a slow link).
            if chunkCapacity - filled < readSize || now - currentStarted >= Self.partialChunkAge {
                let chunk = SFTPReadChunk(buffer: buffer, count: filled)
                current = nil
                filled = 0
                if !(stream?.deliver(chunk) ?? false) {
                    waitingForConsumer = true
                    return .progressed
                }
            }
            guard loop.claimSFTP(self) else { return .progressed }
        }
        return .progressed
    }
}

extension SFTPFile {
    /// Streams the file from its current position to its end (see ``SFTPReadStream``).
    ///
    /// - Parameters:
    ///   - readSize: bytes offered to each libssh2 read; libssh2 keeps up to four times as
    ///     much requested ahead (at most 8 MiB).
    ///   - chunkBytes: the most bytes in one chunk; at least `readSize`.
    ///   - bufferedChunks: chunks read ahead of the consumer before reading pauses.
    ///   - idleTimeout: how long the server may send nothing before the stream fails.
    public func stream(
        readSize: Int = 2 << 20, chunkBytes: Int = 4 << 20, bufferedChunks: Int = 4,
        idleTimeout: Duration = .seconds(60)
    ) -> SFTPReadStream {
        let loop = session.loop
        let stream = SFTPReadStream(path: path, loop: loop, maximumBufferedChunks: bufferedChunks)
        stream.start(
            SFTPReadStreamOperation(
                loop: loop, stream: stream, handleID: id, readSize: max(1, readSize),
                chunkCapacity: max(chunkBytes, readSize), bufferedChunks: bufferedChunks, idleTimeout: idleTimeout))
        return stream
    }
}
