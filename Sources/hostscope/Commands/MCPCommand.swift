import ArgumentParser
import HostscopeCore
import HostscopeMCP
import TerminalUI

struct MCPCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mcp",
        abstract: "Serve hostscope's read-only host tools to an MCP client (an agent, an IDE) over stdio.",
        discussion: """
            An MCP client starts `hostscope mcp` as a child process and speaks JSON-RPC on its standard \
            input and output; nothing else is written to standard output, diagnostics go to standard \
            error. The server ends (exit 0) when the client closes standard input.

            The tools reach only the hosts given as arguments, ssh_config patterns, --hosts-file or the \
            groups of a --fleet file (--label env=prod: only those with the label; default: every Host \
            entry of ~/.ssh/config without wildcards); --root confines the file \
            tools. Nothing writes to a host and nothing a client sends reaches a shell. Every request \
            is a span in the database (`hostscope trace list`). docs/mcp.md has the client configuration.
            """)

    @Argument(help: "Hosts or ~/.ssh/config patterns the tools may reach.", completion: Completions.host)
    var hosts: [String] = []

    @OptionGroup var sources: HostSourceOptions

    @Option(help: ArgumentHelp("Confine the file tools to this directory on every host.", valueName: "dir"))
    var root: String?

    @Option(
        name: .customLong("calls-per-minute"),
        help: ArgumentHelp("Tool calls a session may make per minute.", valueName: "n"))
    var callsPerMinute: Int = 120

    @Option(
        name: .customLong("max-result-bytes"),
        help: ArgumentHelp("The most bytes of one tool result; longer ones are cut and say so.", valueName: "n"))
    var maxResultBytes: Int = 48 * 1024

    @Option(name: .customLong("db"), help: ArgumentHelp("The history and span database.", valueName: "file"))
    var database: String?

    @Flag(name: .customLong("no-history"), help: "Store no spans.")
    var noHistory = false

    @Flag(
        inversion: .prefixedNo,
        help: ArgumentHelp(
            "Record tool call arguments and results on their spans (default: "
                + "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, else off); secrets are scrubbed as everywhere."))
    var captureMessageContent: Bool?

    @OptionGroup var tracing: TracingOptions
    @OptionGroup var connection: ConnectionOptions

    /// The MCP benchmark's baseline (`Scripts/bench/mcp`): time this many warm `host_snapshot` core calls on the
    /// first host, made directly, and print each as a JSON line instead of serving.
    @Option(name: .customLong("time-direct-snapshots"), help: .private)
    var timeDirectSnapshots: Int?

    func validate() throws {
        guard (1...100_000).contains(callsPerMinute) else {
            throw ValidationError("--calls-per-minute must be 1 to 100000.")
        }
        guard (1024...1_048_576).contains(maxResultBytes) else {
            throw ValidationError("--max-result-bytes must be 1024 to 1048576 (an MCP client refuses much more).")
        }
        if let root, root.isEmpty { throw ValidationError("--root is empty; give a directory.") }
        _ = try captureContent()
        if let timeDirectSnapshots, !(1...100_000).contains(timeDirectSnapshots) {
            throw ValidationError("--time-direct-snapshots must be 1 to 100000.")
        }
    }

    /// The content-capture choice: the option, else the OpenTelemetry variable.
    func captureContent() throws -> Bool {
        try TracingOptions.contentCapture(captureMessageContent)
    }

    func run() async throws {
        // Standard output carries JSON-RPC only: the core's remarks go to standard error, and no host asks for a
        // secret on a terminal (the client owns standard input).
        var connectionSettings = connection.settings(attended: false)
        if connection.verbose { connectionSettings.debug = { Output.debug($0) } }
        var definition = FleetDefinition(
            arguments: hosts, hostsFile: sources.hostsFile, fleetFile: sources.fleet.fleetFile,
            settings: connectionSettings)
        let selector = try sources.fleet.selector()
        let fleet: ResolvedFleet
        do {
            if hosts.isEmpty, sources.hostsFile == nil, sources.fleet.fleetFile == nil {
                definition.arguments = try definition.configuredHosts()
                guard !definition.arguments.isEmpty else {
                    throw CoreError(
                        .invalidRequest,
                        "no hosts for the tools: name hosts or 'pattern*' arguments, pass --hosts-file, or add Host "
                            + "entries to ~/.ssh/config")
                }
            }
            fleet = try definition.resolve().selecting(selector)
        } catch let error as CoreError {
            throw Output.fail(error.message, .usage)
        }
        let settings = try CoreSettings.command(
            database: database, storesHistory: !noHistory, connection: connectionSettings, tracing: tracing)
        let configuration = MCPConfiguration(
            fleet: fleet, root: root, settings: settings, callsPerMinute: callsPerMinute,
            maxResultBytes: maxResultBytes, captureContent: try captureContent())
        if let count = timeDirectSnapshots {
            for timing in try await MCPServer.timeDirectSnapshots(configuration, count: count) {
                Output.writeData("{\"elapsed_ms\":\(timing.elapsedMs),\"duration_ms\":\(timing.durationMs)}\n")
            }
            return
        }
        try await MCPServer.runOverStdio(configuration)
    }
}
