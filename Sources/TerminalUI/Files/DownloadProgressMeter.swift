import Foundation
import HostscopeCore
import Synchronization
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// The line `files get` keeps up to date on stderr while a download runs, as `scp` and `sftp` do
/// on a terminal: name, percentage, bytes so far, speed and time left.
///
/// It is redrawn at most ten times a second and cleared by ``finish()``, so the result line (or
/// an error sentence) starts on a clean line. Speed counts only this run's bytes: a resumed
/// download does not claim the partial file's bytes were fetched in no time.
public final class DownloadProgressMeter: Sendable {
    private struct State {
        var startBytes: UInt64?
        var start: ContinuousClock.Instant?
        var lastDraw: ContinuousClock.Instant?
        var drawn = false
    }

    private let name: String
    private let width: Int
    private let write: @Sendable (TerminalOutput) -> Void
    private let state = Lock(State())
    private static let redrawInterval = Duration.milliseconds(100)

    /// A meter for `name` (escaped when drawn) on a line of `width` columns.
    public init(name: String, width: Int, write: @escaping @Sendable (TerminalOutput) -> Void) {
        self.name = name
        self.width = width
        self.write = write
    }

    /// A meter on stderr when stderr is a terminal; `nil` otherwise (nothing to animate in a log).
    public static func onTerminal(name: String) -> DownloadProgressMeter? {
        guard isatty(2) == 1 else { return nil }
        var size = winsize()
        let width = ioctl(2, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col >= 20 ? Int(size.ws_col) : 80
        return DownloadProgressMeter(name: name, width: width) { Output.writeError($0) }
    }

    /// Records that `done` of `total` bytes are written, redrawing when the last draw is old enough.
    public func update(done: UInt64, total: UInt64, now: ContinuousClock.Instant = .now) {
        let line = state.withLock { state -> String? in
            guard let start = state.start, let startBytes = state.startBytes else {
                state.start = now
                state.startBytes = done
                return nil
            }
            if let last = state.lastDraw, now - last < Self.redrawInterval, done < total { return nil }
            state.lastDraw = now
            state.drawn = true
            return TransferProgress.line(
                name: name, done: done, total: total, transferred: done - min(done, startBytes), elapsed: now - start,
                width: width)
        }
        if let line { write(.carriageReturn + TerminalOutput(line) + .eraseToEndOfLine) }
    }

    /// Clears the line, if anything was drawn.
    public func finish() {
        let drawn = state.withLock { state in
            defer { state.drawn = false }
            return state.drawn
        }
        if drawn { write(.carriageReturn + .eraseToEndOfLine) }
    }
}
