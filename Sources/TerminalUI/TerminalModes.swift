import Synchronization
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// The terminal modes hostscope changed (echo off for a password, raw mode for the live view), put back
/// on every way out: by the code that changed them, and at `exit` for the ways out that skip that code
/// (a second Ctrl-C, a closed standard output, an error thrown past the view).
public enum TerminalModes {
    /// The mode each descriptor had before hostscope first changed it.
    private static let saved = Lock<[Int32: termios]>([:])

    private static let exitHook: Void = {
        atexit { TerminalModes.restoreAll() }
    }()

    /// The current mode of `descriptor`, remembered so that it is restored at exit; `nil` when it is not a
    /// terminal.
    static func save(_ descriptor: Int32) -> termios? {
        _ = exitHook
        var mode = termios()
        guard tcgetattr(descriptor, &mode) == 0 else { return nil }
        saved.withLock { saved in
            if saved[descriptor] == nil { saved[descriptor] = mode }
        }
        return mode
    }

    /// What is written to standard output at exit, after the modes are restored: the undoing of modes the terminal
    /// keeps itself (bracketed paste), which a program turns off when it is done with them.
    private static let exitSequences = Lock<[String]>([])

    /// Remembers the mode of `descriptor`, a terminal a library will change (the chat's line editor), so that it
    /// is restored at exit whatever way the program takes out, and `sequence` written then; whether it is a
    /// terminal.
    public static func remember(_ descriptor: Int32, undoingAtExit sequence: String = "") -> Bool {
        guard save(descriptor) != nil else { return false }
        if !sequence.isEmpty {
            exitSequences.withLock { if !$0.contains(sequence) { $0.append(sequence) } }
        }
        return true
    }

    /// Sets `descriptor` back to the mode it had when ``save(_:)`` was first called for it.
    public static func restore(_ descriptor: Int32) {
        guard var mode = saved.withLock({ $0.removeValue(forKey: descriptor) }) else { return }
        tcsetattr(descriptor, TCSAFLUSH, &mode)
    }

    /// Restores every saved mode.
    public static func restoreAll() {
        let all = saved.withLock { saved in
            defer { saved.removeAll() }
            return saved
        }
        for (descriptor, var mode) in all { tcsetattr(descriptor, TCSANOW, &mode) }
        let sequences = exitSequences.withLock { sequences in
            defer { sequences.removeAll() }
            return sequences.joined()
        }
        if !sequences.isEmpty, isatty(1) == 1 { _ = write(1, sequences, sequences.utf8.count) }
    }
}
