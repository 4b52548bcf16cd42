public import CurlHTTP
import OrderedJSON

/// One language model provider reached over HTTP: builds its requests and reads its streamed answers as
/// provider-neutral ``ChatEvent``s.
///
/// ```swift
/// let provider = ChatProvider(ProviderConfiguration(kind: .anthropic, apiKey: key))
/// for await event in provider.stream(request, using: client) {
///     print(event.jsonLine)
/// }
/// ```
public struct ChatProvider: Sendable {
    /// Where and how to reach the provider.
    public var configuration: ProviderConfiguration

    /// Creates a provider.
    public init(_ configuration: ProviderConfiguration) {
        self.configuration = configuration
    }

    /// The wire protocol.
    public var kind: ProviderKind { configuration.kind }

    /// Whether the provider runs tools itself and streams their calls and results (the gateway), so the
    /// session must not run them again.
    public var runsToolsServerSide: Bool { kind == .gateway }

    /// The HTTP request for one streamed model call.
    public func httpRequest(for request: ChatRequest) throws(ChatError) -> HTTPRequest {
        guard configuration.baseURL.hasPrefix("http://") || configuration.baseURL.hasPrefix("https://") else {
            let what = configuration.baseURL.isEmpty ? "no base URL" : "the base URL \"\(configuration.baseURL)\""
            throw ChatError(
                kind: .configuration,
                message: "\(kind.displayName) has \(what); give --base-url as an http:// or https:// URL")
        }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Accept", value: "text/event-stream")
        let body: JSONValue
        switch kind {
        case .anthropic:
            if let key = configuration.apiKey {
                headers.add(name: "x-api-key", value: key.secret)
            }
            headers.add(name: "anthropic-version", value: configuration.anthropicVersion)
            body = RequestEncoding.anthropic(request)
        case .openAI, .openRouter, .gateway:
            if let key = configuration.apiKey {
                headers.add(name: "Authorization", value: "Bearer \(key.secret)")
            }
            body = RequestEncoding.openAI(request, kind: kind)
        }
        for (name, value) in configuration.extraHeaders {
            headers.replaceOrAdd(name: name, value: value)
        }
        return HTTPRequest.postJSON(
            url: configuration.endpointURL, json: body.jsonString, headers: headers, timeouts: configuration.timeouts)
    }

    /// The events of one model call. The request is sent when iteration starts; every failure, HTTP or
    /// in-stream, becomes an `error` event, and the sequence always ends with one `done` (unless the reading
    /// task is cancelled, which aborts the transfer and ends it with `done` reason `stopped`).
    ///
    /// `headers` are added to the request, e.g. a `traceparent` naming the span of the call.
    public func stream(_ request: ChatRequest, using client: HTTPClient, headers: HTTPHeaders = [:]) -> ChatEventStream
    {
        ChatEventStream(provider: self, request: request, client: client, headers: headers)
    }

    func makeDecoder(model: String) -> any ProviderStreamDecoder {
        let context = DecoderContext(
            kind: kind, model: model, pricing: configuration.pricing, secrets: configuration.serverTextScrubber)
        switch kind {
        case .anthropic: return AnthropicStreamDecoder(context: context)
        case .openAI, .openRouter, .gateway: return OpenAIStreamDecoder(context: context)
        }
    }
}

/// The events of one streamed model call; see ``ChatProvider/stream(_:using:)``.
///
/// Reading happens on the iterating task: the HTTP body, the SSE parser and the provider's decoder are driven
/// from `next()`, so there is no hand-off between tasks on the way to the first token.
public struct ChatEventStream: AsyncSequence, Sendable {
    /// A chat event.
    public typealias Element = ChatEvent
    /// Failures are events, not thrown errors.
    public typealias Failure = Never

    let provider: ChatProvider
    let request: ChatRequest
    let client: HTTPClient
    let headers: HTTPHeaders

