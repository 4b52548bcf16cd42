import Agent
import ArgumentParser
import Foundation
import HostStats
import SSHTransport
import Storage
import Synchronization

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
            failing host is retried with capped exponential backoff; the others are not delayed.

            Hosts come from arguments (aliases, user@host:port, local), ~/.ssh/config patterns \
            such as 'db-*', and --hosts-file (one per line, # comments). Output goes to --output \
            (format from --format or the file's extension: .csv, .json, .ndjson) or stdout. On a \
            terminal without --output or --format, watch shows a live one-line-per-host status; \
            piped, it prints nothing but data. Files stay valid: CSV and NDJSON lines are written \
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

    @Argument(help: "Hosts or ~/.ssh/config patterns to watch.")
    var hosts: [String] = []

    @Option(name: .customLong("hosts-file"), help: ArgumentHelp("File with one host or pattern per line.", valueName: "file"))
    var hostsFile: String?

    @Option(help: "Tick interval.")
    var every: DurationArgument = DurationArgument(.seconds(5))

    @Option(help: "Ticks per host, then stop.")
    var count: Int?

    @Option(name: .customLong("for"), help: ArgumentHelp("Run this long, then stop (e.g. 1h).", valueName: "duration"))
    var runFor: DurationArgument?

    @Option(name: [.customShort("o"), .long], help: ArgumentHelp("File to write records to (default: stdout).", valueName: "file"))
    var output: String?

    @Option(help: "csv, json or ndjson (default: from --output's extension; ndjson on stdout).")
    var format: RecordFileFormat?

    @Option(name: .customLong("csv-layout"), help: "wide (host-level columns) or long (per disk/interface/core).")
    var csvLayout: RecordFileWriter.CSVLayoutChoice = .wide

    @OptionGroup var watchOptions: WatchOptions

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var tracing: TracingOptions

    private var database: String? { watchOptions.database }
    private var noHistory: Bool { watchOptions.noHistory }
    private var retain: DurationArgument? { watchOptions.retain }

    func validate() throws {
        guard every.duration >= .milliseconds(100) else {
            throw ValidationError("--every \(DurationText.format(every.duration)) is too short; use 100ms or more.")
        }
        if count != nil && runFor != nil {
            throw ValidationError("--count and --for both say when to stop; give one of them.")
        }
        if let count, count < 1 { throw ValidationError("--count must be 1 or more.") }
    }

    func run() async throws {
        let resolved: [ResolvedHost]
        do {
            resolved = try FleetDefinition(arguments: hosts, hostsFile: hostsFile, settings: connection.settings)
                .resolve().hosts
        } catch {
            throw Output.fail(error.message, .usage)
        }

        let writer: RecordFileWriter?
        var liveView = false
        if let output {
            guard let chosen = format ?? RecordFileFormat.inferred(fromPath: output) else {
                throw Output.fail("cannot tell the format of \(output) from its name; add --format csv|json|ndjson", .usage)
            }
            do {
                writer = try RecordFileWriter(path: output, format: chosen, csvLayout: csvLayout)
            } catch {
                throw Output.fail(error.message, .failure)
            }
            liveView = Output.stdoutIsTerminal
        } else if Output.stdoutIsTerminal && format == nil {
            writer = nil
            liveView = true
        } else {
            writer = RecordFileWriter(standardOutputFormat: format ?? .ndjson, csvLayout: csvLayout)
        }

        var opened: StorageDatabase?
        if !noHistory {
            let path = DatabaseLocation.path(explicit: database, environment: ProcessInfo.processInfo.environment)
            do {
                opened = try await StorageDatabase.open(at: path)
                opened?.accessNotes.forEach(Output.note)
                if let retain { _ = try await opened?.history.prune(olderThan: Date() - retain.duration.timeInterval) }
            } catch {
                throw Output.fail("\(error.message); or pass --no-history to watch without storing records", .failure)
            }
        }

        let history = opened
        let plan = WatchPlan(
            hosts: resolved, interval: every.duration, count: count, duration: runFor?.duration,
            collector: watchOptions.collectorOptions)
        let status = liveView
            ? LiveStatus(hosts: resolved.map(\.displayName), width: Output.terminalWidth, write: { Output.write($0) })
            : nil
        let retention = retain?.duration

        // Spans go to the same database as the records, kept as long; --no-history keeps both out.
        let export = try tracing.export(signals: [.traces, .metrics])
        var traceSetup = try tracing.setup(database: database, retention: retention, export: export)
        if noHistory { traceSetup.databasePath = nil }
        let metrics = export.metrics.map { settings in
            HostMetricsExporter(settings: settings, resourceAttributes: traceSetup.resourceAttributes) {
                Output.warning($0)
            }
        }
        let sink = RecordSink(writer: writer, history: history, metrics: metrics)
        let trace = await TraceRuntime.start(traceSetup)
        await withTerminationSignals {
            let pruning = Task {
                // Hourly, so a week-long watch keeps its database to the retention window.
                while let retention, let history, !Task.isCancelled {
                    try await Task.sleep(for: .seconds(3600))
                    _ = try? await history.history.prune(olderThan: Date() - retention.timeInterval)
                }
            }
            await FleetWatch(plan: plan).run(
                record: { record in await sink.write(record) },
                status: { update in await status?.update(update) })
            pruning.cancel()
        }
        if let metrics { TraceRuntime.report(await metrics.finish(), items: "data point(s)") }
        await trace.finishReporting()
        await status?.finish()
        sink.finish()
        try? await history?.close()
        if sink.failure != nil {
            // Already said when it happened; the status tells scripts the run was incomplete.
            throw ExitCode(ExitStatus.failure.rawValue)
        }
    }
}

/// Where `watch` records go: the output file and the history database. A failure of either
/// is said once and stops only that destination; collection and the other one go on.
final class RecordSink: Sendable {
    private let writer: RecordFileWriter?
    private let history: StorageDatabase?
    private let metrics: HostMetricsExporter?
    private let failed = Mutex<String?>(nil)
    private let historyFailed = Mutex(false)

    init(writer: RecordFileWriter?, history: StorageDatabase?, metrics: HostMetricsExporter? = nil) {
        self.writer = writer
        self.history = history
        self.metrics = metrics
    }

    var failure: String? { failed.withLock { $0 } }

    func write(_ record: SnapshotRecord) async {
        metrics?.record(record)
        if let writer, failure == nil {
            do {
                try writer.write(record)
            } catch {
                failed.withLock { $0 = error.message }
                Output.error(error.message)
            }
        }
        if let history, !historyFailed.withLock({ $0 }) {
            do {
                // Stopping the watch cancels this task; the record in hand is still stored, so the
                // write runs in a task that does not inherit the cancellation.
                try await Task { try await history.history.append([record]) }.value
            } catch {
                let message = (error as? StorageError)?.message ?? "\(error)"
                historyFailed.withLock { $0 = true }
                failed.withLock { $0 = $0 ?? message }
                Output.error(message + " (the output file keeps receiving records)")
            }
        }
    }

    func finish() {
        guard failure == nil else { return }
        do {
            try writer?.finish()
        } catch {
            failed.withLock { $0 = error.message }
            Output.error(error.message)
        }
    }
}

extension Duration {
    /// Seconds as a `TimeInterval`, for `Date` arithmetic.
    var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
