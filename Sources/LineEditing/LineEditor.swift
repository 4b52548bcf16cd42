import CLibEdit

#if canImport(Glibc)
    import Glibc
#endif

/// A line typed on a terminal, edited with libedit's Emacs keys: history, completion and bracketed paste.
///
/// The keys are libedit's (`←` `→` `Home` `End`, `Ctrl-A` `Ctrl-E` `Ctrl-K` `Ctrl-L`, `↑` `↓` through the
/// history) with readline's meanings for `Ctrl-U` (delete to the start of the line) and `Ctrl-W` (delete the
/// word before the cursor); `~/.editrc` is read as OpenSSH's sftp reads it (lines for this editor start with
/// `hostscope:`), before the keys below are bound, which it cannot change:
///
/// - `Ctrl-C` abandons the line (it stays on the screen marked `^C`) and ``readLine(prompt:)`` says so;
/// - `Ctrl-D` on an empty line ends input, elsewhere it deletes the character under the cursor;
/// - `Tab` completes the word before the cursor from ``completion``;
/// - a bracketed paste (the terminal marks what is pasted, `ESC [200~` … `ESC [201~`) is inserted whole,
///   newlines kept, rather than read as keys, so that a pasted block is one line of input. libedit has no
///   bracketed paste: this editor turns it on while it reads and reads the block itself.
///
/// While a line is edited the terminal is in libedit's mode, with signals off (`Ctrl-C` is a key then, and
/// `Ctrl-Z` suspends the program itself); between lines it is in the mode it had. The process's character type
/// becomes UTF-8 (`C.UTF-8` when the environment's is not), which libedit needs to draw text. An editor is not `Sendable`: create it, read lines and end it
/// on one thread (each call blocks until the person is done); ``Wakeup`` interrupts it from others.
public final class LineEditor {
    /// How a read ended.
    public enum Outcome: Sendable, Equatable {
        /// A line, without its newline; a pasted block keeps its own newlines.
        case line(String)
        /// `Ctrl-C`: the line was abandoned. `lineWasEmpty` when nothing was typed on it; `repeated` when it
        /// came on an empty line right after another `Ctrl-C` on an empty line, with no key between.
        case interrupted(lineWasEmpty: Bool, repeated: Bool)
        /// `Ctrl-D` on an empty line, or the end of input.
        case end
        /// ``Wakeup/wake()`` was called while (or before) reading.
        case woken
    }

    /// Interrupts a read in progress, or the next one, from any thread.
    public final class Wakeup: Sendable {
        fileprivate let readEnd: Int32
        private let writeEnd: Int32

        fileprivate init() throws(LineEditorError) {
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else {
                throw LineEditorError(message: "cannot create a pipe for the line editor: \(errnoText(errno))")
            }
            for end in ends {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            }
            readEnd = ends[0]
            writeEnd = ends[1]
        }

        deinit {
            close(readEnd)
            close(writeEnd)
        }

        /// Makes the read in progress return ``Outcome/woken``, or the next read if none is in progress.
        public func wake() {
            var byte: UInt8 = 1
            _ = write(writeEnd, &byte, 1)
        }

        /// Empties the pipe; whether anything was in it.
        fileprivate func drain() -> Bool {
            var buffer = [UInt8](repeating: 0, count: 64)
            var drained = false
            while buffer.withUnsafeMutableBytes({ read(readEnd, $0.baseAddress, $0.count) }) > 0 { drained = true }
            return drained
        }
    }

    /// What turns bracketed paste on, while the editor reads.
    public static let enterPasteMode = "\u{1B}[?2004h"
    /// What turns it off again.
    public static let leavePasteMode = "\u{1B}[?2004l"

    /// What wakes the editor from another thread.
    public let wakeup: Wakeup
    /// Completes the word before the cursor on `Tab`: given the line's text up to the cursor, the words that
    /// may replace its last word (the text after its last space). One is inserted with a space after it;
    /// several insert what they share, and when they share no more than is typed, they are listed below the line.
    public var completion: ((String) -> [String])?

