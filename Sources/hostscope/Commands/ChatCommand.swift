import AgentTracing
public import ArgumentParser
public import Chat
import Foundation
import HostscopeCore
import Storage
import Synchronization
import TerminalUI
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

extension ProviderKind: ExpressibleByArgument {}

struct ChatCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat",
        abstract: "Ask a language model about a host; it answers by calling read-only tools on that host.",
        discussion: """
            Without --message, opens an interactive chat on the terminal (type /help there): lines are edited \
            with the usual Emacs keys, ↑ and ↓ walk the history of earlier chats \
            ($XDG_DATA_HOME/hostscope/chat-history, no line starting with a space or holding a secret), Tab \
            completes a slash command, a paste is one message, and Ctrl-D on an empty line leaves. With \
            --message, runs one turn and prints the answer, or with --jsonl the event stream, one JSON \
            object per line: text, tool_call, tool_result (each with trace_id and span_id), usage, error, \
            done.

            The model may call host_snapshot, top_processes, disk_usage, list_dir, read_file, grep, \
            tail_log and find_files on --host and no other host. They only read: the monitoring tools run \
            hostscope's fixed probe, the file tools read over SFTP (no shell), confined to --root when given. \
            Every tool call is an execute_tool span whose children are the SSH and SFTP spans it caused; \
            `hostscope trace show SPAN_ID` prints that tree.

            Providers and base URLs: openai (https://api.openai.com/v1; any OpenAI-compatible server with \
            --base-url, e.g. http://localhost:11434/v1), openrouter (https://openrouter.ai/api/v1), \
            anthropic (https://api.anthropic.com), gateway (--base-url of its server root). API keys come \
            from OPENAI_API_KEY, ANTHROPIC_API_KEY, OPENROUTER_API_KEY, --api-key-env VAR or --credentials \
            FILE (mode 0600); they are never printed, traced or stored.

            Conversations are kept in the database (--db, else $HOSTSCOPE_DB, else \
            $XDG_DATA_HOME/hostscope/hostscope.sqlite); `chat sessions` lists them (most recent first, \
            --limit N, --jsonl for JSON lines), --resume ID continues one.

            Exit status: 0 answered, 1 local failure, 64 usage or configuration (a credentials file others \
            can read), 9 the provider failed or refused the turn (key, model, rate limit, server error, \
            timeout, broken stream), 130 stopped with Ctrl-C.
            """)

    /// What `chat` does besides chatting.
    enum Action: String, ExpressibleByArgument, CaseIterable {
        case sessions
    }

    @Argument(help: ArgumentHelp("sessions: list stored conversations instead of chatting.", valueName: "action"))
    var action: Action?

    @Option(
        help: ArgumentHelp(
            "The host the tools reach (an ssh_config alias, user@host:port or local).", valueName: "host"),
        completion: Completions.host)
    var host: String?

    @Option(help: "openai, anthropic, openrouter or gateway (default: openai, or the provider of --resume).")
    var provider: ProviderKind?

    @Option(
        help: ArgumentHelp(
            "The model (default: gpt-4o-mini, claude-sonnet-4-5, openai/gpt-4o-mini).", valueName: "name"))
    var model: String?

    @Option(
        name: .customLong("base-url"),
        help: ArgumentHelp(
            "The provider's base URL, as its SDK takes it (OpenAI-compatible ones end in /v1); @FILE reads it from "
                + "a file only you can read.",
            valueName: "url"))
    var baseURL: String?

    @Option(
        name: .customLong("api-key-env"),
        help: ArgumentHelp("Name of the environment variable holding the API key.", valueName: "var"))
    var apiKeyEnv: String?

    @Option(
        help: ArgumentHelp("A credentials file (mode 0600) holding the key or NAME=value lines.", valueName: "file"))
    var credentials: String?

    @Option(
        help: ArgumentHelp("The system prompt (default: a short one about looking after the host).", valueName: "text"))
    var system: String?

    @Option(help: ArgumentHelp("Confine the file tools to this remote directory.", valueName: "dir"))
    var root: String?

    @Option(
        help: ArgumentHelp(
            "Continue a stored conversation (an id from `chat sessions`, or a unique prefix).", valueName: "id"))
    var resume: String?

    @Option(
        name: [.customShort("m"), .long],
        help: ArgumentHelp("Run one turn with this message and exit.", valueName: "text"))
    var message: String?

    @Flag(help: "With --message: print the event stream as JSON lines (with sessions: one conversation per line).")
    var jsonl = false

    @Option(help: "With sessions: at most this many conversations.")
    var limit: Int = 20

    @Option(
        name: .customLong("header"),
        help: ArgumentHelp(
            "Extra headers for the provider: @FILE, a file (mode 0600) of name=value lines, or name=value, e.g. "
                + "'HTTP-Referer=https://example.org' (repeatable; values are never printed or stored).",
            valueName: "@file|name=value"))
    var headers: [String] = []

    @Option(
        help: ArgumentHelp(
            "Prices in dollars per million input and output tokens, for a cost the provider does not report.",
            valueName: "in,out"))
    var price: String?

    @Option(name: .customLong("max-iterations"), help: "The most model calls one question may make.")
    var maxIterations: Int = 10

    @Option(
        name: .customLong("rate-limit-retries"),
        help: ArgumentHelp(
            "With --message, how often a rate-limited turn (HTTP 429) is run again after the wait the provider "
                + "asks for (at most 60 s, counted down; Ctrl-C gives up).", valueName: "n"))
    var rateLimitRetries: Int = 3

    @Option(
        name: .customLong("tool-timeout"),
        help: ArgumentHelp(
            "How long one tool call may run before it is stopped and reported as an error (default 60s).",
            valueName: "duration"))
    var toolTimeout: DurationArgument?

    @Option(
        name: .customLong("idle-timeout"),
        help: ArgumentHelp(
            "How long to wait for the first token and between tokens (default 120s).", valueName: "duration"))
    var idleTimeout: DurationArgument?

    @Option(name: .customLong("db"), help: ArgumentHelp("The database for conversations and spans.", valueName: "file"))
    var database: String?

    @Flag(name: .customLong("no-history"), help: "Store neither the conversation nor its spans.")
    var noHistory = false

    @Flag(
        inversion: .prefixedNo,
        help: ArgumentHelp(
            "Record the messages sent to and answered by the model on its chat spans (default: "
                + "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, else off); secrets are scrubbed as everywhere."))
    var captureMessageContent: Bool?

    @OptionGroup var tracing: TracingOptions
    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        if action == .sessions {
            guard limit > 0 else { throw ValidationError("--limit must be 1 or more.") }
            return
        }
        if jsonl, message == nil { throw ValidationError("--jsonl needs --message: it prints the events of one turn.") }
        if maxIterations < 1 { throw ValidationError("--max-iterations must be 1 or more.") }
        if rateLimitRetries < 0 { throw ValidationError("--rate-limit-retries must be 0 or more.") }
        if let toolTimeout, toolTimeout.duration <= .zero {
            throw ValidationError("--tool-timeout must be longer than zero, e.g. --tool-timeout 30s.")
        }
        if let price, Self.pricing(price) == nil {
            throw ValidationError(
                "--price is two numbers, dollars per million input and output tokens: --price 0.15,0.6")
        }
        if resume != nil, noHistory {
            throw ValidationError("--resume reads the stored conversation; drop --no-history.")
        }
        _ = try captureContent()
    }

    /// The content-capture choice: the option, else the OpenTelemetry variable.
    func captureContent() throws -> Bool {
        try TracingOptions.contentCapture(captureMessageContent)
    }

    static func pricing(_ text: String) -> ModelPricing? {
        let parts = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 2, let input = parts[0], let output = parts[1], input >= 0, output >= 0 else { return nil }
        return ModelPricing(inputPerMillion: input, outputPerMillion: output)
    }

    func run() async throws {
        let settings = try CoreSettings.command(
            database: database, storesHistory: !noHistory, connection: connection.settings, tracing: tracing)
        if action == .sessions {
            try await listSessions(settings)
            return
        }
        let request = ChatRequest(
            host: host, provider: provider, model: model, baseURL: baseURL, apiKeyVariable: apiKeyEnv,
            credentialsFile: credentials, systemPrompt: system, root: root, resume: resume, headers: headers,
            pricing: price.flatMap(Self.pricing), maxIterations: maxIterations,
            toolTimeout: toolTimeout?.duration ?? .seconds(60), idleTimeout: idleTimeout?.duration ?? .seconds(120),
            captureContent: try captureContent())
        let status: Int32
        do {
            let retries = rateLimitRetries
            status = try await ChatService(settings: settings).withConversation(request) { conversation in
                if let message {
                    return await Self.answer(message, in: conversation, jsonl: jsonl, rateLimitRetries: retries)
                }
                await ChatConsole(chat: conversation, lines: Self.inputLines(persistsHistory: !noHistory)).run()
                return 0
            }
        } catch {
            throw Output.fail(error)
        }
        if status != 0 {
            throw ExitCode(status)
        }
    }

    /// Counts `wait` down on stderr, a second at a time (one line rewritten on a terminal), until it is over
    /// (true) or Ctrl-C sets `stopped` (false).
    static func countDown(_ wait: Duration, stopped: () -> Bool) async -> Bool {
        let styled = Output.stderrIsTerminal
        let seconds = Int((wait.inSeconds).rounded(.up))
        for remaining in stride(from: max(1, seconds), to: 0, by: -1) {
            if stopped() { break }
            let line = "rate limited: retrying in \(remaining) s (Ctrl-C gives up)"
            if styled {
                Output.writeError(.carriageReturn + .eraseLine + TerminalOutput(line))
            } else if remaining == max(1, seconds) {
                Output.writeError(TerminalOutput("hostscope: " + line + "\n"))
            }
            try? await Task.sleep(for: .seconds(1))
        }
        if styled { Output.writeError(.carriageReturn + .eraseLine) }
        return !stopped()
    }

    /// Where the interactive chat reads its lines: an editor when standard input and output are a terminal that
    /// can show one (``FleetTopView/isCapable(environment:)``), else plain lines (scripts pipe into the chat).
    static func inputLines(persistsHistory: Bool) -> any ChatLineSource {
        let environment = ProcessInfo.processInfo.environment
        if FleetTopView.isCapable(environment: environment),
            TerminalModes.remember(0, undoingAtExit: EditedInputLines.leavePasteMode),
            let edited = EditedInputLines(
                historyPath: ChatInputHistory.defaultPath(environment: environment), persistsHistory: persistsHistory)
        {
            return edited
        }
        return InputLines()
    }

    /// `chat sessions`: stored conversations, most recent first.
    private func listSessions(_ settings: CoreSettings) async throws {
        let sessions: [StoredChatSession]?
        do {
            sessions = try await ChatService(settings: settings).sessions(limit: limit)
        } catch {
            throw Output.fail(error)
        }
        guard let sessions else {
            Output.write(jsonl ? "" : "no conversations yet (\(settings.databasePath) does not exist)\n")
            return
        }
        if jsonl {
            Output.writeData(ChatSessionsText.jsonl(sessions))
        } else {
            Output.write(ChatSessionsText.table(sessions, width: Output.terminalWidth))
        }
    }

    /// The longest Retry-After a rate-limited turn waits for by itself; a provider asking for longer is said to and
    /// the turn fails (exit 9).
    static let longestRateLimitWait: Duration = .seconds(60)
    /// The wait before retrying a rate-limited turn whose provider said not when.
    static let defaultRateLimitWait: Duration = .seconds(5)

    /// Runs one turn, printing the answer (or, with `jsonl`, every event), and returns the exit status.
    /// Ctrl-C or SIGTERM stops the answer (130). A turn the provider rate-limits (HTTP 429) is run again after
    /// its Retry-After, counted down on stderr, up to `rateLimitRetries` times; Ctrl-C during the wait gives up.
    static func answer(
        _ message: String, in conversation: ChatConversation, jsonl: Bool, rateLimitRetries: Int = 3
    ) async -> Int32 {
        let session = await conversation.session
        let stopped = Atomic<Bool>(false)
        let stopping = Lock<Task<Void, Never>?>(nil)
        let signals = SignalWatcher { _ in
            stopped.store(true, ordering: .relaxed)
            let task = Task { _ = await session.stop() }
            stopping.withLock { $0 = task }
        }
        defer { signals.cancel() }
        let styled = Output.stdoutIsTerminal && !jsonl
        var renderer = MarkdownStreamRenderer(styled: styled)
        var wroteText = false
        var events = await session.send(message)
        var retriesLeft = rateLimitRetries
        while true {
            var rateLimited: ChatError?
            for await event in events {
                if case .error(let error) = event, error.kind == .rateLimited { rateLimited = error }
                if jsonl {
                    Output.writeData(event.jsonLine + "\n")
                    continue
                }
                switch event {
                case .text(let delta):
                    Output.write(renderer.feed(delta))
                    wroteText = true
                case .toolCall, .toolResult:
                    if case .toolResult(let result) = event, let (number, record) = await conversation.row(result.id) {
                        Output.writeError(ChatTimelineText.row(number, record, width: Output.terminalWidth) + "\n")
                    }
                case .error(let error):
                    Output.error("\(error.kind): \(error.message)")
                case .usage, .done:
                    break
                }
            }
            // A rate limit that lifts soon is waited out here rather than handed to the user to retry.
            guard let limit = rateLimited, retriesLeft > 0, !wroteText, !stopped.load(ordering: .relaxed) else { break }
            let wait = limit.retryAfter ?? defaultRateLimitWait
            guard wait <= longestRateLimitWait else {
                Output.note("the provider asks to wait \(DurationText.format(wait)); not waiting that long")
                break
            }
            retriesLeft -= 1
            guard await countDown(wait, stopped: { stopped.load(ordering: .relaxed) }) else { break }
            events = await session.retry()
        }
        if !jsonl {
            let tail = renderer.finish()
            Output.write(tail + (wroteText ? "\n" : ""))
        }
        // The stream ends as soon as the stop cancels it; the gateway's DELETE may still be on its way.
        // (Ctrl-C during a rate limit's wait gives up: 130 below.)
        await stopping.withLock { $0 }?.value
        await conversation.save()
        if stopped.load(ordering: .relaxed) { return 130 }
        guard let summary = await session.lastTurn else { return ExitStatus.chat.rawValue }
        if summary.finishReason == .stopped { return 130 }
        return summary.error == nil && summary.finishReason != .error ? 0 : ExitStatus.chat.rawValue
    }
}
