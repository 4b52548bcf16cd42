import Alerting
public import ArgumentParser
import Foundation
import HostStats
public import HostscopeCore
import TerminalUI
import ValueFormats

extension ColourChoice: ExpressibleByArgument {}

struct TopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "top",
        abstract: "A full-screen live view of hosts: CPU, memory, load, disks and network, and each host's detail.",
        discussion: """
            Watches the hosts every --every (as `watch` does: one session per host kept between ticks, \
            failing hosts retried with backoff, never a password prompt) and shows them full-screen: a row \
            per host with CPU, memory, load, the fullest disk and network traffic, sparklines of CPU and \
            memory, colours from 60% (yellow) and 85% (red). A failing host keeps its last figures, dimmed, \
            with their age and the error.

            Keys: ↑/↓ (or j/k) select, Enter opens a host's detail (per-core CPU, memory breakdown, \
            filesystems with inodes, interfaces with errors, top processes), Esc goes back, / filters \
            hosts by name, s changes the sort (in the detail, the processes' sort), e shows the selected \
            host's whole error, a lists the firing alerts, q or Ctrl-C quits. See docs/terminal.md.

            The alert rules (--rules, else the shipped ones; --no-alerts for none; docs/alerts.md) are \
            evaluated on every record: a host with a firing alert is marked `!` after its state, the header \
            counts the firing alerts, and a host's detail lists its own with their summary.

            Colour follows --color (auto: on a terminal unless NO_COLOR is set). When standard input or \
            output is not a terminal, or TERM is dumb, top prints one plain line per host per tick instead. \
            Nothing is stored unless --history is given (then records go to the history database as with \
            watch).
            """)

    @Argument(help: "Hosts or ~/.ssh/config patterns to watch (default: local).", completion: Completions.host)
    var hosts: [String] = []

    @OptionGroup var sources: HostSourceOptions

    @Option(help: ArgumentHelp("Tick interval (default: 2s).", valueName: "duration"))
    var every: DurationArgument?

    @Option(help: "auto, proc or tools (default: auto).")
    var collector: CollectorKind?

    @Option(help: "How many processes to collect per host for the detail (default: 20).")
    var top: Int?

    @Option(
        name: .customLong("timeout"),
        help: ArgumentHelp("Limit on each probe command, at most 80% of --every (default: 30s).", valueName: "duration")
    )
    var commandTimeout: DurationArgument?

    @Option(name: .customLong("color"), help: "auto, always or never (auto: on a terminal, unless NO_COLOR is set).")
    var colour: ColourChoice = .auto

    @Flag(help: "Also store the records in the history database.")
    var history = false

    @Option(
        name: .customLong("db"), help: ArgumentHelp("The history database file (with --history).", valueName: "file"))
    var database: String?

    @Flag(help: "Also list pseudo filesystems (tmpfs, /dev) and virtual interfaces (lo, ifb0) in a host's detail.")
    var all = false

    @OptionGroup var ruleOptions: AlertRuleOptions

    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        if let every, every.duration < .milliseconds(100) {
            throw ValidationError("--every \(DurationText.format(every.duration)) is too short; use 100ms or more.")
        }
    }

    func run() async throws {
        let settings = try CoreSettings.command(
            database: database, storesHistory: history, connection: connection.settings(attended: false))
        let named = !hosts.isEmpty || sources.hostsFile != nil || sources.fleet.fleetFile != nil
        var built = WatchRequest(
            hosts: named ? hosts : ["local"], hostsFile: sources.hostsFile, interval: every?.duration ?? .seconds(2),
            collector: CollectorOptions(
                kind: collector ?? .auto, topProcesses: top ?? 20,
                commandTimeout: commandTimeout?.duration ?? .seconds(30)))
        built.fleetFile = sources.fleet.fleetFile
        built.flags = FleetFlags(
            interval: every != nil, timeout: commandTimeout != nil, top: top != nil, collector: collector != nil)
        built.labels = try sources.fleet.selector()
        built.rules = try ruleOptions.load()
        let request = built
        let fullScreen = FleetTopView.isCapable()
        let colours = colour.enabled(isTerminal: Output.stdoutIsTerminal)
        // The view takes each alert that moves; without it, one that fires or resolves is a line of its own.
        let (alerts, moved) = AsyncStream<AlertTransition>.makeStream()
        let onAlert: @Sendable (AlertTransition) -> Void = { transition in
            if fullScreen {
                moved.yield(transition)
            } else if transition.to == .firing || transition.to == .resolved {
                Output.write(AlertTable.line(transition) + "\n")
            }
        }
        let outcome: WatchOutcome
        do {
            outcome = try await withTerminationSignals { () async throws(CoreError) in
                try await WatchService(settings: settings).run(
                    request, output: nil,
                    observe: { watch in
                        if fullScreen {
                            await FleetTopView.run(
                                watch, title: "hostscope top", colours: colours, allDevices: all, alerts: alerts)
                            // q or Ctrl-C in the view: the watch ends with it.
                            watch.stop()
                        } else {
                            for await case .record(let record) in watch.subscribe() {
                                Output.write(FleetTopView.plainLine(record) + "\n")
                            }
                        }
                    }, onAlert: onAlert)
            }
        } catch {
            throw Output.fail(error)
        }
        if outcome.failure != nil { throw ExitCode(ExitStatus.failure.rawValue) }
    }
}
