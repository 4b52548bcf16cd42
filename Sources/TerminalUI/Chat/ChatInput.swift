import Foundation
public import HostscopeCore

/// One line typed in the interactive chat: a message for the model, or a command.
public enum ChatInput: Sendable, Equatable {
    /// A question or instruction for the model.
    case message(String)
    /// `/stop`: stop the running turn.
    case stop
    /// `/retry`: run the last turn again.
    case retry
    /// `/model NAME`: use another model from the next call on.
    case model(String)
    /// `/system TEXT`: set the system prompt; `/system` alone removes it.
    case system(String?)
    /// `/tools`: list the tools the model may call.
    case tools
    /// `/trace N|SPAN`: the span tree of a timeline row (by number) or of a span (by id prefix).
    case trace(String)
    /// `/inspect N`: the raw input and output of timeline row N.
    case inspect(Int)
    /// `/export md|json [FILE]`: write the conversation to a file.
    case export(format: ExportFormat, path: String?)
    /// `/new`: start a new conversation.
    case new
    /// `/sessions`: list stored conversations.
    case sessions
    /// `/help`: list the commands.
    case help
    /// `/quit` (or `/exit`): leave.
    case quit
    /// Nothing to do (an empty line).
    case empty
    /// A command that cannot be used as typed, with what to do instead.
    case invalid(String)

    /// The formats `/export` writes.
    public typealias ExportFormat = ChatExport.Format

    /// The commands, one per line, for `/help`.
    public static let helpText = """
        /stop            stop the answer (Ctrl-C does the same)
        /retry           run the last turn again
        /model NAME      use another model from the next question on
        /system TEXT     set the system prompt (/system alone removes it)
        /tools           list the tools the model may call on the host
        /trace N|SPAN    the span tree of timeline row N, or of a span id
        /inspect N       the raw input and output of timeline row N
        /export md|json [FILE]
                         write the conversation to a file
        /new             start a new conversation
        /sessions        list stored conversations
        /help            this list (Tab completes a command)
        /quit            leave (Ctrl-D too)
        """

    /// The commands `Tab` completes, in the order ``helpText`` lists them.
    public static let commandNames = [
        "/stop", "/retry", "/model", "/system", "/tools", "/trace", "/inspect", "/export", "/new", "/sessions",
        "/help", "/quit",
    ]

    /// What may replace the last word of `text` (a line up to the cursor) on `Tab`: the commands it starts, on an
    /// empty line all of them, and the formats after `/export`; nothing in a message.
    public static func completions(for text: String) -> [String] {
        guard !text.contains("\n") else { return [] }
        if text.isEmpty { return commandNames }
        guard text.hasPrefix("/"), !text.hasPrefix("//") else { return [] }
        guard let space = text.firstIndex(of: " ") else {
            return commandNames.filter { $0.hasPrefix(text.lowercased()) }
        }
        let argument = text[text.index(after: space)...]
        if text[..<space].lowercased() == "/export", !argument.contains(" ") {
            return ExportFormat.allCases.map(\.rawValue).filter { $0.hasPrefix(argument.lowercased()) }
        }
        return []
    }

    /// Parses a typed line. A line that starts with `/` is a command; `//text` sends `/text` as a message.
    public static func parse(_ line: String) -> ChatInput {
        let text = line.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return .empty }
        guard text.hasPrefix("/") else { return .message(line) }
        if text.hasPrefix("//") { return .message(String(text.dropFirst())) }
        let parts = text.dropFirst().split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        let name = parts.first.map { $0.lowercased() } ?? ""
        let argument = parts.count > 1 ? String(parts[1]).trimmingCharacters(in: .whitespaces) : ""
        switch name {
        case "stop": return .stop
        case "retry": return .retry
        case "model":
            return argument.isEmpty ? .invalid("/model needs a model name, e.g. /model gpt-4o") : .model(argument)
        case "system": return .system(argument.isEmpty ? nil : argument)
        case "tools": return .tools
        case "trace":
            return argument.isEmpty
                ? .invalid("/trace needs a row number or a span id, e.g. /trace 1") : .trace(argument)
        case "inspect":
            guard let number = Int(argument), number > 0 else {
                return .invalid("/inspect needs a row number from the timeline, e.g. /inspect 1")
            }
            return .inspect(number)
        case "export":
            let pieces = argument.split(separator: " ", maxSplits: 1).map(String.init)
            guard let first = pieces.first, let format = ExportFormat(rawValue: first.lowercased()) else {
                return .invalid("/export needs a format: /export md or /export json, and optionally a file")
            }
            return .export(format: format, path: pieces.count > 1 ? pieces[1] : nil)
        case "new": return .new
        case "sessions": return .sessions
        case "help", "?": return .help
        case "quit", "exit", "q": return .quit
        default: return .invalid("no command /\(name); /help lists them (start with // to send a line with a slash)")
        }
    }
}
