import OrderedJSON

/// Decodes Anthropic Messages stream events.
///
/// `message_start` carries the input token count; each content block opens with `content_block_start` (text or
/// `tool_use` with id and name), grows with `content_block_delta` (`text_delta`, `input_json_delta` pieces of
/// the arguments) and closes with `content_block_stop`, where a tool call is complete. `message_delta` brings
/// the stop reason and the output token count, `message_stop` ends the stream; `ping`s are keep-alives and an
/// `error` event ends the stream with an error. Unknown event and delta types (thinking, citations) are
/// skipped, as the API's versioning policy asks of clients.
struct AnthropicStreamDecoder: ProviderStreamDecoder {
    let context: DecoderContext
    var isComplete = false
    private(set) var malformedFrames = 0
    private var toolBlocks: [Int: PartialToolCall] = [:]
    private var inputTokens = 0
    private var outputTokens = 0
    private var stopReason: FinishReason?
    private(set) var textCharacters = 0
    /// Anthropic has no sessions.
    let sessionID: String? = nil
    private(set) var responseID: String?
    private(set) var responseModel: String?

    init(context: DecoderContext) {
        self.context = context
    }

    mutating func decode(_ event: ServerSentEvent, into events: inout [ChatEvent]) {
        guard !isComplete else {
            return
        }
        let frame: JSONValue
        do {
            frame = try JSONParser.parse(bytes: event.dataBytes)
        } catch {
            malformedFrames += 1
            events.append(context.malformed(malformedFrames, error.description))
            return
        }
        guard frame.objectValue != nil else {
            malformedFrames += 1
            events.append(context.malformed(malformedFrames, "a frame that is not a JSON object"))
            return
        }
        let type = frame["type"]?.stringValue ?? event.type
        switch type {
        case "message_start":
            responseID = frame["message"]?["id"]?.stringValue
            responseModel = frame["message"]?["model"]?.stringValue
            let usage = frame["message"]?["usage"]
            inputTokens = Self.inputTokens(usage)
            outputTokens = usage?["output_tokens"]?.intValue ?? 0
        case "content_block_start":
            guard let index = frame["index"]?.intValue, let block = frame["content_block"] else {
                malformedFrames += 1
                events.append(context.malformed(malformedFrames, "content_block_start without index or block"))
                return
            }
            switch block["type"]?.stringValue {
            case "text":
                appendText(block["text"]?.stringValue, into: &events)
            case "tool_use":
                var call = PartialToolCall(
                    id: block["id"]?.stringValue ?? "toolu_\(index)", name: block["name"]?.stringValue ?? "")
                // The input normally arrives as deltas; a non-empty initial input is the whole of it.
                if let input = block["input"]?.objectValue, !input.isEmpty {
                    call.arguments = Array(JSONValue.object(input).jsonString.utf8)
                }
                toolBlocks[index] = call
            default:
                break
            }
        case "content_block_delta":
            guard let index = frame["index"]?.intValue, let delta = frame["delta"] else {
                malformedFrames += 1
                events.append(context.malformed(malformedFrames, "content_block_delta without index or delta"))
                return
            }
            switch delta["type"]?.stringValue {
            case "text_delta":
                appendText(delta["text"]?.stringValue, into: &events)
            case "input_json_delta":
                if let piece = delta["partial_json"]?.stringValue {
                    toolBlocks[index]?.arguments.append(contentsOf: piece.utf8)
                }
            default:
                break
            }
        case "content_block_stop":
            if let index = frame["index"]?.intValue, let call = toolBlocks.removeValue(forKey: index) {
                events.append(.toolCall(call.complete()))
            }
        case "message_delta":
            if let reason = frame["delta"]?["stop_reason"]?.stringValue {
                stopReason = .normalising(reason)
            }
            if let usage = frame["usage"] {
                outputTokens = usage["output_tokens"]?.intValue ?? outputTokens
                // Newer API versions repeat the final input counts here.
                if usage["input_tokens"]?.intValue != nil {
                    inputTokens = Self.inputTokens(usage)
                }
                events.append(.usage(context.usage(input: inputTokens, output: outputTokens, reportedCost: nil)))
            }
        case "message_stop":
            isComplete = true
            toolBlocks.removeAll()
            events.append(.done(finishReason: stopReason ?? .stop, sessionID: nil))
        case "error":
            isComplete = true
            toolBlocks.removeAll()
            events.append(.error(context.streamError(frame["error"])))
            events.append(.done(finishReason: .error, sessionID: nil))
        default:
            // `ping` and event types added after this was written.
            break
        }
    }

    static let endMarker = "message_stop"

    mutating func dropPendingCalls() {
        toolBlocks.removeAll()
    }

    private mutating func appendText(_ text: String?, into events: inout [ChatEvent]) {
        guard let text, !text.isEmpty else {
            return
        }
        textCharacters += text.count
        events.append(.text(text))
    }

    /// Input tokens including those written to and read from the prompt cache, which Anthropic counts apart.
    private static func inputTokens(_ usage: JSONValue?) -> Int {
        (usage?["input_tokens"]?.intValue ?? 0) + (usage?["cache_creation_input_tokens"]?.intValue ?? 0)
            + (usage?["cache_read_input_tokens"]?.intValue ?? 0)
    }
}
