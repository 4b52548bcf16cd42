import Foundation
import HostStats
public import OrderedJSON
public import Storage
import ValueFormats

/// A conversation written out for people (Markdown) or programs (JSON), with every tool call's span ids.
///
/// Both are made from the stored form, which holds no credential, so an export cannot leak an API key.
public enum ChatExport {
    /// The formats a conversation is written in.
    public enum Format: String, Sendable, Equatable, CaseIterable {
        /// Markdown, for people.
        case markdown = "md"
        /// `hostscope.chat/1` JSON, for programs.
        case json

        /// The file name extension of the format.
        public var fileExtension: String { rawValue }
    }

    /// The conversation in `format`: Markdown, or pretty-printed JSON with a final newline.
    public static func text(_ conversation: StoredConversation, format: Format) -> String {
        switch format {
        case .markdown: markdown(conversation)
        case .json: json(conversation).prettyJSONString + "\n"
        }
    }

    /// One stored conversation's header and totals, as `chat sessions --jsonl` prints it and serve lists it.
    public static func summary(_ session: StoredChatSession) -> JSONValue {
        var object = JSONObject()
        object.append("id", .string(session.id))
        object.append("host", .string(session.host))
        object.append("provider", .string(session.provider))
        object.append("model", .string(session.model))
        object.append("created_at", .string(RFC3339.format(session.createdAt)))
        object.append("updated_at", .string(RFC3339.format(session.updatedAt)))
        object.append("turns", .number(session.turns))
        object.append("tool_calls", .number(session.toolCalls))
        object.append("input_tokens", .number(session.inputTokens))
        object.append("output_tokens", .number(session.outputTokens))
        object.append("cost_usd", .from(session.costUSD, JSONValue.double))
        object.append("title", .from(session.title, JSONValue.string))
        return .object(object)
    }

    /// `hostscope.chat/1`: the session header, messages, tool calls (with `trace_id` and `span_id`) and turns.
    public static func json(_ conversation: StoredConversation) -> JSONValue {
        let session = conversation.session
        var header = JSONObject()
        header.append("id", .string(session.id))
        header.append("host", .string(session.host))
        header.append("provider", .string(session.provider))
        header.append("model", .string(session.model))
        header.append("base_url", .from(session.baseURL, JSONValue.string))
        header.append("system_prompt", .from(session.systemPrompt, JSONValue.string))
        header.append("root", .from(session.root, JSONValue.string))
        header.append("gateway_session_id", .from(session.gatewaySessionID, JSONValue.string))
        header.append("created_at", .string(RFC3339.format(session.createdAt)))
        header.append("updated_at", .string(RFC3339.format(session.updatedAt)))
        header.append("turns", .number(session.turns))
        header.append("input_tokens", .number(session.inputTokens))
        header.append("output_tokens", .number(session.outputTokens))
        header.append("cost_usd", .from(session.costUSD, JSONValue.double))
        let messages: [JSONValue] = conversation.messages.map { message in
            var object = JSONObject()
            object.append("role", .string(message.role))
            object.append("content", .string(message.content))
            if let calls = message.toolCallsJSON, let parsed = try? JSONParser.parse(calls) {
                object.append("tool_calls", parsed)
            }
            if let id = message.toolCallID { object.append("tool_call_id", .string(id)) }
            if let name = message.toolName { object.append("name", .string(name)) }
            if message.role == "tool" { object.append("is_error", .bool(message.isError)) }
            return .object(object)
        }
        let calls: [JSONValue] = conversation.toolCalls.enumerated().map { index, call in
            var object = JSONObject()
            object.append("row", .number(index + 1))
            object.append("turn", .number(call.turn))
            object.append("id", .string(call.callID))
            object.append("name", .string(call.name))
            object.append("input", (try? JSONParser.parse(call.inputJSON)) ?? .string(call.inputJSON))
            object.append("status", .string(call.status))
            object.append("runs_remotely", .bool(call.runsRemotely))
            object.append("duration_ms", .from(call.durationMs, JSONValue.double))
            object.append("exit_code", .from(call.exitCode, JSONValue.number))
            object.append("output", .from(call.output, JSONValue.string))
            object.append("output_bytes", .from(call.outputBytes, JSONValue.number))
            object.append("was_cut", .bool(call.wasCut))
            object.append("trace_id", .from(call.traceID, JSONValue.string))
            object.append("span_id", .from(call.spanID, JSONValue.string))
            return .object(object)
        }
        let turns: [JSONValue] = conversation.turns.map { turn in
            var object = JSONObject()
            object.append("turn", .number(turn.turn))
            object.append("model", .string(turn.model))
            object.append("finish_reason", .string(turn.finishReason))
            object.append("model_calls", .number(turn.modelCalls))
            object.append("tool_calls", .number(turn.toolCalls))
            object.append("input_tokens", .from(turn.inputTokens, JSONValue.number))
            object.append("output_tokens", .from(turn.outputTokens, JSONValue.number))
            object.append("cost_usd", .from(turn.costUSD, JSONValue.double))
            object.append("error_kind", .from(turn.errorKind, JSONValue.string))
            object.append("error_message", .from(turn.errorMessage, JSONValue.string))
            object.append("trace_id", .from(turn.traceID, JSONValue.string))
            object.append("span_id", .from(turn.spanID, JSONValue.string))
            object.append("finished_at", .string(RFC3339.format(turn.finishedAt)))
            return .object(object)
        }
        return .object([
            "schema": "hostscope.chat/1", "session": .object(header), "messages": .array(messages),
            "tool_calls": .array(calls), "turns": .array(turns),
        ])
    }

