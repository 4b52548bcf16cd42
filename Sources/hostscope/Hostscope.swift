import ArgumentParser
import Foundation
import HostscopeCore
import TerminalUI
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

@main
struct Hostscope: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hostscope",
        abstract: "Agentless host monitoring and tracing over SSH.",
        discussion: """
            Reaches hosts through OpenSSH's ~/.ssh/config (aliases, users, ports, keys, known_hosts) \
            and needs nothing installed on them beyond sshd and the usual userland.

            Shell completion of commands, ssh_config aliases and remote HOST:PATH names: \
            hostscope --generate-completion-script bash|zsh|fish (docs/terminal.md says where to put it).
            """,
        version: HostscopeVersion.string,
        subcommands: [
            SnapshotCommand.self, WatchCommand.self, ServeCommand.self, HistoryCommand.self, AlertsCommand.self,
            FilesCommand.self,
            TraceCommand.self, ChatCommand.self, MCPCommand.self, ParseCommand.self, TopCommand.self,
        ])

    static func main() async {
        // A closed pipe (`hostscope … | head`) must end output quietly, not kill the process.
        signal(SIGPIPE, SIG_IGN)
        // Every SSH session has a thread of its own, and glibc gives each thread that allocates
        // an arena of its own (up to 8 per core): with 100 hosts watched that fragmentation was a
        // third of the resident memory. One arena per core costs no measurable CPU here.
        limitMallocArenas(to: max(2, ProcessInfo.processInfo.activeProcessorCount))
        if let script = CompletionScript.requested(by: Array(CommandLine.arguments.dropFirst())) {
            Output.writeData(script)
            Glibc.exit(0)
        }
        if let message = unknownSubcommand(Array(CommandLine.arguments.dropFirst())) {
            Output.error(message)
            Glibc.exit(ExitCode.validationFailure.rawValue)
        }
        do {
            var command = try parseWithNegativeValues(Array(CommandLine.arguments.dropFirst()))
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            Output.exit(Hostscope.self, withError: error)
        }
    }
}

extension Hostscope {
    /// Parses `arguments`; where the parser found an option without its value because the value was
    /// negative (`--top -3`, `--every -5s`, `-p -22`: a word starting with `-` reads as an option), parses
    /// again with that value attached (`--top=-3`), so that the option's own check says what is wrong with it.
    static func parseWithNegativeValues(_ arguments: [String]) throws -> any ParsableCommand {
        do {
            return try parseAsRoot(arguments)
        } catch {
            let message = fullMessage(for: error)
            let joined = attachingNegativeValues(arguments) { option in
                message.contains("Missing value for '\(option) ")
            }
            guard joined != arguments else { throw error }
            return try parseAsRoot(joined)
        }
    }
}

/// `arguments` with each option that `lacksValue` and is followed by a negative number (`-3`, `-.5`, `-5s`)
/// written as one word, `--top=-3` or `-p=-22`; nothing after `--` changes.
func attachingNegativeValues(_ arguments: [String], lacksValue: (String) -> Bool) -> [String] {
    var result: [String] = []
    var index = 0
    while index < arguments.count {
        let argument = arguments[index]
        if argument == "--" {
            result += arguments[index...]
            break
        }
        if argument.hasPrefix("-"), !looksNegative(argument), !argument.contains("="), index + 1 < arguments.count,
            looksNegative(arguments[index + 1]), lacksValue(argument)
        {
            result.append(argument + "=" + arguments[index + 1])
            index += 2
            continue
        }
        result.append(argument)
        index += 1
    }
    return result
}

private func looksNegative(_ word: String) -> Bool {
    let rest = word.utf8.dropFirst()
    guard word.utf8.first == UInt8(ascii: "-"), let first = rest.first else { return false }
    let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
    return digits.contains(first) || (first == UInt8(ascii: ".") && rest.dropFirst().first.map(digits.contains) == true)
}

/// The sentence for a subcommand that does not exist (`hostscope snapshto`), with the closest one; `nil` when
/// the arguments name commands that exist (options and their values are the parser's to judge).
func unknownSubcommand(_ arguments: [String]) -> String? {
    var command: any ParsableCommand.Type = Hostscope.self
    var path = ["hostscope"]
    for argument in arguments {
        let subcommands = command.configuration.subcommands
        guard !subcommands.isEmpty, !argument.hasPrefix("-"), argument != "help" else { return nil }
        let names = subcommands.map { $0.configuration.commandName ?? "" }
        if let index = names.firstIndex(of: argument) {
            command = subcommands[index]
            path.append(argument)
            continue
        }
        let prefix = path.joined(separator: " ")
        if let suggestion = NameSuggestion.closest(to: argument, among: names) {
            return "\(prefix) has no command '\(argument)'; did you mean '\(prefix) \(suggestion)'?"
        }
        return "\(prefix) has no command '\(argument)'; the commands are \(names.joined(separator: ", "))"
    }
    return nil
}

/// glibc's `mallopt(M_ARENA_MAX, count)`. malloc.h is not part of Swift's Glibc module, so the
/// function is looked up by name and called with the C calling convention.
private func limitMallocArenas(to count: Int) {
    let arenaMaximum: Int32 = -8  // M_ARENA_MAX in glibc's malloc.h
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
    typealias MallocOption = @convention(c) (Int32, Int32) -> Int32
    _ = unsafeBitCast(symbol, to: MallocOption.self)(arenaMaximum, Int32(clamping: count))
}
