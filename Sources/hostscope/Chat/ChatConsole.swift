import Chat
import Foundation
import HostscopeCore
import Synchronization
import TerminalUI
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// The interactive chat on a terminal: a prompt, the answer streamed with Markdown rendered, tool calls as
/// timeline rows, a status line per turn, and the slash commands of ``ChatInput``.
///
/// Ctrl-C stops the running answer (not the program); Ctrl-D or `/quit` leaves. Lines typed while an answer
/// streams are read too: `/stop` stops it. On a terminal the input is edited (``EditedInputLines``); from a pipe it
/// is read a line at a time (``InputLines``).
struct ChatConsole {
    let chat: ChatConversation
    private let styled = Output.stdoutIsTerminal
    private let lines: any ChatLineSource
    private let state = ConsoleState()

    init(chat: ChatConversation, lines: any ChatLineSource) {
        self.chat = chat
        self.lines = lines
    }

    /// What the signal handler needs to know: the answer streaming now, a countdown to skip.
    private final class ConsoleState: Sendable {
        struct Values {
            var streaming: ChatSession?
            var countdown: Task<Void, Never>?
            var terminating = false
            /// Lines typed while an answer streamed, run after it.
            var typedAhead: [String] = []
        }

        private let values = Lock(Values())

        func withLock<T>(_ body: (inout Values) -> T) -> T {
            values.withLock { body(&$0) }
        }
    }

    func run() async {
        lines.startReading()
        let signals = SignalWatcher { [state, lines] number in
            let (session, countdown) = state.withLock { state -> (ChatSession?, Task<Void, Never>?) in
                if number == SIGTERM { state.terminating = true }
                return (state.streaming, state.countdown)
            }
            if let session {
                Task { await session.stop() }
            } else if let countdown {
                countdown.cancel()
            } else if number == SIGINT {
                // Between answers; where input is edited, the editor draws the next prompt itself.
                let prompt = lines.drawsPrompt ? "" : Self.prompt
                Output.write("\n(Ctrl-C stops an answer; /quit or Ctrl-D leaves)\n" + prompt)
            }
            if number == SIGTERM { lines.close() }
        }
        defer { signals.cancel() }
        await greet()
        while true {
            let queued = state.withLock { $0.typedAhead.isEmpty ? nil : $0.typedAhead.removeFirst() }
            if let queued { Output.write(Self.prompt + queued + "\n") }
            var next = queued
            if next == nil { next = await lines.line(prompt: Self.prompt) }
            guard let line = next else {
                Output.write("\n")
                break
            }
            if state.withLock({ $0.terminating }) { break }
            if await !handle(ChatInput.parse(line)) { break }
        }
        await chat.save()
        let id = await chat.header.id
        if chat.isStored {
            Output.write(dim("conversation \(id) stored; continue it with: hostscope chat --resume \(id)") + "\n")
        }
    }

    static let prompt = "› "

    private func greet() async {
        let session = await chat.session
        let header = await chat.header
        var text = "hostscope chat with \(TerminalText.sanitize(header.host)) · \(header.provider.rawValue) "
        text += TerminalText.sanitize(await session.model)
        if let root = header.root { text += " · root \(TerminalText.sanitize(root))" }
        let timeline = await session.timeline
        let messages = await session.messages
        if !timeline.isEmpty || !messages.isEmpty {
            text += " · resumed \(header.id) (\(timeline.count) tool calls so far)"
        }
        Output.write(dim(text + " · /help for commands") + "\n")
    }

    /// Carries out one input; `false` to leave.
    private func handle(_ input: ChatInput) async -> Bool {
        let session = await chat.session
        switch input {
        case .empty:
            break
        case .message(let text):
            await runTurn(await session.send(text))
        case .retry:
            await runTurn(await session.retry())
        case .stop:
            Output.write("nothing is running\n")
        case .model(let name):
            await session.switchModel(name)
            Output.write("model: \(TerminalText.sanitize(name)) from the next question on\n")
        case .system(let text):
            await session.setSystemPrompt(text)
            Output.write(text == nil ? "system prompt removed\n" : "system prompt set\n")
        case .tools:
            Output.write(ChatTimelineText.tools(chat.tools.tools))
            if let root = chat.tools.root {
                Output.write("file tools confined to \(TerminalText.sanitize(root))\n")
            }
        case .trace(let target):
            await showTrace(target, session: session)
        case .inspect(let number):
            let timeline = await session.timeline
            guard number <= timeline.count else {
                Output.write("no row \(number): the timeline has \(timeline.count) row(s)\n")
                break
            }
            Output.write(ChatTimelineText.inspect(number, timeline[number - 1]))
        case .export(let format, let path):
            await export(format, to: path)
        case .new:
            await chat.startNewConversation()
            Output.write("new conversation \(await chat.header.id)\n")
        case .sessions:
            await listSessions()
        case .help:
            Output.write(ChatInput.helpText + "\n")
        case .quit:
            return false
        case .invalid(let message):
            Output.write(message + "\n")
        }
        return true
    }

