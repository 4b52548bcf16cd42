import Chat
import OrderedJSON
import Testing

@Suite("ChatEvent")
struct ChatEventTests {
    private let span = ChatSpanIDs(traceID: "4bf92f3577b34da6a3ce929d0e0e4736", spanID: "00f067aa0ba902b7")

    @Test("Each event is one JSON line with DESIGN's keys in DESIGN's order")
    func jsonLines() {
        #expect(ChatEvent.text("Hi \"you\"").jsonLine == #"{"type":"text","delta":"Hi \"you\""}"#)
        let call = ToolCall(id: "call_1", name: "disk_usage", input: .object(["path": "/var"]), span: span)
        #expect(
            ChatEvent.toolCall(call).jsonLine
                == #"{"type":"tool_call","id":"call_1","name":"disk_usage","input":{"path":"/var"},"#
                + #""trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7"}"#)
        let result = ToolResult(
            id: "call_1", name: "disk_usage", isError: false, durationMs: 212.5, exitCode: 0, output: "41G", span: span)
        #expect(
            ChatEvent.toolResult(result).jsonLine
                == #"{"type":"tool_result","id":"call_1","name":"disk_usage","is_error":false,"duration_ms":212.5,"#
                + #""exit_code":0,"output":"41G","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","#
                + #""span_id":"00f067aa0ba902b7"}"#)
        #expect(
            ChatEvent.usage(ChatUsage(inputTokens: 10, outputTokens: 3, costUSD: 0.25)).jsonLine
                == #"{"type":"usage","input_tokens":10,"output_tokens":3,"cost_usd":0.25}"#)
        #expect(
            ChatEvent.error(ChatError(kind: .rateLimited, message: "slow down", retryAfter: .milliseconds(6500)))
                .jsonLine == #"{"type":"error","kind":"rate_limited","message":"slow down","retry_after_s":7}"#)
        #expect(
            ChatEvent.done(finishReason: .toolCalls, sessionID: "sess_1").jsonLine
                == #"{"type":"done","finish_reason":"tool_calls","session_id":"sess_1"}"#)
    }

    @Test("Values that are not known are null rather than missing, so every line of a type has the same keys")
    func nulls() {
        let call = ToolCall(id: "c", name: "n", input: .object([:]))
        #expect(ChatEvent.toolCall(call).json["trace_id"] == .null)
        #expect(ChatEvent.usage(ChatUsage(inputTokens: 1, outputTokens: 2)).json["cost_usd"] == .null)
        #expect(ChatEvent.error(ChatError(kind: .server, message: "m")).json["retry_after_s"] == .null)
        #expect(ChatEvent.done(finishReason: .stop, sessionID: nil).json["session_id"] == .null)
    }

    @Test("Provider stop reasons map onto common names, unknown ones pass through")
    func finishReasons() {
        #expect(FinishReason.normalising("end_turn") == .stop)
        #expect(FinishReason.normalising("tool_use") == .toolCalls)
        #expect(FinishReason.normalising("max_tokens") == .length)
        #expect(FinishReason.normalising("pause_turn").rawValue == "pause_turn")
    }

    @Test("Usage adds up, and the cost stays known only while every part is")
    func usageSum() {
        let priced = ChatUsage(inputTokens: 1, outputTokens: 2, costUSD: 0.5)
        #expect(priced + priced == ChatUsage(inputTokens: 2, outputTokens: 4, costUSD: 1.0))
        #expect((priced + ChatUsage(inputTokens: 1, outputTokens: 1)).costUSD == nil)
    }
}

@Suite("JSONSchemaValidator")
struct JSONSchemaValidatorTests {
    private let schema: JSONValue = .object([
        "type": "object",
        "properties": .object([
            "path": .object(["type": "string", "minLength": 1, "maxLength": 8]),
            "lines": .object(["type": "integer", "minimum": 1, "maximum": 100]),
            "unit": .object(["type": "string", "enum": ["bytes", "human"]]),
            "ratio": .object(["type": "number", "exclusiveMaximum": 1]),
            "tags": .object(["type": "array", "items": .object(["type": "string"]), "maxItems": 2]),
        ]),
        "required": ["path"],
        "additionalProperties": false,
    ])

    @Test("Valid arguments pass, integers written as floats included")
    func valid() {
        #expect(JSONSchemaValidator.validate(.object(["path": "/var", "lines": 10]), against: schema).isEmpty)
        #expect(
            JSONSchemaValidator.validate(.object(["path": "/", "lines": .double(10.0), "ratio": 0.5]), against: schema)
                .isEmpty)
        #expect(
            JSONSchemaValidator.validate(.object(["path": "/", "unit": "human", "tags": ["a"]]), against: schema)
                .isEmpty)
    }

    @Test("Each broken rule is reported with its path")
    func invalid() {
        let problems = JSONSchemaValidator.validate(
            .object([
                "path": "/a/very/long/path", "lines": 0, "unit": "kb", "ratio": 1, "tags": ["a", 2, "c"],
                "extra": true,
            ]), against: schema)
        #expect(
            problems == [
                "$.path: longer than 8 characters (17)",
                "$.lines: 0 is less than the minimum 1",
                "$.unit: \"kb\" is not one of \"bytes\", \"human\"",
                "$.ratio: 1 must be less than 1",
                "$.tags: more than 2 items (3)",
                "$.tags[1]: expected string, got integer",
                "$.extra: unknown property (allowed: path, lines, unit, ratio, tags)",
            ])
        #expect(
            JSONSchemaValidator.validate(.object([:]), against: schema) == [
                "$: the required property \"path\" is missing"
            ])
        #expect(JSONSchemaValidator.validate("text", against: schema) == ["$: expected object, got string"])
        #expect(
            JSONSchemaValidator.validate(.object(["path": "/", "lines": 1.5]), against: schema) == [
                "$.lines: expected integer, got number"
            ])
    }
}
