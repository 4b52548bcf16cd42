import Agent
import ArgumentParser

@main
struct Hostscope: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hostscope",
        abstract: "Agentless remote host monitoring and tracing over SSH.",
        version: HostscopeVersion.string,
        subcommands: [])
}