    /// Creates an iterator; each iterator sends its own request.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: self)
    }

    /// Sends the request on the first `next()` and yields events as the body arrives.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private enum Phase {
            case notStarted
            case streaming(HTTPBody.AsyncIterator)
            case finished
        }

        private let stream: ChatEventStream
        private var phase = Phase.notStarted
        private var parser = SSEParser()
        private var decoder: any ProviderStreamDecoder
        private var pending: [ChatEvent] = []
        private var pendingIndex = 0

        init(stream: ChatEventStream) {
            self.stream = stream
            self.decoder = stream.provider.makeDecoder(model: stream.request.model)
        }

        /// How many frames were skipped as malformed so far.
        public var malformedFrames: Int { decoder.malformedFrames }

        /// The gateway session named by the stream so far, before `done` repeats it.
        public var sessionID: String? { decoder.sessionID }

        /// The provider's id for the response, once the stream named it.
        public var responseID: String? { decoder.responseID }

        /// The model that answered, once the stream named it.
        public var responseModel: String? { decoder.responseModel }

        /// The next event, or `nil` after `done`.
        public mutating func next() async -> ChatEvent? {
            await next(isolation: nil)
        }

        /// The next event, or `nil` after `done`.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> ChatEvent? {
            while true {
                if pendingIndex < pending.count {
                    let event = pending[pendingIndex]
                    pendingIndex += 1
                    if pendingIndex == pending.count {
                        pending.removeAll(keepingCapacity: true)
                        pendingIndex = 0
                    }
                    return event
                }
                switch phase {
                case .finished:
                    return nil
                case .notStarted:
                    await start(isolation: actor)
                case .streaming(var body):
                    let chunk: [UInt8]?
                    do {
                        chunk = try await body.next(isolation: actor)
                    } catch {
                        phase = .finished
                        if error.code == .cancelled || Task.isCancelled {
                            pending.append(.done(finishReason: .stopped, sessionID: nil))
                        } else {
                            decoder.fail(failure.error(duringStream: error), into: &pending)
                        }
                        continue
                    }
                    guard let chunk else {
                        phase = .finished
                        parser.finish()
                        decoder.finish(into: &pending)
                        continue
                    }
                    phase = .streaming(body)
                    consume(chunk)
                    if decoder.isComplete {
                        // Nothing after the end marker matters; dropping the body ends the transfer.
                        phase = .finished
                    }
                }
            }
        }

        private var failure: HTTPFailure {
            HTTPFailure(configuration: stream.provider.configuration, model: stream.request.model)
        }

        private mutating func start(isolation actor: isolated (any Actor)?) async {
            var request: HTTPRequest
            do {
                request = try stream.provider.httpRequest(for: stream.request)
                for (name, value) in stream.headers {
                    request.headers.replaceOrAdd(name: name, value: value)
                }
            } catch {
                finish(with: error)
                return
            }
            let response: HTTPStreamingResponse
            do {
                response = try await stream.client.stream(request)
            } catch {
                if error.code == .cancelled || Task.isCancelled {
                    phase = .finished
                    pending.append(.done(finishReason: .stopped, sessionID: nil))
                } else {
                    finish(with: failure.error(beforeResponse: error))
                }
                return
            }
            guard response.head.isSuccess else {
                let body =
                    (try? await response.body.collect(upTo: stream.provider.configuration.maxErrorBodyBytes)) ?? []
                finish(with: failure.error(for: response.head, body: body))
                return
            }
            phase = .streaming(response.body.makeAsyncIterator())
        }

        private mutating func finish(with error: ChatError) {
            phase = .finished
            pending.append(.error(error))
            pending.append(.done(finishReason: .error, sessionID: nil))
        }

        private mutating func consume(_ chunk: [UInt8]) {
            // The parser is moved out for the call so that the handler may mutate the decoder and the queue
            // without overlapping access to `self` (and without copying the parser's buffers).
            var parser = SSEParser()
            swap(&parser, &self.parser)
            parser.parse(chunk) { event in
                decoder.decode(event, into: &pending)
            }
            swap(&parser, &self.parser)
        }
    }
}
