import Dispatch
import Foundation
import HostscopeCore
import LineEditing
import Synchronization
import TerminalUI
import ValueFormats

/// The chat's input on a terminal: each line edited at the prompt (``LineEditor``: Emacs keys, the history of
/// earlier chats, `Tab` completing slash commands, a bracketed paste as one message), and lines typed while an
/// answer streams read in the terminal's own mode, so that `/stop` and Ctrl-C work as before.
///
/// `Ctrl-C` on a line abandons it; on an empty line it says how to leave, and a second one right after leaves, as
/// `Ctrl-D` on an empty line does. The editor runs on a thread of its own, which owns it; the chat's tasks hand it
/// one request at a time and wait without holding a thread of the cooperative pool.
final class EditedInputLines: ChatLineSource {
    var drawsPrompt: Bool { true }

    /// What turns bracketed paste off, should the program end while the editor has it on.
    static let leavePasteMode = LineEditor.leavePasteMode

    private enum Request {
        case prompt(String)
        case typed
    }

    private struct State {
        var request: Request?
        var waiter: CheckedContinuation<String?, Never>?
        /// The task waiting for a typed line was cancelled.
        var cancelled = false
        var closed = false
        /// What wakes the editor's thread; set once the editor runs.
        var wakeup: LineEditor.Wakeup?
    }

    /// What the chat's tasks and the editor's thread share.
    private final class Shared: Sendable {
        let state = Lock(State())
        let requests = DispatchSemaphore(value: 0)

        func wake() {
            state.withLock { $0.wakeup }?.wake()
        }
    }

    private let shared = Shared()

    /// Starts the editor's thread on this terminal with the history at `historyPath`; `nil` when no editor can run
    /// here (the chat then reads plain lines).
    ///
    /// - Parameter persistsHistory: whether new lines are added to the history file.
    init?(historyPath: String, persistsHistory: Bool) {
        let started = DispatchSemaphore(value: 0)
        let shared = self.shared
        let thread = Thread {
            let editor: LineEditor
            do {
                editor = try LineEditor(historyLimit: ChatInputHistory.defaultLimit)
            } catch {
                started.signal()
                return
            }
            editor.completion = { ChatInput.completions(for: $0) }
            var history = ChatInputHistory(
                path: historyPath, persists: persistsHistory, diagnostics: Output.diagnostics)
            for line in history.lines { editor.addHistory(line) }
            shared.state.withLock { $0.wakeup = editor.wakeup }
            started.signal()
            Self.serve(editor, history: &history, shared: shared)
        }
        thread.name = "hostscope-line-editor"
        thread.start()
        started.wait()
        guard shared.state.withLock({ $0.wakeup != nil }) else { return nil }
    }

    func startReading() {}

    func line(prompt: String) async -> String? {
        await withCheckedContinuation { continuation in
            submit(.prompt(prompt), continuation)
        }
    }

    func typedLine() async -> String? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                submit(.typed, continuation)
            }
        } onCancel: { [shared] in
            shared.state.withLock { $0.cancelled = true }
            shared.wake()
        }
    }

    func close() {
        shared.state.withLock { $0.closed = true }
        shared.wake()
    }

    private func submit(_ request: Request, _ continuation: CheckedContinuation<String?, Never>) {
        let accepted = shared.state.withLock { state -> Bool in
            guard !state.closed else { return false }
            if case .typed = request, Task.isCancelled { return false }
            state.request = request
            state.waiter = continuation
            state.cancelled = false
            return true
        }
        if accepted {
            shared.requests.signal()
        } else {
            continuation.resume(returning: nil)
        }
    }

    // MARK: - The editor's thread

    private static func serve(_ editor: LineEditor, history: inout ChatInputHistory, shared: Shared) {
        while true {
            shared.requests.wait()
            guard let request = shared.state.withLock({ $0.request }) else { continue }
            let answer: String? =
                switch request {
                case .prompt(let prompt): edit(editor, prompt: prompt, history: &history, shared: shared)
                case .typed: typed(editor, history: &history, shared: shared)
                }
            let waiter = shared.state.withLock { state -> CheckedContinuation<String?, Never>? in
                state.request = nil
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: answer)
        }
    }

    private static func edit(
        _ editor: LineEditor, prompt: String, history: inout ChatInputHistory, shared: Shared
    ) -> String? {
        while !shared.state.withLock({ $0.closed }) {
            switch editor.readLine(prompt: prompt) {
            case .line(let line):
                if history.record(line) { editor.addHistory(line) }
                return line
            case .end:
                break
            case .interrupted(let lineWasEmpty, let repeated):
                if repeated { break }
                if lineWasEmpty {
                    Output.write(
                        TerminalOutput("(Ctrl-C again or Ctrl-D leaves; /help lists the commands)", style: .dim) + "\n")
                }
                continue
            case .woken:
                // A wake meant for an earlier request, or the chat closing (checked above).
                continue
            }
            shared.state.withLock { $0.closed = true }
        }
        return nil
    }

    private static func typed(_ editor: LineEditor, history: inout ChatInputHistory, shared: Shared) -> String? {
        while !shared.state.withLock({ $0.closed || $0.cancelled }) {
            switch editor.readTypedLine() {
            case .line(let line):
                if history.record(line) { editor.addHistory(line) }
                return line
            case .end:
                shared.state.withLock { $0.closed = true }
                return nil
            case .interrupted, .woken:
                continue
            }
        }
        return nil
    }
}