    /// The conversation as Markdown: a header, each question and answer, each tool call as a list item with
    /// its status and span, and a closing table of turns.
    public static func markdown(_ conversation: StoredConversation) -> String {
        let session = conversation.session
        var out = "# hostscope chat \(session.id)\n\n"
        out += "- host: \(session.host)\n- provider: \(session.provider), model: \(session.model)\n"
        if let root = session.root { out += "- root: \(root)\n" }
        out += "- started: \(RFC3339.format(session.createdAt)), updated: \(RFC3339.format(session.updatedAt))\n"
        out += "- tokens: \(session.inputTokens) in / \(session.outputTokens) out"
        if let cost = session.costUSD { out += ", cost: \(FigureText.cost(cost))" }
        out += "\n"
        if let system = session.systemPrompt { out += "- system prompt: \(system)\n" }
        var rows: [String: Int] = [:]
        for (index, call) in conversation.toolCalls.enumerated() { rows[call.callID] = index + 1 }
        for message in conversation.messages {
            switch message.role {
            case "user":
                out += "\n## You\n\n\(message.content)\n"
            case "assistant":
                if !message.content.isEmpty { out += "\n## Assistant\n\n\(message.content)\n" }
                let calls = message.toolCallsJSON.flatMap { try? JSONParser.parse($0) }?.arrayValue ?? []
                if !calls.isEmpty { out += "\n" }
                for call in calls {
                    let id = call["id"]?.stringValue ?? ""
                    guard let row = rows[id] else { continue }
                    let stored = conversation.toolCalls[row - 1]
                    out += "- tool \(row): `\(stored.name)` `\(stored.inputJSON)` → \(stored.status)"
                    if let duration = stored.durationMs { out += ", \(FigureText.milliseconds(duration))" }
                    if let exit = stored.exitCode { out += ", exit \(exit)" }
                    if let span = stored.spanID { out += ", span `\(span)`" }
                    out += "\n"
                }
            case "tool":
                let fence = message.content.contains("```") ? "~~~~" : "```"
                let row = message.toolCallID.flatMap { rows[$0] }.map { " \($0)" } ?? ""
                out += "\n<details><summary>tool\(row) \(message.toolName ?? "") output</summary>\n\n"
                out += "\(fence)\n\(message.content)\n\(fence)\n\n</details>\n"
            default:
                break
            }
        }
        // Gateway tools appear in no assistant message: list them on their own.
        let remote = conversation.toolCalls.enumerated().filter { $0.element.runsRemotely }
        if !remote.isEmpty {
            out += "\n## Tools run by the gateway\n\n"
            for (index, call) in remote {
                out += "- tool \(index + 1): `\(call.name)` `\(call.inputJSON)` → \(call.status)"
                if let exit = call.exitCode { out += ", exit \(exit)" }
                if let span = call.spanID { out += ", span `\(span)`" }
                out += "\n"
            }
        }
        if !conversation.turns.isEmpty {
            out += "\n## Turns\n\n| turn | model | finish | tokens in/out | cost | span |\n|---|---|---|---|---|---|\n"
            for turn in conversation.turns {
                let tokens = "\(turn.inputTokens.map(String.init) ?? "-")/\(turn.outputTokens.map(String.init) ?? "-")"
                out += "| \(turn.turn) | \(turn.model) | \(turn.finishReason) | \(tokens) | "
                out += (turn.costUSD.map(FigureText.cost) ?? "-") + " | " + (turn.spanID ?? "-") + " |\n"
            }
        }
        return out
    }
}
