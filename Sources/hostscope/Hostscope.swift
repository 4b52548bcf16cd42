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
            SnapshotCommand.self, WatchCommand.self, ServeCommand.self, HistoryCommand.self, FilesCommand.self,
            TraceCommand.self, ChatCommand.self, ParseCommand.self, TopCommand.self,
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
            var command = try parseAsRoot()
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
