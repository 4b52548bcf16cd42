import Foundation
import HostscopeCore
import OrderedJSON
public import Storage
import ValueFormats

/// How stored conversations are listed.
public enum ChatSessionsText {
    /// The `chat sessions` table.
    public static func table(_ sessions: [StoredChatSession]) -> String {
        guard !sessions.isEmpty else { return "no conversations yet\n" }
        var out =
            "ID            UPDATED (UTC)        HOST                 MODEL                     TURNS  TOOLS  "
            + "TOKENS IN/OUT   COST      FIRST QUESTION\n"
        for session in sessions {
            let updated = TimeText.utc(RFC3339.format(session.updatedAt, precision: .seconds))
            let cost = session.costUSD.map(FigureText.cost) ?? "-"
            let model = TerminalText.truncate(TerminalText.sanitize("\(session.provider)/\(session.model)"), to: 25)
            out +=
                [
                    pad(session.id, 12), pad(updated, 19),
                    pad(TerminalText.truncate(TerminalText.sanitize(session.host), to: 20), 20),
                    pad(model, 25), pad(String(session.turns), 5), pad(String(session.toolCalls), 5),
                    pad("\(session.inputTokens)/\(session.outputTokens)", 15), pad(cost, 8),
                    TerminalText.truncate(TerminalText.sanitize(session.title ?? ""), to: 50),
                ].joined(separator: "  ") + "\n"
        }
        return out
    }

    /// One JSON object per conversation, per line.
    public static func jsonl(_ sessions: [StoredChatSession]) -> String {
        sessions.map { session in
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
            return JSONValue.object(object).jsonString + "\n"
        }.joined()
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
