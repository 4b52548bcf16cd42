import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A command run on a real pseudo-terminal of a given size (a tmux server of the test's own, Debian's tmux):
/// keys typed in, the screen read back, and the terminal's mode (`stty -g`) recorded before the command and
/// after it ended, so a test can check it was given back as it was.
final class TerminalSession {
    let socket: String
    let directory: String

    /// Starts `arguments` (hostscope's, the binary is prepended) on a `width`×`height` terminal.
    convenience init(_ arguments: [String], width: Int, height: Int, environment: [String: String] = [:]) throws {
        try self.init(
            command: ([CLI.binary] + arguments).map(CLI.shellQuoted).joined(separator: " "), width: width,
            height: height, environment: environment)
    }

    /// Starts a shell command line (`bash --norc -i`, a pipeline) on a `width`×`height` terminal.
    init(command: String, width: Int, height: Int, environment: [String: String] = [:]) throws {
        directory = NSTemporaryDirectory() + "hostscope-pty-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        socket = directory + "/tmux.sock"
        var exports = ""
        for (key, value) in CLI.baseEnvironment.merging(environment, uniquingKeysWith: { $1 })
        where key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) {
            exports += "export \(key)=\(CLI.shellQuoted(value))\n"
        }
        // The command runs in the foreground of the terminal, as typed at a prompt; the shell records the mode
        // around it.
        let script = """
            \(exports)export TERM=xterm-256color
            trap : INT
            stty -g > \(directory)/mode-before
            echo $$ > \(directory)/pid
            \(command)
            echo $? > \(directory)/status.tmp
            stty -g > \(directory)/mode-after
            mv \(directory)/status.tmp \(directory)/status
            sleep 600
            """
        try script.write(toFile: directory + "/run.sh", atomically: true, encoding: .utf8)
        try tmux([
            "-f", "/dev/null", "new-session", "-d", "-x", String(width), "-y", String(height),
            "sh " + directory + "/run.sh",
        ])
    }

    deinit {
        _ = try? tmux(["kill-server"])
        try? FileManager.default.removeItem(atPath: directory)
    }

    @discardableResult
    func tmux(_ arguments: [String]) throws -> String {
        // Through system(3) into a file: the tmux server that new-session starts keeps whatever descriptors it
        // was given open for its life, and its client must be waited for as a plain child.
        let output = directory + "/tmux-\(UUID().uuidString).out"
        defer { unlink(output) }
        let line = (["/usr/bin/tmux", "-S", socket] + arguments).map(CLI.shellQuoted).joined(separator: " ")
        let status = system(line + " >" + CLI.shellQuoted(output) + " 2>/dev/null </dev/null")
        guard status == 0 else { throw HarnessError(description: "tmux \(arguments.joined(separator: " ")) failed") }
        return (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    }

    /// Types keys as tmux names them (`q`, `Enter`, `Escape`, `C-c`, `Down`) or literal text.
    func send(_ keys: String...) throws {
        try tmux(["send-keys", "-t", "0"] + keys)
    }

    /// The screen's lines, trailing spaces removed.
    func screen() throws -> [String] {
        try tmux(["capture-pane", "-p", "-t", "0"]).split(separator: "\n", omittingEmptySubsequences: false)
            .map { String($0).replacingOccurrences(of: " +$", with: "", options: .regularExpression) }
    }

    /// The screen once `predicate` holds for it, or an error naming what was on it after `timeout` seconds.
    func waitForScreen(timeout: TimeInterval = 45, _ predicate: ([String]) -> Bool) throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        var last: [String] = []
        while Date() < deadline {
            last = try screen()
            if predicate(last) { return last }
            usleep(100_000)
        }
        throw HarnessError(description: "the screen never matched; it showed:\n" + last.joined(separator: "\n"))
    }

    /// The exit status once the command ended.
    func waitForExit(timeout: TimeInterval = 45) throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: directory + "/status", encoding: .utf8),
                let status = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
            {
                return status
            }
            usleep(100_000)
        }
        throw HarnessError(
            description: "the command did not end in \(timeout) s; the screen:\n"
                + ((try? screen()) ?? []).joined(separator: "\n"))
    }

    /// The terminal's mode before the command and after it (`stty -g`).
    func modes() throws -> (before: String, after: String) {
        (
            try String(contentsOfFile: directory + "/mode-before", encoding: .utf8),
            try String(contentsOfFile: directory + "/mode-after", encoding: .utf8)
        )
    }

    /// The process id of the shell that runs the command (the command is its only child).
    func commandPID() throws -> pid_t? {
        guard let text = try? String(contentsOfFile: directory + "/pid", encoding: .utf8),
            let shell = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else { return nil }
        let children = try? String(contentsOfFile: "/proc/\(shell)/task/\(shell)/children", encoding: .utf8)
        return children?.split(separator: " ").first.flatMap { Int32($0) }
    }
}
