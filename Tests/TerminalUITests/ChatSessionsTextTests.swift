import Foundation
import Storage
import TerminalUI
import Testing

@Suite struct ChatSessionsTextTests {
    @Test func aLongModelNameWidensItsColumnAndEveryRowKeepsToTheHeadings() throws {
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        let sessions = [
            StoredChatSession(
                id: "a1b2c3d4e5f6", host: "web1", provider: "openai", model: "gpt-4o-mini", title: "why is web1 slow?",
                createdAt: now, updatedAt: now, turns: 3, inputTokens: 1200, outputTokens: 300, costUSD: 0.0123,
                toolCalls: 4),
            StoredChatSession(
                id: "f6e5d4c3b2a1", host: "db-primary.internal", provider: "openrouter",
                model: "anthropic/claude-3.5-sonnet-20241022", title: "disk full?", createdAt: now, updatedAt: now,
                turns: 12, inputTokens: 123_456, outputTokens: 7890, toolCalls: 31),
        ]
        let lines = ChatSessionsText.table(sessions, width: 200).split(separator: "\n")
        #expect(lines.count == 3)
        let header = lines[0]
        let model = try #require(header.range(of: "MODEL"))
        let turns = try #require(header.range(of: "TURNS"))
        let modelColumn = header.distance(from: header.startIndex, to: model.lowerBound)
        let turnsEnd = header.distance(from: header.startIndex, to: turns.upperBound)
        for line in lines.dropFirst() {
            // The model starts under MODEL, the turn count ends under TURNS' end (numbers are right-aligned).
            let provider = try #require(line.range(of: "openai/") ?? line.range(of: "openrouter/"))
            #expect(line.distance(from: line.startIndex, to: provider.lowerBound) == modelColumn, "\(lines)")
            let cells = line.split(separator: "  ", omittingEmptySubsequences: true).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            let turnCell = cells[4]
            let prefix = line[..<line.index(line.startIndex, offsetBy: turnsEnd)]
            #expect(prefix.hasSuffix(turnCell), "\(lines)")
        }
        #expect(lines[2].contains("openrouter/anthropic/claude-3.5-sonnet-20241022"), "the name whole")
    }
}
