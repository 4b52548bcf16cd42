import Foundation
import GRDB

/// Stored `hostscope chat` conversations: headers, messages, tool timelines with span ids, and turns.
public struct ChatStore: Sendable {
    let database: StorageDatabase

    /// Stores `conversation`, replacing what was stored under its id: the header and totals are updated, the
    /// messages and tool timeline rewritten (a retried turn drops what it replaced) and the turns upserted, all
    /// in one transaction.
    public func save(_ conversation: StoredConversation) async throws(StorageError) {
        guard !conversation.session.id.isEmpty else {
            throw StorageError(
                code: .invalidArgument, message: "a chat conversation needs an id", path: database.path)
        }
        try await database.write { db in
            let session = conversation.session
            try db.execute(
                sql: """
                    INSERT INTO chat_session
                        (id, host, provider, model, base_url, system_prompt, root, gateway_session_id, title,
                         created_at, updated_at, turns, input_tokens, output_tokens, cost_usd)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET
                        host = excluded.host, provider = excluded.provider, model = excluded.model,
                        base_url = excluded.base_url, system_prompt = excluded.system_prompt, root = excluded.root,
                        gateway_session_id = excluded.gateway_session_id,
                        title = coalesce(chat_session.title, excluded.title), updated_at = excluded.updated_at,
                        turns = excluded.turns, input_tokens = excluded.input_tokens,
                        output_tokens = excluded.output_tokens, cost_usd = excluded.cost_usd
                    """,
                arguments: [
                    session.id, session.host, session.provider, session.model, session.baseURL, session.systemPrompt,
                    session.root, session.gatewaySessionID, session.title, Self.milliseconds(session.createdAt),
                    Self.milliseconds(session.updatedAt), session.turns, session.inputTokens, session.outputTokens,
                    session.costUSD,
                ])
            try db.execute(sql: "DELETE FROM chat_message WHERE session_id = ?", arguments: [session.id])
            let message = try db.cachedStatement(
                sql: """
                    INSERT INTO chat_message
                        (session_id, position, role, content, tool_calls, tool_call_id, tool_name, is_error)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            for (position, row) in conversation.messages.enumerated() {
                try message.execute(arguments: [
                    session.id, position, row.role, row.content, row.toolCallsJSON, row.toolCallID, row.toolName,
                    row.isError,
                ])
            }
            try db.execute(sql: "DELETE FROM chat_tool_call WHERE session_id = ?", arguments: [session.id])
            let call = try db.cachedStatement(
                sql: """
                    INSERT INTO chat_tool_call
                        (session_id, position, turn, call_id, name, input, status, runs_remotely, duration_ms,
                         exit_code, output, output_bytes, was_cut, trace_id, span_id)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            for (index, row) in conversation.toolCalls.enumerated() {
                try call.execute(arguments: [
                    session.id, index + 1, row.turn, row.callID, row.name, row.inputJSON, row.status,
                    row.runsRemotely, row.durationMs, row.exitCode, row.output, row.outputBytes, row.wasCut,
                    row.traceID, row.spanID,
                ])
            }
            let turn = try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO chat_turn
                        (session_id, turn, model, finish_reason, model_calls, tool_calls, input_tokens,
                         output_tokens, cost_usd, error_kind, error_message, trace_id, span_id, finished_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            for row in conversation.turns {
                try turn.execute(arguments: [
                    session.id, row.turn, row.model, row.finishReason, row.modelCalls, row.toolCalls,
                    row.inputTokens, row.outputTokens, row.costUSD, row.errorKind, row.errorMessage, row.traceID,
                    row.spanID, Self.milliseconds(row.finishedAt),
                ])
            }
        }
    }

    /// The conversation with this id, or the only one whose id starts with it; `nil` when none does.
    ///
    /// - Throws: `ambiguousPrefix` when several ids start with it.
    public func conversation(id idOrPrefix: String) async throws(StorageError) -> StoredConversation? {
        guard !idOrPrefix.isEmpty else {
            throw StorageError(code: .invalidArgument, message: "a conversation id is empty", path: database.path)
        }
        let path = database.path
        let ids = try await database.read { db in
            try String.fetchAll(
                db, sql: "SELECT id FROM chat_session WHERE substr(id, 1, length(?)) = ? ORDER BY id LIMIT 6",
                arguments: [idOrPrefix, idOrPrefix])
        }
        let id: String
        if ids.contains(idOrPrefix) {
            id = idOrPrefix
        } else if ids.count == 1 {
            id = ids[0]
        } else if ids.isEmpty {
            return nil
        } else {
            throw StorageError(
                code: .ambiguousPrefix,
                message: "conversation id prefix \(idOrPrefix) matches several conversations "
                    + "(\(ids.prefix(5).joined(separator: ", "))\(ids.count > 5 ? ", …" : "")); type more of it",
                path: path)
        }
        return try await database.read { db in
            guard
                let header = try Row.fetchOne(
                    db, sql: "SELECT * FROM chat_session WHERE id = ?", arguments: [id])
            else { return nil }
            let messages = try Row.fetchAll(
                db, sql: "SELECT * FROM chat_message WHERE session_id = ? ORDER BY position", arguments: [id]
            ).map { row in
                StoredChatMessage(
                    role: row["role"], content: row["content"], toolCallsJSON: row["tool_calls"],
                    toolCallID: row["tool_call_id"], toolName: row["tool_name"], isError: row["is_error"])
            }
            let calls = try Row.fetchAll(
                db, sql: "SELECT * FROM chat_tool_call WHERE session_id = ? ORDER BY position", arguments: [id]
            ).map { row in
                StoredToolCall(
                    turn: row["turn"], callID: row["call_id"], name: row["name"], inputJSON: row["input"],
                    status: row["status"], runsRemotely: row["runs_remotely"], durationMs: row["duration_ms"],
                    exitCode: row["exit_code"], output: row["output"], outputBytes: row["output_bytes"],
                    wasCut: row["was_cut"], traceID: row["trace_id"], spanID: row["span_id"])
            }
            let turns = try Row.fetchAll(
                db, sql: "SELECT * FROM chat_turn WHERE session_id = ? ORDER BY turn", arguments: [id]
            ).map { row in
                StoredChatTurn(
                    turn: row["turn"], model: row["model"], finishReason: row["finish_reason"],
                    modelCalls: row["model_calls"], toolCalls: row["tool_calls"], inputTokens: row["input_tokens"],
                    outputTokens: row["output_tokens"], costUSD: row["cost_usd"], errorKind: row["error_kind"],
                    errorMessage: row["error_message"], traceID: row["trace_id"], spanID: row["span_id"],
                    finishedAt: Self.date(row["finished_at"]))
            }
            var session = Self.session(header)
            session.toolCalls = calls.count
            return StoredConversation(session: session, messages: messages, toolCalls: calls, turns: turns)
        }
    }

    /// Conversations, most recently updated first, with their tool call counts.
    public func sessions(limit: Int = 50) async throws(StorageError) -> [StoredChatSession] {
        guard limit > 0 else { return [] }
        return try await database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT chat_session.*,
                        (SELECT count(*) FROM chat_tool_call WHERE session_id = chat_session.id) AS tool_call_count
                    FROM chat_session ORDER BY updated_at DESC, id LIMIT ?
                    """, arguments: [limit]
            ).map { row in
                var session = Self.session(row)
                session.toolCalls = row["tool_call_count"]
                return session
            }
        }
    }

    private static func session(_ row: Row) -> StoredChatSession {
        StoredChatSession(
            id: row["id"], host: row["host"], provider: row["provider"], model: row["model"], baseURL: row["base_url"],
            systemPrompt: row["system_prompt"], root: row["root"], gatewaySessionID: row["gateway_session_id"],
            title: row["title"], createdAt: date(row["created_at"]), updatedAt: date(row["updated_at"]),
            turns: row["turns"], inputTokens: row["input_tokens"], outputTokens: row["output_tokens"],
            costUSD: row["cost_usd"])
    }

    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    static func date(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}

extension StorageDatabase {
    /// Stored chat conversations.
    public var chats: ChatStore { ChatStore(database: self) }
}
