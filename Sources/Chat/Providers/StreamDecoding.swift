import AgentTracing
import OrderedJSON

/// Turns one provider's SSE events into chat events: a value-type state machine per model call.
protocol ProviderStreamDecoder: Sendable {
    /// Whether the end marker (`[DONE]`, `message_stop`) or a fatal error event was seen; later events are
    /// ignored.
    var isComplete: Bool { get set }
    /// How many frames were skipped because they could not be read.
    var malformedFrames: Int { get }
    /// The gateway session the stream belongs to, once a frame named it.
    var sessionID: String? { get }
    /// The provider's id for this response (`chatcmpl-…`, `msg_…`), once a frame named it.
    var responseID: String? { get }
    /// The model that answered, as the provider names it (often more precise than the one asked for).
    var responseModel: String? { get }
    /// Handles one event.
    mutating func decode(_ event: ServerSentEvent, into events: inout [ChatEvent])
    /// What phrases errors and prices usage.
    var context: DecoderContext { get }
    /// Characters of answer text so far, for the `truncated` error's message.
    var textCharacters: Int { get }
    /// The event that ends a complete stream (`[DONE]`, `message_stop`), named in the `truncated` error.
    static var endMarker: String { get }
    /// Forgets tool calls still being assembled: calls whose arguments may be cut short are never run.
    mutating func dropPendingCalls()
}

extension ProviderStreamDecoder {
    /// Handles the end of the body: a stream that ended early becomes a `truncated` error, then `done`.
    mutating func finish(into events: inout [ChatEvent]) {
        guard !isComplete else { return }
        fail(context.truncated(textCharacters: textCharacters, marker: Self.endMarker), into: &events)
    }

    /// Handles a transport failure after the stream began (timeout, dropped connection): the error, then
    /// `done` with reason `error`.
    mutating func fail(_ error: ChatError, into events: inout [ChatEvent]) {
        guard !isComplete else { return }
        isComplete = true
        dropPendingCalls()
        events.append(.error(error))
        events.append(.done(finishReason: .error, sessionID: sessionID))
    }
}

/// What every decoder needs to phrase errors and price usage.
struct DecoderContext: Sendable {
    var kind: ProviderKind
    var model: String
    var pricing: ModelPricing?
    /// The configuration's ``ProviderConfiguration/serverTextScrubber``.
    var secrets: SecretScrubber?

    func scrub(_ text: String) -> String {
        secrets?.scrub(text) ?? text
    }

    func malformed(_ count: Int, _ reason: String) -> ChatEvent {
        .error(
            ChatError(
                kind: .malformedFrame,
                message: "skipped malformed frame #\(count) from \(kind.displayName) (\(reason)); the stream goes on"))
    }

    func truncated(textCharacters: Int, marker: String) -> ChatError {
        ChatError(
            kind: .truncated,
            message: "the stream from \(kind.displayName) stopped before \(marker), after \(textCharacters) characters "
                + "of text, which are kept; use /retry to ask again")
    }

    func usage(input: Int, output: Int, reportedCost: Double?) -> ChatUsage {
        ChatUsage(
            inputTokens: input, outputTokens: output,
            costUSD: reportedCost ?? pricing?.cost(inputTokens: input, outputTokens: output))
    }

    /// An error frame inside the stream (`{"error": {…}}` or Anthropic's `error` event).
    func streamError(_ error: JSONValue?) -> ChatError {
        let message = scrub(error?["message"]?.stringValue ?? "no message")
        let type = error?["type"]?.stringValue ?? error?["code"]?.stringValue ?? ""
        let status = error?["status"]?.intValue ?? error?["code"]?.intValue
        let kind: ChatError.Kind =
            switch (type, status) {
            case ("overloaded_error", _), ("api_error", _), ("server_error", _): .server
            case ("rate_limit_error", _), ("rate_limit_exceeded", _), (_, 429): .rateLimited
            case ("authentication_error", _), ("permission_error", _), (_, 401), (_, 403): .auth
            case ("not_found_error", _), ("model_not_found", _), (_, 404): .modelNotFound
            case (_, .some(500...)): .server
            default: .provider
            }
        let detail = type.isEmpty ? "" : " (\(type))"
        return ChatError(
            kind: kind,
            message: "\(self.kind.capitalizedName) reported an error mid-stream\(detail): \(message); "
                + "use /retry to try again",
            httpStatus: status)
    }
}

extension ProviderKind {
    fileprivate var capitalizedName: String {
        self == .gateway ? "The gateway" : displayName
    }
}

/// A tool call whose pieces are still arriving.
struct PartialToolCall: Sendable {
    var id: String
    var name: String
    var arguments: [UInt8] = []

    /// The finished call; argument text that is not JSON is kept as a string so validation refuses it.
    func complete() -> ToolCall {
        let trimmed = arguments.drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        let input: JSONValue
        if trimmed.isEmpty {
            input = .object([:])
        } else if let parsed = try? JSONParser.parse(bytes: arguments) {
            input = parsed
        } else {
            input = .string(String(decoding: arguments, as: UTF8.self))
        }
        return ToolCall(id: id, name: name, input: input)
    }
}
