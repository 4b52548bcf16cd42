/// An HTTP/1.1 and HTTP/2 client over libcurl, for JSON APIs and streamed (server-sent events) responses.
///
/// One client owns one thread that drives all its transfers with `curl_multi_poll`, and a connection cache
/// that its requests share; requests from any task are handed to that thread, so no blocking call runs on
/// Swift's cooperative pool. Cancelling the task that waits for a response, or reads its body, aborts the
/// transfer.
///
/// Prefer ``withHTTPClient(configuration:isolation:_:)``, which always shuts the client down. A client created
/// with ``init(configuration:)`` must be shut down with ``shutdown()``; releasing it without that stops its
/// thread too, but fails whatever was still running.
///
/// ```swift
/// try await withHTTPClient { client in
///     let response = try await client.execute(.postJSON(url: endpoint, json: body), maxBodyBytes: 1 << 20)
///     if response.status == 429 { retryIn(response.head.retryAfter()) }
/// }
/// ```
public final class HTTPClient: Sendable {
    /// Settings shared by every request of a client.
    public struct Configuration: Sendable {
        /// The `User-Agent` sent unless a request sets its own.
        public var userAgent: String
        /// A PEM file of CA certificates to trust instead of the system's, e.g. for a private collector.
        public var caBundlePath: String?
        /// Headers added to every request, computed on the requesting task just before the request is handed
        /// over, so task-local values (the current trace context, for a `traceparent`) are visible. A header
        /// the request already has is not replaced.
        public var additionalHeaders: (@Sendable (HTTPRequest) -> HTTPHeaders)?
        /// Body bytes buffered per streamed response before receiving pauses until the reader catches up.
        public var streamBufferBytes: Int

        /// Creates a configuration.
        public init(
            userAgent: String = "hostscope", caBundlePath: String? = nil,
            additionalHeaders: (@Sendable (HTTPRequest) -> HTTPHeaders)? = nil, streamBufferBytes: Int = 256 * 1024
        ) {
            self.userAgent = userAgent
            self.caBundlePath = caBundlePath
            self.additionalHeaders = additionalHeaders
            self.streamBufferBytes = streamBufferBytes
        }
    }

    /// The configuration the client was created with.
    public let configuration: Configuration
    private let loop: TransferLoop

    /// Creates a client and starts its transfer thread.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.loop = TransferLoop(threadName: "hostscope-http")
    }

    deinit {
        loop.requestShutdown()
    }

    /// Sends a request and returns as soon as the response head has arrived; the body follows as chunks.
    ///
    /// Throws before any I/O when the URL is not an absolute `http`/`https` URL or a header is malformed, and
    /// otherwise when no response head arrives (connect, TLS, idle or total timeout, cancellation). A non-2xx
    /// status is a response, not an error.
    public func stream(_ request: HTTPRequest) async throws(HTTPError) -> HTTPStreamingResponse {
        let prepared = try PreparedRequest(request, configuration: configuration)
        let buffer = max(configuration.streamBufferBytes, 1)
        let transfer = Transfer(request: prepared, loop: loop, highWater: buffer, lowWater: buffer / 4)
        // Wrapping the transfer first means any early exit below releases the body and so aborts the transfer.
        let body = HTTPBody(transfer: transfer)
        if Task.isCancelled {
            transfer.cancel(transfer.cancelledError())
        } else {
            loop.send(.start(transfer))
        }
        let head = try await transfer.awaitHead().get()
        return HTTPStreamingResponse(head: head, body: body)
    }

    /// Sends a request and collects its whole body, failing with `tooLarge` past `maxBodyBytes`.
    public func execute(_ request: HTTPRequest, maxBodyBytes: Int = 16 << 20) async throws(HTTPError) -> HTTPResponse {
        let response = try await stream(request)
        let body = try await response.body.collect(upTo: maxBodyBytes)
        return HTTPResponse(head: response.head, body: body)
    }

    /// Fails whatever is still running with `shutdown`, stops the transfer thread and waits for it to free
    /// its handles. Calling it again does nothing.
    public func shutdown() async {
        await loop.shutdown()
    }
}

/// Runs `body` with a new client and shuts the client down when `body` returns or throws.
public func withHTTPClient<Value, Failure: Error>(
    configuration: HTTPClient.Configuration = HTTPClient.Configuration(),
    isolation: isolated (any Actor)? = #isolation,
    _ body: (HTTPClient) async throws(Failure) -> Value
) async throws(Failure) -> Value {
    let client = HTTPClient(configuration: configuration)
    do {
        let value = try await body(client)
        await client.shutdown()
        return value
    } catch {
        await client.shutdown()
        throw error
    }
}
