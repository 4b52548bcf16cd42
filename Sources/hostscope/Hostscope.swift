import Agent
import ArgumentParser

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
            """,
        version: HostscopeVersion.string,
        subcommands: [
            SnapshotCommand.self, WatchCommand.self, HistoryCommand.self, FilesCommand.self, TraceCommand.self,
            ChatCommand.self, ParseCommand.self,
        ])

    static func main() async {
        // A closed pipe (`hostscope … | head`) must end output quietly, not kill the process.
        signal(SIGPIPE, SIG_IGN)
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
