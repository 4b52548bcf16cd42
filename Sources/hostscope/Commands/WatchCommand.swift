import AgentTracing
import Alerting
public import ArgumentParser
import HostStats
public import HostscopeCore
import TerminalUI
import ValueFormats

extension RecordFileFormat: ExpressibleByArgument {}
extension RecordFileWriter.CSVLayoutChoice: ExpressibleByArgument {}

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Snapshot hosts every few seconds into CSV, JSON or NDJSON.",
        discussion: """
            Each host is read every --every over a session kept between ticks, at its own phase \
            of the interval (derived from its name and counted from the Unix epoch), so a \
            fleet's probes are spread over the interval and lateness never accumulates. Every \
            tick of every host yields exactly one record: a snapshot, or an error record (timeout, auth, \
            host_key, connect, command, parse), so gaps are visible. CPU and network/disk rates \
            come from the difference with the previous tick; the first tick has none (null). A \
            host that is down is tried again at each tick; one refusing the keys or the host key \
            with capped exponential backoff; the others are not delayed.

            Hosts come from arguments (aliases, user@host:port, local), ~/.ssh/config patterns \
            such as 'db-*', --hosts-file (one per line, # comments), and the groups of a --fleet file \
            (docs/fleet.md: labels, and interval, timeout, top and collector per group; a flag given \
            wins over the file; host arguments win over its groups; --label env=prod keeps the hosts with \
            that label; its labels become label.NAME columns of either CSV layout and a labels object in JSON records; \
            SIGHUP reads the fleet file and the hosts file again: hosts added and removed, labels changed, a bad file \
            said and the running fleet kept). Output goes to --output \
            (format from --format or the file's extension: .csv, .json, .ndjson; several --output \
            files each get every record in their own format) or stdout. On a \
            terminal without --format (or with --output), watch shows the full-screen view of \
            `hostscope top` (q ends the watch), or a one-line-per-host status where TERM is dumb; \
            piped, it prints nothing but data, and a host that fails is said on stderr once it has \
            failed two ticks in a row, when its failure changes and when it answers again. Files stay valid: CSV and NDJSON lines are written \
            whole, the JSON array is closed after every record, and a run appending to an \
            existing file first drops a record cut short by a crash.

            Every record also goes to the history database (SQLite, WAL): --db, else \
            $HOSTSCOPE_DB, else $XDG_DATA_HOME/hostscope/hostscope.sqlite (~/.local/share/…); read \
            it back with `hostscope history`, and the spans of every connect and command with \
            `hostscope trace`. --retain 7d deletes older records at start and hourly; \
            --no-history stores neither. \
            If the output file fails (disk full, removed), watch says so once and the database keeps \
            receiving.

            Ends after --count ticks per host, after --for, or on Ctrl-C/SIGTERM (files closed \
            valid, exit 0).
            """)

    @Argument(help: "Hosts or ~/.ssh/config patterns to watch.", completion: Completions.host)
    var hosts: [String] = []

    @OptionGroup var sources: HostSourceOptions

    @Option(help: ArgumentHelp("Tick interval (default: 5s).", valueName: "duration"))
    var every: DurationArgument?

    @Option(help: "Ticks per host, then stop.")
    var count: Int?

    @Option(name: .customLong("for"), help: ArgumentHelp("Run this long, then stop (e.g. 1h).", valueName: "duration"))
    var runFor: DurationArgument?

    @Option(
        name: [.customShort("o"), .long],
        help: ArgumentHelp(
            "File to write records to (default: stdout); repeat for several files, each in the format of its "
                + "extension.", valueName: "file"))
    var output: [String] = []

    @Option(
        name: [.customShort("f"), .long],
        help: "csv, json or ndjson (default: from --output's extension; ndjson on stdout).")
    var format: RecordFileFormat?

    @Option(name: .customLong("csv-layout"), help: "wide (host-level columns) or long (per disk/interface/core).")
    var csvLayout: RecordFileWriter.CSVLayoutChoice = .wide

    @Flag(
        name: .customLong("alert-records"),
        help: ArgumentHelp(
            "Also write each alert that moves (pending, firing, resolved) to JSON and NDJSON output, as a "
                + "hostscope.alert/1 record after the snapshot that moved it."))
    var alertRecords = false

    @OptionGroup var watchOptions: WatchOptions

    @Option(name: .customLong("color"), help: "Colour in the live view: auto, always or never (auto: unless NO_COLOR).")
    var colour: ColourChoice = .auto

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var tracing: TracingOptions

    func validate() throws {
        if let every, every.duration < .milliseconds(100) {
            throw ValidationError("--every \(DurationText.format(every.duration)) is too short; use 100ms or more.")
        }
        if count != nil && runFor != nil {
            throw ValidationError("--count and --for both say when to stop; give one of them.")
        }
        if let count, count < 1 { throw ValidationError("--count must be 1 or more.") }
        if output.count > 1, let format {
            throw ValidationError(
                "--format \(format.rawValue) would give \(output.count) outputs one format; with several --output "
                    + "files each takes the format of its extension (.csv, .json, .ndjson), so leave --format out.")
        }
    }

    func run() async throws {
        let settings = try CoreSettings.command(
            database: watchOptions.database, storesHistory: !watchOptions.noHistory,
            connection: connection.settings(attended: false), tracing: tracing, signals: [.traces, .metrics])
        var built = WatchRequest(
            hosts: hosts, hostsFile: sources.hostsFile, interval: every?.duration ?? .seconds(5), count: count,
            duration: runFor?.duration, collector: watchOptions.collectorOptions(),
            retention: watchOptions.retain?.duration)
        built.fleetFile = sources.fleet.fleetFile
        built.flags = watchOptions.flags(interval: every != nil)
        built.labels = try sources.fleet.selector()
        built.rules = try watchOptions.alertRules()
        built.receivers = try watchOptions.alertReceivers()
        if alertRecords && built.rules == nil {
            throw Output.fail(
                "--alert-records writes alerts, but --no-alerts evaluates none; give one of the two.", .usage)
        }
        built.alertRecords = alertRecords
        let request = built
        // Without a file or a format, a terminal gets the live view; anything else gets data.
        let destinations: [RecordOutput]
        if !output.isEmpty {
            destinations = output.map {
                .file(path: $0, format: format, csvLayout: csvLayout, terminalEscaping: TerminalText.escaped(bytes:))
            }
        } else if Output.stdoutIsTerminal && format == nil {
            destinations = []
        } else {
            destinations = [.stream(format: format ?? .ndjson, csvLayout: csvLayout, write: Output.writeStream)]
        }
        let liveView = Output.stdoutIsTerminal && (!output.isEmpty || format == nil)
        // The full-screen view where the terminal can show it; the one-line-per-host status elsewhere.
        let fullScreen = liveView && FleetTopView.isCapable()
        let colours = colour.enabled(isTerminal: Output.stdoutIsTerminal)
        let observe: @Sendable (FleetWatch) async -> Void = { watch in
            guard liveView else {
                // Without a view, a failing host is still said once per change of its state.
                var notices = HostFailureNotices()
                for await case .record(let record) in watch.subscribe() {
                    if let notice = notices.notice(for: record) { Output.warning(notice) }
                }
                return
            }
            if fullScreen {
                await FleetTopView.run(watch, title: "hostscope watch", colours: colours)
                // q or Ctrl-C in the view ends the watch; the records collected are kept.
                watch.stop()
                return
            }
            let view = LiveStatus(
                hosts: watch.states.map(\.host), width: Output.terminalWidth, write: { Output.write($0) })
            for await event in watch.subscribe() { await view.update(event) }
            await view.finish()
        }
        // Alerts that fire or resolve, on a terminal's stderr, unless the full-screen view owns the terminal
        // (pending ones would be noise: most never fire).
        let onAlert: (@Sendable (AlertTransition) -> Void)? =
            Output.stderrIsTerminal && !fullScreen
            ? { @Sendable transition in
                guard transition.to == .firing || transition.to == .resolved else { return }
                Output.notice(AlertTable.line(transition))
            } : nil
        let outcome: WatchOutcome
        do {
            outcome = try await withTerminationSignals { () async throws(CoreError) in
                try await WatchService(settings: settings).run(
                    request, outputs: destinations, observe: observe, onAlert: onAlert)
            }
        } catch {
            throw Output.fail(error)
        }
        if outcome.failure != nil {
            // Already said when it happened; the status tells scripts the run was incomplete.
            throw ExitCode(ExitStatus.failure.rawValue)
        }
    }
}