    // MARK: - A turn

    private func runTurn(_ events: AsyncStream<ChatEvent>) async {
        let session = await chat.session
        state.withLock { $0.streaming = session }
        // While the answer streams, typed lines are read too, so that /stop works; others wait for the answer.
        let watcher = Task { [state, lines] in
            while !Task.isCancelled, let line = await lines.typedLine() {
                switch ChatInput.parse(line) {
                case .stop: await session.stop()
                case .empty: break
                default: state.withLock { $0.typedAhead.append(line) }
                }
            }
        }
        let started = ContinuousClock.now
        var renderer = MarkdownStreamRenderer(styled: styled)
        var atLineStart = true
        var openRow: String?
        var rateLimit: Int?
        func write(_ output: TerminalOutput) {
            guard !output.isEmpty else { return }
            Output.write(output)
            atLineStart = output.endsLine
            openRow = nil
        }
        func breakLine() {
            write(renderer.finish())
            if !atLineStart { write("\n") }
        }
        // Until the first event, a dim line says the model is being waited for; the first event erases it.
        var waiting = styled
        if waiting { Output.write(dim("… waiting for \(await session.model)")) }
        for await event in events {
            if waiting {
                Output.write(.carriageReturn + .eraseLine)
                waiting = false
            }
            switch event {
            case .text(let delta):
                write(renderer.feed(delta))
            case .toolCall(let call):
                breakLine()
                guard let (number, record) = await chat.row(call.id) else { break }
                write(ChatTimelineText.row(number, record, width: Output.terminalWidth, styled: styled) + "\n")
                openRow = call.id
            case .toolResult(let result):
                guard let (number, record) = await chat.row(result.id) else { break }
                let line = ChatTimelineText.row(number, record, width: Output.terminalWidth, styled: styled)
                if styled, openRow == result.id {
                    // The running row is the line just above: rewrite it in place.
                    write(.cursorUp(1) + .carriageReturn + .eraseLine + line + "\n")
                } else {
                    breakLine()
                    write(line + "\n")
                }
            case .error(let error):
                breakLine()
                write(red("✗ \(error.kind): \(error.message)") + "\n")
                if error.kind == .rateLimited { rateLimit = error.retryAfterSeconds }
            case .usage:
                break
            case .done(let reason, _):
                breakLine()
                if reason == .stopped {
                    write(dim("(stopped; the answer so far is kept — /retry to ask again)") + "\n")
                }
            }
        }
        if waiting { Output.write(.carriageReturn + .eraseLine) }
        watcher.cancel()
        // A /stop it is carrying out finishes first (the gateway's DELETE included).
        await watcher.value
        state.withLock { $0.streaming = nil }
        let elapsed = ContinuousClock.now - started
        let usage = await session.totalUsage
        var status = ChatTimelineText.status(model: await session.model, usage: usage, elapsed: elapsed)
        if chat.runsToolsServerSide, let totals = try? await session.gatewayStatus() {
            // The gateway keeps its own totals for the session; show what it says next to ours.
            status += " · gateway \(TerminalText.sanitize(totals.sessionID))"
            if let state = totals.state { status += " \(TerminalText.sanitize(state))" }
            if let cost = totals.totalCost { status += " " + FigureText.cost(cost) }
        }
        write(dim(status) + "\n")
        await chat.save()
        if let seconds = rateLimit, seconds > 0 {
            await countDown(seconds)
        }
    }

    /// Counts down a rate limit's Retry-After; Ctrl-C skips it.
    private func countDown(_ seconds: Int) async {
        let styled = styled
        let task = Task {
            for remaining in stride(from: seconds, to: 0, by: -1) {
                let text = TerminalOutput("rate limited: /retry in \(remaining) s (Ctrl-C skips the wait)")
                Output.write(styled ? .carriageReturn + .eraseLine + text : text + "\n")
                do { try await Task.sleep(for: .seconds(1)) } catch { break }
            }
            Output.write((styled ? .carriageReturn + .eraseLine : TerminalOutput()) + "you can /retry now\n")
        }
        state.withLock { $0.countdown = task }
        await task.value
        state.withLock { $0.countdown = nil }
    }

