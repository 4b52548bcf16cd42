/// A response body as an asynchronous sequence of byte chunks, delivered as they arrive from the network.
///
/// The sequence is single-pass: each chunk is delivered once, to whichever iterator asks first. It ends
/// when the body is complete and throws an ``HTTPError`` when the transfer fails (`closed` when the server
/// drops the connection mid-body, `timeout` when it falls silent); chunks that arrived before the failure are
/// delivered first. Cancelling the reading task cancels the transfer, and so does releasing the body before it
/// ends. A reader slower than the server pauses the transfer after a bounded amount of buffering rather than
/// letting memory grow.
public final class HTTPBody: AsyncSequence, Sendable {
    /// A chunk of body bytes.
    public typealias Element = [UInt8]
    /// Reading fails with the transfer's error.
    public typealias Failure = HTTPError

    let transfer: Transfer

    init(transfer: Transfer) {
        self.transfer = transfer
    }

    deinit {
        // Nobody can read the rest any more, so keep neither the connection nor the buffered bytes.
        transfer.cancel(transfer.droppedError())
    }

    /// Creates an iterator; iterating a second time continues where the first stopped.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(body: self)
    }

    /// Reads chunks of a body in arrival order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        // Holding the body keeps the transfer alive while someone may still read.
        let body: HTTPBody

        /// The next chunk, or `nil` at the end of the body.
        public mutating func next() async throws(HTTPError) -> [UInt8]? {
            try await body.transfer.nextChunk().get()
        }

        /// The next chunk, or `nil` at the end of the body.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(HTTPError) -> [UInt8]? {
            try await body.transfer.nextChunk().get()
        }
    }

    /// Reads the rest of the body into memory, failing with `tooLarge` (and cancelling the transfer) as soon
    /// as it would exceed `maxBytes`, or before reading when `Content-Length` already says so.
    public func collect(upTo maxBytes: Int) async throws(HTTPError) -> [UInt8] {
        // A HEAD answer, a 204 or a 304 declares the length of a body it does not carry.
        let carriesBody =
            transfer.request.method != .head && ![204, 304].contains(transfer.head?.status ?? 200)
        if carriesBody, let declared = transfer.head?.contentLength, declared > maxBytes {
            let error = transfer.tooLargeError(limit: maxBytes, declared: declared)
            transfer.cancel(error)
            throw error
        }
        var bytes: [UInt8] = []
        while let chunk = try await transfer.nextChunk().get() {
            guard bytes.count + chunk.count <= maxBytes else {
                let error = transfer.tooLargeError(limit: maxBytes, declared: nil)
                transfer.cancel(error)
                throw error
            }
            bytes.append(contentsOf: chunk)
        }
        return bytes
    }
}
