import OrderedJSON

/// Decodes OpenAI Chat Completions chunks, OpenRouter's variant of them, and the gateway's frames.
///
/// Text arrives as `choices[0].delta.content`; tool calls as `delta.tool_calls` entries keyed by `index`, the
/// first carrying `id` and `function.name`, later ones pieces of `function.arguments`, several calls
/// interleaved. Calls are emitted whole, in index order, once `finish_reason` (or `[DONE]`) says they are
/// complete. Usage comes in a last chunk with empty `choices`. The gateway adds `session_id` to its chunks and
/// sends `tool_use`, `tool_result` and `usage` objects of its own.
struct OpenAIStreamDecoder: ProviderStreamDecoder {
    let context: DecoderContext
    var isComplete = false
    private(set) var malformedFrames = 0
    private var finishReason: FinishReason?
    private var pendingCalls: [Int: PartialToolCall] = [:]
    private var callOrder: [Int] = []
    private(set) var textCharacters = 0
    private(set) var sessionID: String?
    private(set) var responseID: String?
    private(set) var responseModel: String?

    init(context: DecoderContext) {
        self.context = context
    }

    mutating func decode(_ event: ServerSentEvent, into events: inout [ChatEvent]) {
        guard !isComplete else {
            return
        }
        if event.isDoneSentinel {
            flushToolCalls(into: &events)
            isComplete = true
            events.append(.done(finishReason: finishReason ?? .stop, sessionID: sessionID))
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
        guard case .object(let object) = frame else {
            malformedFrames += 1
            events.append(context.malformed(malformedFrames, "a frame that is not a JSON object"))
            return
        }
        if let error = object["error"], !error.isNull {
            isComplete = true
            events.append(.error(context.streamError(error)))
            events.append(.done(finishReason: .error, sessionID: sessionID))
            return
        }
        if let session = object["session_id"]?.stringValue {
            sessionID = session
        }
        // Every chunk of a Chat Completions stream repeats the response's id and model; the first is kept.
        if responseID == nil, let id = object["id"]?.stringValue, !id.isEmpty,
            object["object"]?.stringValue != "tool_use"
        {
            responseID = id
        }
        if responseModel == nil, let model = object["model"]?.stringValue, !model.isEmpty {
            responseModel = model
        }
        switch object["object"]?.stringValue {
        case "tool_use" where context.kind == .gateway:
            decodeGatewayToolUse(object, into: &events)
        case "tool_result" where context.kind == .gateway:
            decodeGatewayToolResult(object, into: &events)
        case "usage" where context.kind == .gateway:
            decodeGatewayUsage(object, into: &events)
        default:
            decodeChunk(object, into: &events)
        }
    }

    static let endMarker = "[DONE]"

    mutating func dropPendingCalls() {
        pendingCalls.removeAll()
    }

    private mutating func decodeChunk(_ object: JSONObject, into events: inout [ChatEvent]) {
        if let choice = object["choices"]?[0] {
            if let delta = choice["delta"] {
                if let content = delta["content"]?.stringValue, !content.isEmpty {
                    textCharacters += content.count
                    events.append(.text(content))
                }
                if let calls = delta["tool_calls"]?.arrayValue {
                    for (position, call) in calls.enumerated() {
                        accumulate(call, position: position)
                    }
                }
            }
            if let reason = choice["finish_reason"]?.stringValue {
                finishReason = .normalising(reason)
                flushToolCalls(into: &events)
            }
        }
        if let usage = object["usage"], case .object = usage {
            let input = usage["prompt_tokens"]?.intValue ?? 0
            let output = usage["completion_tokens"]?.intValue ?? 0
            events.append(.usage(context.usage(input: input, output: output, reportedCost: usage["cost"]?.doubleValue)))
        }
    }

    private mutating func accumulate(_ call: JSONValue, position: Int) {
        // Some compatible servers send each call whole and without an index: each such entry is a new call.
        let index = call["index"]?.intValue ?? (callOrder.max().map { $0 + 1 } ?? position)
        let function = call["function"]
        if pendingCalls[index] == nil {
            pendingCalls[index] = PartialToolCall(id: "", name: "")
            callOrder.append(index)
        }
        if let id = call["id"]?.stringValue, !id.isEmpty {
            pendingCalls[index]?.id = id
        }
        if let name = function?["name"]?.stringValue, !name.isEmpty {
            pendingCalls[index]?.name += name
        }
        if let arguments = function?["arguments"] {
            switch arguments {
            case .string(let text):
                pendingCalls[index]?.arguments.append(contentsOf: text.utf8)
            case .object:
                // Ollama sends the arguments as an object rather than JSON text.
                pendingCalls[index]?.arguments.append(contentsOf: arguments.jsonString.utf8)
            default:
                break
            }
        }
    }

    private mutating func flushToolCalls(into events: inout [ChatEvent]) {
        for index in callOrder.sorted() {
            guard var call = pendingCalls[index] else {
                continue
            }
            if call.id.isEmpty {
                call.id = "call_\(index)"
            }
            events.append(.toolCall(call.complete()))
        }
        pendingCalls.removeAll()
        callOrder.removeAll()
    }

    private mutating func decodeGatewayToolUse(_ object: JSONObject, into events: inout [ChatEvent]) {
        guard let id = object["id"]?.stringValue, let name = object["name"]?.stringValue else {
            malformedFrames += 1
            events.append(context.malformed(malformedFrames, "a tool_use frame without id or name"))
            return
        }
        events.append(.toolCall(ToolCall(id: id, name: name, input: object["input"] ?? .object([:]))))
    }

    private mutating func decodeGatewayToolResult(_ object: JSONObject, into events: inout [ChatEvent]) {
        guard let id = object["tool_id"]?.stringValue else {
            malformedFrames += 1
            events.append(context.malformed(malformedFrames, "a tool_result frame without tool_id"))
            return
        }
        let content: String =
            switch object["content"] {
            case .string(let text): text
            case nil, .null: ""
            case let other?: other.jsonString
            }
        events.append(
            .toolResult(
                ToolResult(
                    id: id, name: object["name"]?.stringValue ?? "", isError: object["is_error"]?.boolValue ?? false,
                    durationMs: object["duration_ms"]?.doubleValue, exitCode: object["exit_code"]?.intValue,
                    output: content)))
    }

    private mutating func decodeGatewayUsage(_ object: JSONObject, into events: inout [ChatEvent]) {
        let input = object["input_tokens"]?.intValue ?? 0
        let output = object["output_tokens"]?.intValue ?? 0
        events.append(
            .usage(context.usage(input: input, output: output, reportedCost: object["total_cost"]?.doubleValue)))
    }
}