    // MARK: - Commands

    private func showTrace(_ target: String, session: ChatSession) async {
        var spanID = target
        if let number = Int(target) {
            let timeline = await session.timeline
            guard number >= 1, number <= timeline.count else {
                Output.write("no row \(number): the timeline has \(timeline.count) row(s)\n")
                return
            }
            guard let span = timeline[number - 1].call.span?.spanID else {
                Output.write("row \(number) has no span (tracing recorded none for it)\n")
                return
            }
            spanID = span
        }
        guard spanID.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) || (65...70).contains($0) })
        else {
            Output.write("/trace takes a row number or a span id (hex digits)\n")
            return
        }
        if let found = await chat.trace(spanPrefix: spanID) {
            Output.write(TraceText.show(found.tree, traceSize: found.traceSize))
        } else {
            Output.write("no span \(spanID) in this process or the database\n")
        }
    }

    private func export(_ format: ChatInput.ExportFormat, to path: String?) async {
        do {
            let file = try await chat.export(format, to: path)
            Output.write("wrote \(file)\n")
        } catch {
            Output.write(red(error.message) + "\n")
        }
    }

    private func listSessions() async {
        do {
            guard let sessions = try await chat.storedSessions(limit: 20) else {
                Output.write("conversations are not stored (--no-history)\n")
                return
            }
            Output.write(ChatSessionsText.table(sessions, width: Output.terminalWidth))
        } catch {
            Output.write(red(error.message) + "\n")
        }
    }

    private func dim(_ text: String) -> TerminalOutput {
        styled ? TerminalOutput(text, style: .dim) : TerminalOutput(text)
    }
    private func red(_ text: String) -> TerminalOutput {
        styled ? TerminalOutput(text, style: .red) : TerminalOutput(text)
    }
}

/// Where the chat's lines come from.
protocol ChatLineSource: Sendable {
    /// Whether ``line(prompt:)`` draws the prompt itself (else it is written before the line is read).
    var drawsPrompt: Bool { get }
    /// Starts reading.
    func startReading()
    /// The next line after `prompt`, or `nil` at the end of input.
    func line(prompt: String) async -> String?
    /// A line typed while an answer streams; `nil` at the end of input or when the calling task is cancelled while
    /// waiting (a line that arrives afterwards stays for the next reader).
    func typedLine() async -> String?
    /// Ends input as if Ctrl-D was typed.
    func close()
}

/// Lines from standard input, read on a thread of their own so that the chat can wait for them without
/// holding a thread of the cooperative pool: input from a pipe or a file, or a terminal that cannot edit.
final class InputLines: ChatLineSource {
    var drawsPrompt: Bool { false }

    private enum Outcome: Sendable, Equatable {
        case line(String)
        case end
        case cancelled
        case wait
    }

    private struct State {
        var lines: [String] = []
        var waiter: CheckedContinuation<Outcome, Never>?
        var closed = false
    }

    private let state = Lock(State())

    /// Starts the reading thread; it ends at end of input.
    func startReading() {
        let thread = Thread { [self] in
            while let line = readLine(strippingNewline: true) {
                deliver(line)
            }
            deliver(nil)
        }
        thread.start()
    }

    /// Ends input as if Ctrl-D was typed.
    func close() {
        deliver(nil)
    }

    private func deliver(_ line: String?) {
        let waiter = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
            if state.closed { return nil }
            if line == nil { state.closed = true }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            if let line { state.lines.append(line) }
            return nil
        }
        waiter?.resume(returning: line.map(Outcome.line) ?? .end)
    }

    func line(prompt: String) async -> String? {
        Output.write(prompt)
        return await next(untilCancelled: false)
    }

    func typedLine() async -> String? {
        await next(untilCancelled: true)
    }

    /// The next line; with `untilCancelled`, `nil` also when the calling task is cancelled while waiting (a line
    /// that arrives afterwards stays for the next reader).
    func next(untilCancelled: Bool) async -> String? {
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let ready = state.withLock { state -> Outcome in
                    if !state.lines.isEmpty { return .line(state.lines.removeFirst()) }
                    if state.closed { return .end }
                    if untilCancelled, Task.isCancelled { return .cancelled }
                    state.waiter = continuation
                    return .wait
                }
                if ready != .wait { continuation.resume(returning: ready) }
            }
        } onCancel: {
            guard untilCancelled else { return }
            let waiter = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: .cancelled)
        }
        if case .line(let line) = outcome { return line }
        return nil
    }
}