    private let editLine: OpaquePointer
    private let history: OpaquePointer
    private let streams: [UnsafeMutablePointer<FILE>]
    /// The names and help texts of the functions added to libedit, which keeps pointers to them.
    private var functionNames: [UnsafeMutablePointer<wchar_t>] = []
    private let input: Int32
    private let output: Int32
    /// The prompt, NUL-terminated: libedit asks for it on every redraw.
    fileprivate private(set) var prompt = UnsafeMutableBufferPointer<wchar_t>.allocate(capacity: 1)
    /// What was typed in the terminal's mode and not yet returned as a line.
    private var typed: [UInt8] = []
    /// Bytes read from the terminal and not yet handed to libedit (part of a UTF-8 sequence).
    private var pending: [UInt8] = []
    private var size = (columns: UInt16(0), rows: UInt16(0))
    /// Characters handed to libedit so far, to tell a `Ctrl-C` right after another from one with keys between.
    private var charactersRead = 0
    /// `charactersRead` when `Ctrl-C` was last typed on an empty line.
    private var emptyInterruptAt: Int?
    /// Set by the key functions and the reader during a read; ``readLine(prompt:)`` reports it.
    private var interruption: Outcome?
    private var woken = false
    /// The terminal's mode outside the editor, read as each line starts.
    private var ownMode = termios()

    /// An editor on `input` and `output` (standard input and output by default), with a history of at most
    /// `historyLimit` lines.
    ///
    /// - Throws: ``LineEditorError`` when either is not a terminal or libedit cannot start there.
    public init(input: Int32 = 0, output: Int32 = 1, historyLimit: Int = 1000) throws(LineEditorError) {
        guard isatty(input) == 1, isatty(output) == 1 else {
            throw LineEditorError(message: "line editing needs a terminal on standard input and output")
        }
        Self.useUTF8Characters()
        prompt.initialize(repeating: 0)
        self.input = input
        self.output = output
        wakeup = try Wakeup()
        guard let history = history_winit() else {
            throw LineEditorError(message: "libedit could not create a history")
        }
        // libedit works through stdio: streams of its own on copies of the descriptors (closed with the editor),
        // flushed by libedit after every change, so that its writes and the program's own (straight to the
        // descriptor) keep their order.
        var streams: [UnsafeMutablePointer<FILE>] = []
        for (descriptor, mode) in [(input, "r"), (output, "w"), (2, "w")] {
            let copy = dup(descriptor)
            if copy >= 0, let stream = fdopen(copy, mode) {
                streams.append(stream)
            } else if copy >= 0 {
                close(copy)
            }
        }
        guard streams.count == 3, let editLine = el_init("hostscope", streams[0], streams[1], streams[2]) else {
            streams.forEach { fclose($0) }
            history_wend(history)
            throw LineEditorError(message: "libedit could not start on this terminal (TERM=\(Self.terminalName))")
        }
        self.streams = streams
        self.history = history
        self.editLine = editLine
        hostscope_history_set_size(history, Int32(clamping: max(1, historyLimit)))
        hostscope_history_set_unique(history, 1)
        hostscope_el_set_client_data(editLine, Unmanaged.passUnretained(self).toOpaque())
        hostscope_el_set_history(editLine, history)
        hostscope_el_set_prompt(editLine, promptFunction)
        hostscope_el_set_read_function(editLine, readFunction)
        configureKeys()
    }

    deinit {
        el_end(editLine)
        history_wend(history)
        streams.forEach { fclose($0) }
        functionNames.forEach { $0.deallocate() }
        prompt.deallocate()
    }

    /// Reads one line after `prompt`, the person editing it until Enter, `Ctrl-C` or `Ctrl-D`.
    public func readLine(prompt text: String) -> Outcome {
        let characters = Self.wide(text)
        prompt.deallocate()
        prompt = .allocate(capacity: characters.count)
        _ = prompt.initialize(from: characters)
        interruption = nil
        woken = false
        tcgetattr(input, &ownMode)
        // Bracketed paste only while this editor reads: elsewhere a paste is typed text, as the program expects.
        writeOutput(Self.enterPasteMode)
        defer { writeOutput(Self.leavePasteMode) }
        var count: Int32 = 0
        let line = el_wgets(editLine, &count)
        if let interruption { return interruption }
        if woken { return .woken }
        guard let line, count > 0 else { return .end }
        var text = Self.string(line, count: Int(count))
        if text.hasSuffix("\n") { text.removeLast() }
        return .line(text)
    }

