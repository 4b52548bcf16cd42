import Foundation
import HostscopeCore
import OrderedJSON
public import Storage
import ValueFormats

/// How stored conversations are listed.
public enum ChatSessionsText {
    /// The `chat sessions` table, its columns as wide as their longest cell (a long model name widens its column
    /// rather than pushing the rest aside), the first question cut to fit `width`.
    public static func table(_ sessions: [StoredChatSession], width: Int = 160) -> String {
        guard !sessions.isEmpty else { return "no conversations yet\n" }
        var rows = [
            ["ID", "UPDATED (UTC)", "HOST", "MODEL", "TURNS", "TOOLS", "TOKENS IN/OUT", "COST", "FIRST QUESTION"]
        ]
        for session in sessions {
            rows.append([
                session.id, TimeText.utc(RFC3339.format(session.updatedAt, precision: .seconds)),
                TerminalText.truncate(TerminalText.sanitize(session.host), to: 30),
                TerminalText.truncate(TerminalText.sanitize("\(session.provider)/\(session.model)"), to: 60),
                String(session.turns), String(session.toolCalls), "\(session.inputTokens)/\(session.outputTokens)",
                session.costUSD.map(FigureText.cost) ?? "-",
                TerminalText.truncate(TerminalText.sanitize(session.title ?? ""), to: 50),
            ])
        }
        return SnapshotTable.columns(rows, rightAligned: [4, 5, 6, 7], width: width, flexible: 8)
            .joined(separator: "\n") + "\n"
    }

    /// One JSON object per conversation, per line.
    public static func jsonl(_ sessions: [StoredChatSession]) -> String {
        sessions.map { ChatExport.summary($0).jsonString + "\n" }.joined()
    }
}
