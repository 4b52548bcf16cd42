import ArgumentParser
import Foundation
import HostscopeCore
import TerminalUI
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

extension Output {
    /// Prints `message` on stderr and returns the exit code of `status` to throw.
    static func fail(_ message: String, _ status: ExitStatus) -> ExitCode {
        error(message)
        return ExitCode(status.rawValue)
    }

    /// Ends the program for an error no command caught (usage errors, `--help`, `--version`):
    /// the argument parser's text through these sinks, then its exit status.
    static func exit<Command: ParsableCommand>(_ command: Command.Type, withError error: any Error) -> Never {
        var text = command.fullMessage(for: error)
        let code = command.exitCode(for: error)
        // Every duration option is named `<duration>` in usage, so a value it could not read says how to write one.
        // So is every moment (`history --since`), which is a duration or an RFC 3339 time.
        if text.hasPrefix("Error: The value '") {
            if let end = text.range(of: " <duration>'")?.upperBound {
                text.insert(contentsOf: ": " + DurationText.syntax, at: end)
            } else if let end = text.range(of: " <time>'")?.upperBound {
                text.insert(contentsOf: ": " + TimeArgument.syntax, at: end)
            }
        }
        if !text.isEmpty {
            if code == .success {
                write(text + "\n")
            } else {
                writeError(TerminalOutput(text + "\n"))
            }
        }
        Glibc.exit(code.rawValue)
    }
}

extension Output {
    /// Prints the core's sentence on stderr and returns the exit code of its kind to throw.
    static func fail(_ error: CoreError) -> ExitCode {
        fail(error.message, ExitStatus(error))
    }
}