    /// Reads one line typed in the terminal's own mode (echoed, erased with its erase keys, `Ctrl-C` a signal),
    /// while other output goes on: what is typed while the program is busy. A bracketed paste is one line here
    /// too, ending at the first newline after the paste.
    public func readTypedLine() -> Outcome {
        writeOutput(Self.enterPasteMode)
        defer { writeOutput(Self.leavePasteMode) }
        while true {
            if let line = Self.completeTypedLine(&typed) { return .line(line) }
            switch waitForInput(timeout: -1) {
            case .woken: return .woken
            case .timeout: continue
            case .ready: break
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count > 0 else {
                // End of input: what was typed without a newline is still a line.
                defer { typed.removeAll() }
                return typed.isEmpty ? .end : .line(Self.pastedText(typed))
            }
            typed += buffer[..<count]
        }
    }

    /// Adds a line to the history that `↑` and `↓` walk through (a line equal to the last one is not added twice).
    public func addHistory(_ line: String) {
        let wide = Self.wide(line)
        hostscope_history_enter(history, wide)
    }

    // MARK: - Keys

    private func configureKeys() {
        hostscope_el_set_editor(editLine, Self.wide("emacs"))
        // readline's Ctrl-U and Ctrl-W; Home, End, Delete and Ctrl-arrows as xterm and tmux send them.
        for (keys, function) in [
            ("^U", "vi-kill-line-prev"), ("^W", "ed-delete-prev-word"), ("\\e[1~", "ed-move-to-beg"),
            ("\\e[7~", "ed-move-to-beg"), ("\\e[H", "ed-move-to-beg"), ("\\eOH", "ed-move-to-beg"),
            ("\\e[4~", "ed-move-to-end"), ("\\e[8~", "ed-move-to-end"), ("\\e[F", "ed-move-to-end"),
            ("\\eOF", "ed-move-to-end"), ("\\e[3~", "ed-delete-next-char"), ("\\e[1;5C", "em-next-word"),
            ("\\e[1;5D", "ed-prev-word"), ("\\e[1;3C", "em-next-word"), ("\\e[1;3D", "ed-prev-word"),
        ] {
            bind(keys, as: function)
        }
        _ = el_source(editLine, nil)
        hostscope_el_set_edit_mode_tty(editLine, Self.wide("-isig"))
        addFunction("hostscope-interrupt", "Abandon the line", interruptKey)
        addFunction("hostscope-end-or-delete", "End input on an empty line, else delete a character", endOrDeleteKey)
        addFunction("hostscope-complete", "Complete the word before the cursor", completeKey)
        addFunction("hostscope-paste", "Insert a bracketed paste", pasteKey)
        addFunction("hostscope-suspend", "Suspend the program, as the shell's job control does", suspendKey)
        bind("^C", as: "hostscope-interrupt")
        bind("^D", as: "hostscope-end-or-delete")
        bind("^I", as: "hostscope-complete")
        bind("\\e[200~", as: "hostscope-paste")
        bind("^Z", as: "hostscope-suspend")
    }

    private func bind(_ keys: String, as function: String) {
        hostscope_el_bind(editLine, Self.wide(keys), Self.wide(function))
    }

    private func addFunction(_ name: String, _ help: String, _ function: hostscope_el_key_function) {
        // libedit keeps the name and help pointers it is given, without copies: they live as long as the editor.
        let texts = [name, help].map { text in
            let characters = Self.wide(text)
            let copy = UnsafeMutablePointer<wchar_t>.allocate(capacity: characters.count)
            copy.initialize(from: characters, count: characters.count)
            return copy
        }
        functionNames += texts
        hostscope_el_add_function(editLine, texts[0], texts[1], function)
    }

    /// The line as libedit holds it: the text before the cursor, and after it.
    private func lineText() -> (before: String, after: String) {
        guard let info = el_wline(editLine)?.pointee, let buffer = info.buffer, let cursor = info.cursor,
            let last = info.lastchar
        else { return ("", "") }
        return (
            Self.string(buffer, count: buffer.distance(to: cursor)),
            Self.string(cursor, count: cursor.distance(to: last))
        )
    }

    fileprivate func interrupt() -> UInt8 {
        let (before, after) = lineText()
        let empty = before.isEmpty && after.isEmpty
        let repeated = empty && emptyInterruptAt == charactersRead - 1
        emptyInterruptAt = empty ? charactersRead : nil
        interruption = .interrupted(lineWasEmpty: empty, repeated: repeated)
        // The line stays on the screen, marked as the terminal marks an interrupted line; the pushed Return
        // ends the read once it is drawn.
        el_cursor(editLine, Int32(clamping: after.unicodeScalars.count))
        el_winsertstr(editLine, Self.wide("^C"))
        el_wpush(editLine, Self.wide("\r"))
        return UInt8(CC_REFRESH)
    }

    fileprivate func endOrDelete() -> UInt8 {
        let (before, after) = lineText()
        if before.isEmpty, after.isEmpty { return UInt8(CC_EOF) }
        guard !after.isEmpty else { return UInt8(CC_ERROR) }
        el_cursor(editLine, 1)
        el_deletestr(editLine, 1)
        return UInt8(CC_REFRESH)
    }

    fileprivate func complete() -> UInt8 {
        guard let completion else { return UInt8(CC_ERROR) }
        let before = lineText().before
        let word = before.split(separator: " ", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        let candidates = completion(before).filter { $0.hasPrefix(word) }
        guard let first = candidates.first else { return UInt8(CC_REFRESH_BEEP) }
        if candidates.count == 1 {
            insert(String(first.dropFirst(word.count)) + " ")
            return UInt8(CC_REFRESH)
        }
        let shared = candidates.dropFirst().reduce(first) { shared, candidate in
            String(zip(shared, candidate).prefix { $0 == $1 }.map(\.0))
        }
        if shared.count > word.count {
            insert(String(shared.dropFirst(word.count)))
            return UInt8(CC_REFRESH)
        }
        writeOutput("\r\n" + Self.columns(candidates, width: terminalColumns) + "\r\n")
        return UInt8(CC_REDISPLAY)
    }

    /// `Ctrl-Z`: signals are off while a line is edited, so the stop the terminal would send is sent here, in the
    /// terminal's own mode (the shell that takes over expects it), and the editing mode comes back with the line.
    fileprivate func suspend() -> UInt8 {
        var editing = termios()
        guard tcgetattr(input, &editing) == 0 else { return UInt8(CC_ERROR) }
        var own = ownMode
        tcsetattr(input, TCSADRAIN, &own)
        writeOutput(Self.leavePasteMode + "\r\n")
        // This thread may have been started with the stop signal blocked (threads inherit the mask of the one that
        // made them): unblocked for the call, the stop takes effect before raise returns.
        var stop = sigset_t()
        var mask = sigset_t()
        sigemptyset(&stop)
        sigaddset(&stop, SIGTSTP)
        pthread_sigmask(SIG_UNBLOCK, &stop, &mask)
        raise(SIGTSTP)
        pthread_sigmask(SIG_SETMASK, &mask, nil)
        // Continued (`fg`): back to editing, the line drawn again.
        tcsetattr(input, TCSADRAIN, &editing)
        writeOutput(Self.enterPasteMode)
        return UInt8(CC_REDISPLAY)
    }

    fileprivate func paste() -> UInt8 {
        let end = Array("\u{1B}[201~".unicodeScalars)
        var scalars: [Unicode.Scalar] = []
        var character: wchar_t = 0
        while el_wgetc(editLine, &character) == 1 {
            guard let scalar = Unicode.Scalar(UInt32(bitPattern: character)) else { continue }
            scalars.append(scalar)
            if scalars.count >= end.count, Array(scalars.suffix(end.count)) == end {
                scalars.removeLast(end.count)
                break
            }
        }
        var text = String.UnicodeScalarView()
        text.append(contentsOf: scalars)
        insert(Self.pastedText(Array(String(text).utf8)))
        return UInt8(CC_REFRESH)
    }

    private func insert(_ text: String) {
        guard !text.isEmpty else { return }
        el_winsertstr(editLine, Self.wide(text))
    }

    // MARK: - Reading

    private enum Readiness {
        case ready
        case timeout
        case woken
    }

    /// Waits until the terminal has input or the editor is woken, at most `timeout` milliseconds (-1: no limit).
    private func waitForInput(timeout: Int32) -> Readiness {
        var descriptors = [
            pollfd(fd: input, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeup.readEnd, events: Int16(POLLIN), revents: 0),
        ]
        let count = poll(&descriptors, 2, timeout)
        if count <= 0 { return .timeout }
        if descriptors[1].revents != 0, wakeup.drain() { return .woken }
        return descriptors[0].revents != 0 ? .ready : .timeout
    }

    /// libedit's character reader: one character from the terminal, decoded from UTF-8 here so that input does not
    /// depend on the locale; 0 at the end of input or when woken. The terminal's size is checked while it waits.
    fileprivate func readCharacter(into character: UnsafeMutablePointer<wchar_t>) -> Int32 {
        while true {
            if let scalar = Self.decode(&pending) {
                character.pointee = wchar_t(bitPattern: scalar.value)
                charactersRead += 1
                return 1
            }
            switch waitForInput(timeout: 250) {
            case .woken:
                woken = true
                return 0
            case .timeout:
                followTerminalSize()
                continue
            case .ready:
                break
            }
            var byte: UInt8 = 0
            let count = Glibc.read(input, &byte, 1)
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count == 1 else { return count == 0 ? 0 : -1 }
            pending.append(byte)
        }
    }

    /// Redraws the line when the terminal changed size (libedit follows SIGWINCH only when it handles signals
    /// itself, which would take SIGINT and SIGTERM from the program).
    private func followTerminalSize() {
        var window = winsize()
        guard ioctl(output, UInt(TIOCGWINSZ), &window) == 0 else { return }
        let current = (window.ws_col, window.ws_row)
        guard current != size else { return }
        let first = size == (0, 0)
        let oldColumns = Int(size.columns)
        size = current
        guard !first else { return }
        el_resize(editLine)
        // libedit redraws the prompt and the line from where it believes the line starts; the cursor is where the
        // typing left it. Back to the line's first row (as wide as the terminal was) and clear from there down,
        // so the prompt is drawn once, not after the old one.
        writeOutput(Self.clearingLine(cursorColumn: promptWidth + lineText().before.count, columns: oldColumns))
        hostscope_el_refresh(editLine)
    }

    /// What takes the cursor from `cursorColumn` of a line (counted from the line's start, prompt included, on a
    /// terminal `columns` wide) to the line's first row and clears from there to the end of the screen.
    static func clearingLine(cursorColumn: Int, columns: Int) -> String {
        let rowsAbove = columns > 0 ? cursorColumn / columns : 0
        return "\r" + (rowsAbove > 0 ? "\u{1B}[\(rowsAbove)A" : "") + "\u{1B}[J"
    }

    /// The prompt's width in columns (its characters; the prompt holds no escape sequences).
    private var promptWidth: Int { prompt.prefix { $0 != 0 }.count }

    private var terminalColumns: Int {
        var window = winsize()
        guard ioctl(output, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0 else { return 80 }
        return Int(window.ws_col)
    }

    /// `items` in as many columns as `width` holds, row by row, each column as wide as the widest item and two
    /// spaces.
    static func columns(_ items: [String], width: Int) -> String {
        let cell = (items.map(\.count).max() ?? 0) + 2
        let perRow = max(1, width / cell)
        var rows: [String] = []
        for start in stride(from: 0, to: items.count, by: perRow) {
            let row = items[start..<min(start + perRow, items.count)]
            var line = ""
            for (offset, item) in row.enumerated() {
                line += item
                if offset < row.count - 1 { line += String(repeating: " ", count: cell - item.count) }
            }
            rows.append(line)
        }
        return rows.joined(separator: "\r\n")
    }

    private func writeOutput(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(output, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }

    // MARK: - Text

    static let pasteStart = Array("\u{1B}[200~".utf8)
    static let pasteEnd = Array("\u{1B}[201~".utf8)

    /// The first whole line of `bytes` typed in the terminal's mode, removed from them: up to a newline, or for a
    /// bracketed paste up to the first newline after its end; `nil` while there is none yet.
    static func completeTypedLine(_ bytes: inout [UInt8]) -> String? {
        var searchFrom = 0
        if let start = range(of: pasteStart, in: bytes, from: 0) {
            guard let end = range(of: pasteEnd, in: bytes, from: start.upperBound) else { return nil }
            searchFrom = end.upperBound
        }
        guard let newline = bytes[searchFrom...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        let line = Array(bytes[..<newline])
        bytes.removeSubrange(...newline)
        return pastedText(line)
    }

    /// Pasted or typed bytes as text: the paste markers removed, `\r\n` and `\r` as newlines, other control
    /// characters but tab dropped (they are keys, not text).
    static func pastedText(_ bytes: [UInt8]) -> String {
        var bytes = bytes
        for marker in [pasteStart, pasteEnd] {
            while let found = range(of: marker, in: bytes, from: 0) { bytes.removeSubrange(found) }
        }
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\r"):
                text.append(UInt8(ascii: "\n"))
                if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\n") { index += 1 }
            case UInt8(ascii: "\n"), UInt8(ascii: "\t"):
                text.append(byte)
            case 0..<0x20, 0x7F:
                break
            default:
                text.append(byte)
            }
            index += 1
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func range(of needle: [UInt8], in bytes: [UInt8], from start: Int) -> Range<Int>? {
        guard bytes.count - start >= needle.count else { return nil }
        for index in start...(bytes.count - needle.count)
        where bytes[index..<(index + needle.count)].elementsEqual(needle) {
            return index..<(index + needle.count)
        }
        return nil
    }

    /// The first character of `bytes` (UTF-8), removed from them; `nil` when they end inside one. A byte that
    /// starts no valid sequence is read as U+FFFD.
    static func decode(_ bytes: inout [UInt8]) -> Unicode.Scalar? {
        guard let first = bytes.first else { return nil }
        let length =
            switch first {
            case 0..<0x80: 1
            case 0xC2..<0xE0: 2
            case 0xE0..<0xF0: 3
            case 0xF0..<0xF5: 4
            default: 0
            }
        guard length > 0 else {
            bytes.removeFirst()
            return "\u{FFFD}"
        }
        guard bytes.count >= length else {
            // A continuation byte out of place ends the sequence early.
            if bytes.dropFirst().contains(where: { $0 & 0xC0 != 0x80 }) {
                bytes.removeFirst()
                return "\u{FFFD}"
            }
            return nil
        }
        var decoder = UTF8()
        var iterator = bytes[..<length].makeIterator()
        let scalar: Unicode.Scalar =
            switch decoder.decode(&iterator) {
            case .scalarValue(let value): value
            default: "\u{FFFD}"
            }
        bytes.removeFirst(scalar == "\u{FFFD}" ? 1 : length)
        return scalar
    }

    /// `text` as a NUL-terminated wide string (UTF-32 on Linux).
    static func wide(_ text: String) -> [wchar_t] {
        text.unicodeScalars.map { wchar_t(bitPattern: $0.value) } + [0]
    }

    static func string(_ characters: UnsafePointer<wchar_t>, count: Int) -> String {
        var scalars = String.UnicodeScalarView()
        for index in 0..<max(0, count) {
            scalars.append(Unicode.Scalar(UInt32(bitPattern: characters[index])) ?? "\u{FFFD}")
        }
        return String(scalars)
    }

    /// libedit draws wide characters through the C library, which needs a UTF-8 character type: the
    /// environment's when it is one, else `C.UTF-8`.
    private static func useUTF8Characters() {
        setlocale(LC_CTYPE, "")
        if let codeset = nl_langinfo(nl_item(CODESET)), String(cString: codeset) == "UTF-8" { return }
        setlocale(LC_CTYPE, "C.UTF-8")
    }

    private static var terminalName: String {
        getenv("TERM").map { String(cString: $0) } ?? "unset"
    }

    fileprivate static func owner(_ editLine: OpaquePointer?) -> LineEditor? {
        guard let editLine, let data = hostscope_el_client_data(editLine) else { return nil }
        return Unmanaged<LineEditor>.fromOpaque(data).takeUnretainedValue()
    }
}

/// Why a line editor could not be started.
public struct LineEditorError: Error, Sendable, CustomStringConvertible {
    /// One sentence saying what happened.
    public var message: String

    public var description: String { message }
}

private func errnoText(_ code: Int32) -> String {
    String(cString: strerror(code))
}

// libedit calls these with the editor it was started for; each finds its `LineEditor` through the client data.

private let promptFunction: hostscope_el_prompt_function = { editLine in
    LineEditor.owner(editLine)?.prompt.baseAddress
}

private let readFunction: el_rfunc_t = { editLine, character in
    guard let character, let editor = LineEditor.owner(editLine) else { return -1 }
    return editor.readCharacter(into: character)
}

private let interruptKey: hostscope_el_key_function = { editLine, _ in
    LineEditor.owner(editLine)?.interrupt() ?? UInt8(CC_ERROR)
}

private let endOrDeleteKey: hostscope_el_key_function = { editLine, _ in
    LineEditor.owner(editLine)?.endOrDelete() ?? UInt8(CC_ERROR)
}

private let completeKey: hostscope_el_key_function = { editLine, _ in
    LineEditor.owner(editLine)?.complete() ?? UInt8(CC_ERROR)
}

private let pasteKey: hostscope_el_key_function = { editLine, _ in
    LineEditor.owner(editLine)?.paste() ?? UInt8(CC_ERROR)
}

private let suspendKey: hostscope_el_key_function = { editLine, _ in
    LineEditor.owner(editLine)?.suspend() ?? UInt8(CC_ERROR)
}
