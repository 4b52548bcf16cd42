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
            host that is down is tried again at each tick; one refusing the keys or the host key \
            with capped exponential backoff; the others are not delayed.

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

    @Option(help: "auto, proc or tools.")
    var collector: CollectorKind = .auto

    @Option(help: "How many processes to record per snapshot.")
    var top: Int = 10

    @Option(name: .customLong("timeout"), help: "Limit on each probe command (at most 80% of --every).")
    var commandTimeout: DurationArgument = DurationArgument(.seconds(30))

    @Option(name: .customLong("db"), help: ArgumentHelp("The history database file.", valueName: "file"))
    var database: String?

    @Flag(name: .customLong("no-history"), help: "Do not store records in the history database.")
    var noHistory = false

    @Option(help: ArgumentHelp("Delete history records older than this (e.g. 7d).", valueName: "duration"))
    var retain: DurationArgument?

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var tracing: TracingOptions

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
        let settings = connection.settings
        let resolved: [ResolvedHost]
        do {
            let resolver = try HostResolver(settings: settings)
            var entries = hosts.map { HostListEntry(text: $0) }
            if let hostsFile {
                guard let text = try? String(contentsOfFile: hostsFile, encoding: .utf8) else {
                    throw Output.fail("cannot read the hosts file \(hostsFile); check the path", .usage)
                }
                entries += try HostList.parseHostsFile(text, path: hostsFile)
            }
            guard !entries.isEmpty else {
                throw Output.fail("no hosts to watch: name hosts or 'pattern*' arguments, or pass --hosts-file", .usage)
            }
            resolved = try HostList.targets(for: entries, config: resolver.config).map { try resolver.resolve($0) }
        } catch let error as SSHError {
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
            collector: CollectorOptions(kind: collector, topProcesses: top, commandTimeout: commandTimeout.duration))
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

/// Where `watch` records go: the output file and the history database. A failure of either is said
/// once and skips only that destination; collection and the other one go on, and every later
/// record tries the failed one again, so a disk that had space freed is written again from the next
/// record on (said once too, with how many records it missed).
final class RecordSink: Sendable {
    private let writer: RecordFileWriter?
    private let history: StorageDatabase?
    private let metrics: HostMetricsExporter?
    /// The first failure of the run, for the exit status: the output is incomplete.
    private let failed = Mutex<String?>(nil)
    private let output = Mutex(DestinationState())
    private let historyState = Mutex(DestinationState())

    /// Whether a destination is failing now, and how many records it missed since it began to.
    struct DestinationState {
        var failing = false
        var missed = 0

        /// Counts a failed record; true for the first failure of a run of them (the one to report).
        mutating func failedOnce() -> Bool {
            missed += 1
            defer { failing = true }
            return !failing
        }

        /// Notes a success; the records missed, when it ends a run of failures.
        mutating func succeeded() -> Int? {
            defer {
                failing = false
                missed = 0
            }
            return failing ? missed : nil
        }
    }

    init(writer: RecordFileWriter?, history: StorageDatabase?, metrics: HostMetricsExporter? = nil) {
        self.writer = writer
        self.history = history
        self.metrics = metrics
    }

    var failure: String? { failed.withLock { $0 } }

    func write(_ record: SnapshotRecord) async {
        metrics?.record(record)
        if let writer {
            do {
                try writer.write(record)
                if let missed = output.withLock({ $0.succeeded() }) {
                    let target = writer.path ?? "standard output"
                    Output.note(
                        "writing to \(target) again; the \(missed) record(s) made while it failed "
                            + "are only in the history database")
                }
            } catch {
                failed.withLock { $0 = $0 ?? error.message }
                if output.withLock({ $0.failedOnce() }) { Output.error(error.message) }
            }
        }
        if let history {
            do {
                // Stopping the watch cancels this task; the record in hand is still stored, so the
                // write runs in a task that does not inherit the cancellation.
                try await Task { try await history.history.append([record]) }.value
                if let missed = historyState.withLock({ $0.succeeded() }) {
                    Output.note("storing records in the history database again; \(missed) record(s) were not stored")
                }
            } catch {
                let message = (error as? StorageError)?.message ?? "\(error)"
                failed.withLock { $0 = $0 ?? message }
                if historyState.withLock({ $0.failedOnce() }) {
                    Output.error(message + " (the output file keeps receiving records)")
                }
            }
        }
    }

    func finish() {
        // A destination failing at the end (a closed pipe, a disk still full) has nothing to close.
        guard !output.withLock({ $0.failing }) else { return }
        do {
            try writer?.finish()
        } catch {
            failed.withLock { $0 = $0 ?? error.message }
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
