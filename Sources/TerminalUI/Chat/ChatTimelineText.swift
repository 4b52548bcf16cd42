public import Chat
import Foundation
import HostscopeCore
import OrderedJSON

/// How the interactive chat shows tool calls and totals: one line per timeline row, one status line per turn.
public enum ChatTimelineText {
    /// A timeline row: `⚙ 2 read_file {"path":"notes.txt"}  ok  12 ms  exit 0  span 3fa2b1c4`.
    ///
    /// The input is shortened to fit `width`; text the model or the host chose is escaped so that it cannot
    /// drive the terminal.
    public static func row(_ number: Int, _ record: ToolCallRecord, width: Int = 100, styled: Bool = false)
        -> TerminalOutput
    {
        let status: String
        switch record.status {
        case .requested: status = "waiting"
        case .running: status = "running…"
        case .ok: status = "ok"
        case .error: status = "error"
        case .notRun: status = "not run"
        }
        var tail: [String] = [status]
        if let duration = record.durationMs, record.status == .ok || record.status == .error {
            tail.append(FigureText.milliseconds(duration))
        }
        if let exit = record.exitCode { tail.append("exit \(exit)") }
        if let span = record.call.span { tail.append("span \(span.spanID.prefix(8))") }
        if record.runsRemotely { tail.append("remote") }
        let head = "⚙ \(number) " + TerminalText.sanitize(record.call.name) + " "
        let tailText = "  " + tail.joined(separator: "  ")
        let room = max(12, width - head.count - tailText.count - 2)
        let input = TerminalText.truncate(TerminalText.sanitize(record.call.input.jsonString), to: room)
        guard styled else { return TerminalOutput(head + input + tailText) }
        let colour: TerminalOutput.Style
        switch record.status {
        case .ok: colour = .green
        case .error: colour = .red
        case .running, .requested: colour = .yellow
        case .notRun: colour = .dim
        }
        return TerminalOutput(head + input, style: .dim) + "  " + TerminalOutput(status, style: colour)
            + TerminalOutput(String(tailText.dropFirst(2 + status.count)), style: .dim)
    }

    /// The status line: `gpt-4o-mini · 1234 in / 56 out tokens · $0.0012 · 3.4 s`.
    public static func status(model: String, usage: ChatUsage, elapsed: Duration?) -> String {
        var parts = [TerminalText.sanitize(model), "\(usage.inputTokens) in / \(usage.outputTokens) out tokens"]
        if let cost = usage.costUSD { parts.append(FigureText.cost(cost)) }
        if let elapsed { parts.append(FigureText.seconds(elapsed)) }
        return parts.joined(separator: " · ")
    }

    /// What `/inspect N` prints: the row, its span, the raw input (pretty JSON) and the output the model got.
    public static func inspect(_ number: Int, _ record: ToolCallRecord) -> String {
        var out = row(number, record, width: 200).text + "\n"
        out += "call id: \(TerminalText.sanitize(record.call.id))\n"
        if let span = record.call.span { out += "trace \(span.traceID)  span \(span.spanID)\n" }
        out += "input:\n" + record.call.input.prettyJSONString + "\n"
        if let output = record.output {
            var size = ""
            if let bytes = record.outputBytes {
                size = " (\(bytes) bytes\(record.wasCut ? ", cut for the model" : ""))"
            }
            out += "output\(size):\n"
            // Keep the output's lines and tabs; escape the rest of the control characters a host may have put there.
            out += TerminalText.sanitize(output, keepingLayout: true) + "\n"
        } else {
            out += "output: none yet\n"
        }
        return out
    }

    /// What `/tools` prints: each tool with its arguments.
    public static func tools(_ definitions: [ToolDefinition]) -> String {
        var out = ""
        for tool in definitions {
            let properties = tool.inputSchema["properties"]?.objectValue?.keys ?? []
            let required = Set(tool.inputSchema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            let arguments = properties.map { required.contains($0) ? $0 : $0 + "?" }.joined(separator: ", ")
            out += "\(tool.name)(\(arguments))\n    \(tool.description)\n"
        }
        return out
    }
}
