import OrderedJSON

/// Request bodies in each provider's wire format.
enum RequestEncoding {
    /// An OpenAI Chat Completions body (also OpenRouter's and, without tools, the gateway's).
    static func openAI(_ request: ChatRequest, kind: ProviderKind) -> JSONValue {
        var messages: [JSONValue] = []
        if let system = request.systemPrompt, !system.isEmpty {
            messages.append(.object(["role": "system", "content": .string(system)]))
        }
        for message in request.messages {
            switch message {
            case .system(let text):
                messages.append(.object(["role": "system", "content": .string(text)]))
            case .user(let text):
                messages.append(.object(["role": "user", "content": .string(text)]))
            case .assistant(let text, let toolCalls):
                var object: JSONObject = ["role": "assistant"]
                object.append("content", text.isEmpty && !toolCalls.isEmpty ? .null : .string(text))
                if !toolCalls.isEmpty {
                    object.append(
                        "tool_calls",
                        .array(
                            toolCalls.map { call in
                                .object([
                                    "id": .string(call.id), "type": "function",
                                    "function": .object([
                                        "name": .string(call.name), "arguments": .string(argumentText(call)),
                                    ]),
                                ])
                            }))
                }
                messages.append(.object(object))
            case .toolResult(let result):
                messages.append(
                    .object([
                        "role": "tool", "tool_call_id": .string(result.toolCallID), "name": .string(result.name),
                        "content": .string(result.content),
                    ]))
            }
        }
        var body: JSONObject = ["model": .string(request.model), "messages": .array(messages), "stream": true]
        if kind != .gateway {
            body.append("stream_options", .object(["include_usage": true]))
        }
        if kind == .openRouter {
            // Asks OpenRouter to put the call's cost in the usage frame.
            body.append("usage", .object(["include": true]))
        }
        if !request.tools.isEmpty, kind != .gateway {
            body.append(
                "tools",
                .array(
                    request.tools.map { tool in
                        .object([
                            "type": "function",
                            "function": .object([
                                "name": .string(tool.name), "description": .string(tool.description),
                                "parameters": tool.inputSchema,
                            ]),
                        ])
                    }))
        }
        if let maxTokens = request.maxTokens {
            body.append("max_tokens", .number(maxTokens))
        }
        if let temperature = request.temperature {
            body.append("temperature", .double(temperature))
        }
        if kind == .gateway, let sessionID = request.sessionID {
            body.append("session_id", .string(sessionID))
        }
        return .object(body)
    }

    /// An Anthropic Messages body: system text apart, tool results as `tool_result` blocks of a user message,
    /// and consecutive same-role messages merged because the API wants the roles to alternate.
    static func anthropic(_ request: ChatRequest) -> JSONValue {
        var systemParts: [String] = []
        if let system = request.systemPrompt, !system.isEmpty {
            systemParts.append(system)
        }
        var messages: [(role: String, blocks: [JSONValue])] = []
        func add(_ role: String, _ blocks: [JSONValue]) {
            guard !blocks.isEmpty else {
                return
            }
            if let last = messages.last, last.role == role {
                messages[messages.count - 1].blocks.append(contentsOf: blocks)
            } else {
                messages.append((role, blocks))
            }
        }
        for message in request.messages {
            switch message {
            case .system(let text):
                systemParts.append(text)
            case .user(let text):
                add("user", [.object(["type": "text", "text": .string(text)])])
            case .assistant(let text, let toolCalls):
                var blocks: [JSONValue] = []
                if !text.isEmpty {
                    blocks.append(.object(["type": "text", "text": .string(text)]))
                }
                for call in toolCalls {
                    // The API insists on an object; arguments that were not one were refused locally anyway.
                    let input: JSONValue = call.input.objectValue == nil ? .object([:]) : call.input
                    blocks.append(
                        .object([
                            "type": "tool_use", "id": .string(call.id), "name": .string(call.name), "input": input,
                        ]))
                }
                add("assistant", blocks)
            case .toolResult(let result):
                add(
                    "user",
                    [
                        .object([
                            "type": "tool_result", "tool_use_id": .string(result.toolCallID),
                            "content": .string(result.content), "is_error": .bool(result.isError),
                        ])
                    ])
            }
        }
        var body: JSONObject = [
            "model": .string(request.model), "max_tokens": .number(request.maxTokens ?? 4096), "stream": true,
        ]
        if !systemParts.isEmpty {
            body.append("system", .string(systemParts.joined(separator: "\n\n")))
        }
        body.append(
            "messages",
            .array(messages.map { .object(["role": .string($0.role), "content": .array($0.blocks)]) }))
        if !request.tools.isEmpty {
            body.append(
                "tools",
                .array(
                    request.tools.map {
                        .object([
                            "name": .string($0.name), "description": .string($0.description),
                            "input_schema": $0.inputSchema,
                        ])
                    }))
        }
        if let temperature = request.temperature {
            body.append("temperature", .double(temperature))
        }
        return .object(body)
    }

    /// The argument text of a call as OpenAI expects it: JSON text, or the model's own text when it was not JSON.
    static func argumentText(_ call: ToolCall) -> String {
        if case .string(let raw) = call.input {
            return raw
        }
        return call.input.jsonString
    }
}
