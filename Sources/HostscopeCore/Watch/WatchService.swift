public import Alerting
import FleetConfig
import Foundation
public import HostStats
import SSHTransport
public import Storage
import Synchronization
import ValueFormats

/// What `watch` is asked to do.
public struct WatchRequest: Sendable {
    /// Hosts and ssh_config patterns (`db-*`).
    public var hosts: [String]
    /// A file of hosts or patterns, one per line.
    public var hostsFile: String?
    /// A fleet file (`--fleet`): its groups' hosts when no host is named, and labels and group settings.
    public var fleetFile: String?
    /// The settings the command line gave, which win over the fleet file's.
    public var flags = FleetFlags()
    /// Only the hosts with these labels (`--label`).
    public var labels = LabelSelector()
    public var interval: Duration
    /// Ticks per host, then stop.
    public var count: Int?
    /// How long to run, then stop.
    public var duration: Duration?
    public var collector: CollectorOptions
    /// How long history records and spans are kept; `nil` keeps them all.
    public var retention: Duration?
    /// The alert rules evaluated on every record; `nil` evaluates none.
    public var rules: AlertRules?
    /// Where firing and resolved alerts are sent.
    public var receivers: [AlertReceiver] = []
    /// Whether each alert transition is also written to the JSON and NDJSON outputs, as a `hostscope.alert/1`
    /// record after the snapshot that caused it.
    public var alertRecords = false

    public init(
        hosts: [String], hostsFile: String? = nil, interval: Duration, count: Int? = nil, duration: Duration? = nil,
        collector: CollectorOptions = CollectorOptions(), retention: Duration? = nil
    ) {
        self.hosts = hosts
        self.hostsFile = hostsFile
        self.interval = interval
        self.count = count
        self.duration = duration
        self.collector = collector
        self.retention = retention
    }
}

/// Where a watch writes its records besides the history database.
public enum RecordOutput: Sendable {
    /// A file, created or resumed; the format from its name when `nil`. Should it be a terminal, what is
    /// written goes through `terminalEscaping`.
    case file(
        path: String, format: RecordFileFormat?, csvLayout: RecordFileWriter.CSVLayoutChoice,
        terminalEscaping: @Sendable ([UInt8]) -> [UInt8])
    /// The face's stream (standard output), written through `write`.
    case stream(
        format: RecordFileFormat, csvLayout: RecordFileWriter.CSVLayoutChoice,
        write: @Sendable ([UInt8]) throws(RecordWriteError) -> Void)
}

/// How a watch ended.
public struct WatchOutcome: Sendable {
    /// The failure of a destination (the output file, the database), already said through the
    /// diagnostics when it happened; `nil` when every record reached every destination.
    public var failure: String?
}

/// `watch`: a fleet watch with its destinations: the history database (records and spans, pruned to the
/// retention), an output file or stream, OTLP metrics when asked for, and the trace runtime.
public struct WatchService: Sendable {
    /// The database, connection and tracing settings of the command.
    public let settings: CoreSettings

    /// Records a destination holds for its writer before the oldest are lost (and said to be): minutes of
    /// a large fleet.
    public static let recordBacklog = 65_536

    /// A service for `settings`.
    public init(settings: CoreSettings) {
        self.settings = settings
    }

    /// Resolves the hosts, opens the output and the database (pruned to the retention at once and every
    /// hour), and runs a ``FleetWatch`` until its plan ends or the task is cancelled; then writes the
    /// records still on their way, closes the files valid and flushes the spans. `observe` runs beside the
    /// watch with it (a live view subscribes there) and is awaited before this returns. With the request's
    /// `rules`, every record is evaluated (alerts kept in the history database) and `onAlert` is told each
    /// transition.
    ///
    /// - Throws: ``CoreError``: `invalidRequest` for hosts that do not resolve or an output whose format
    ///   cannot be told; `failed` for an output or a database that cannot be opened. Nothing was
    ///   collected then.
    public func run(
        _ request: WatchRequest, output: RecordOutput?, clock: any WatchClock = SystemWatchClock(),
        observe: (@Sendable (FleetWatch) async -> Void)? = nil, onAlert: (@Sendable (AlertTransition) -> Void)? = nil
    ) async throws(CoreError) -> WatchOutcome {
        try await run(request, outputs: output.map { [$0] } ?? [], clock: clock, observe: observe, onAlert: onAlert)
    }

    /// As ``run(_:output:clock:observe:onAlert:)``, with every record written to each of `outputs` (a CSV file and an
    /// NDJSON file at once, each in its own format); a failure of one output skips only that one.
    ///
    /// - Throws: ``CoreError``: `invalidRequest` also for two outputs naming the same file.
    public func run(
        _ request: WatchRequest, outputs: [RecordOutput], clock: any WatchClock = SystemWatchClock(),
        observe: (@Sendable (FleetWatch) async -> Void)? = nil, onAlert: (@Sendable (AlertTransition) -> Void)? = nil
    ) async throws(CoreError) -> WatchOutcome {
        let fleet = try resolveFleet(request).overridden(by: request.flags)
        let hosts = fleet.hosts
        let profiles = fleet.profiles
        let writers = try Self.open(
            outputs, labels: RecordLabels(profiles: profiles, inJSON: request.fleetFile != nil))
        var history: StorageDatabase?
        if settings.storesHistory {
            let path = settings.databasePath
            do {
                let opened = try await StorageDatabase.open(at: path)
                opened.accessNotes.forEach(settings.diagnostics.note)
                history = opened
                if let retention = request.retention {
                    _ = try await opened.history.prune(olderThan: clock.now().addingTimeInterval(-retention.inSeconds))
                }
            } catch {
                try? await history?.close()
                throw CoreError(.failed, "\(error.message); or pass --no-history to watch without storing records")
            }
        }
        let (interval, collector) = request.flags.applying(
            FleetCollectionDefaults(fleet.file), interval: request.interval, collector: request.collector)
        let plan = WatchPlan(
            hosts: hosts, interval: interval, count: request.count, duration: request.duration,
            collector: collector, profiles: profiles)
        let watch = FleetWatch(plan: plan, clock: clock)
        let diagnostics = settings.diagnostics
        let metrics = settings.export?.metrics.map { metrics in
            HostMetricsExporter(
                settings: metrics, resourceAttributes: settings.resourceAttributes,
                labels: { watch.state(of: $0)?.labels ?? [:] }
            ) { diagnostics.warning($0) }
        }
        // A reader that went away (`watch … | head -2`) ends the run as Ctrl-C would: what was collected is
        // kept, files and the database closed valid.
        var alerts: AlertEngine?
        if let rules = request.rules {
            alerts = await AlertEngine.start(rules: rules, database: history, diagnostics: diagnostics) {
                clock.now()
            }
        }
        let announcing = alerts.flatMap { engine in
            onAlert.map { onAlert in
                let transitions = engine.subscribe()
                return Task { for await transition in transitions { onAlert(transition) } }
            }
        }
        let notifying = alerts.flatMap { engine in
            request.receivers.isEmpty
                ? nil
                : Task {
                    await AlertNotifier(receivers: request.receivers, engine: engine, diagnostics: diagnostics).run()
                }
        }
        let sink = RecordSink(
            writers: writers, history: history, metrics: metrics, diagnostics: diagnostics, alerts: alerts,
            alertRecords: request.alertRecords, readerClosed: { watch.stop() }, labels: { watch.state(of: $0)?.labels })
        // Subscribed before the watch starts, read by a task that is not cancelled with the watch: every
        // record collected reaches the file and the database, Ctrl-C or not.
        let records = watch.subscribe(buffer: Self.recordBacklog)
        let writing = Task { await sink.write(records) }
        // SIGHUP reads the fleet file (and the hosts file, ssh_config) again, where the run has one to read:
        // without, SIGHUP keeps its usual meaning (the terminal went away).
        // A SIGHUP that comes with the loss of the terminal the watch started on is the hangup it has always
        // been: the watch ends as on Ctrl-C, rather than running on unseen.
        let hadTerminal = ControllingTerminal.isPresent()
        let reloader =
            request.fleetFile != nil || request.hostsFile != nil
            ? ReloadSignal {
                guard !hadTerminal || ControllingTerminal.isPresent() else { return watch.stop() }
                self.reload(request, watch: watch, columns: writers.first?.labels ?? RecordLabels())
            }
            : nil
        defer { reloader?.stop() }
        let retention = request.retention
        await TraceRuntime.with(settings.traceSetup(retention: retention), diagnostics: settings.diagnostics) { _ in
            await withTaskGroup(of: Void.self) { group in
                if let retention, let history {
                    group.addTask { await Self.pruneHourly(history, retention: retention, clock: clock) }
                }
                if let observe { group.addTask { await observe(watch) } }
                await watch.run()
                await writing.value
                // The observer ends with the watch's events; the pruning only when cancelled.
                if retention != nil, history != nil { group.cancelAll() }
                await group.waitForAll()
            }
            if let metrics {
                TraceRuntime.report(await metrics.finish(), items: "data point(s)", to: diagnostics)
            }
        }
        sink.finish()
        alerts?.finish()
        await announcing?.value
        await notifying?.value
        try? await history?.close()
        return WatchOutcome(failure: sink.failure)
    }

    /// Reads the request's fleet file, hosts file and ssh_config again and makes their hosts the watched ones:
    /// hosts that stay keep their sessions (with new labels from their next record), new ones start, removed
    /// ones stop. A file that cannot be read or is refused leaves the running fleet, said in one sentence.
    func reload(_ request: WatchRequest, watch: FleetWatch, columns: RecordLabels) {
        let diagnostics = settings.diagnostics
        let fleet: ResolvedFleet
        do {
            fleet = try resolveFleet(request).overridden(by: request.flags)
        } catch {
            diagnostics.warning("the reload failed; keeping the \(watch.states.count) hosts watched: \(error.message)")
            return
        }
        let before = Set(watch.hosts.map(\.displayName))
        watch.replaceHosts(fleet.hosts, profiles: fleet.profiles)
        let after = Set(fleet.hosts.map(\.displayName))
        diagnostics.note(
            "reloaded the fleet: \(after.count) host(s), \(after.subtracting(before).count) added, "
                + "\(before.subtracting(after).count) removed")
        let unwritten = Set(fleet.profiles.values.flatMap(\.labels.keys)).subtracting(columns.names).sorted()
        if !unwritten.isEmpty, !columns.names.isEmpty || columns.inJSON {
            diagnostics.note(
                "the label(s) \(unwritten.joined(separator: ", ")) are not columns of the CSV output, whose header was "
                    + "written at start (JSON records carry them); restart watch to have them as columns")
        }
    }

    /// The hosts of a request, resolved through ssh_config.
    public func resolveHosts(_ request: WatchRequest) throws(CoreError) -> [ResolvedHost] {
        try resolveFleet(request).hosts
    }

    /// The hosts of a request with the fleet file's labels and group settings.
    public func resolveFleet(_ request: WatchRequest) throws(CoreError) -> ResolvedFleet {
        let file = try request.fleetFile.map { path throws(CoreError) in try FleetFile.read(at: path) }
        let resolver: HostResolver
        do {
            resolver = try HostResolver(settings: settings.connection, environment: settings.environment)
        } catch {
            throw CoreError(.invalidRequest, error.message)
        }
        let hosts = try resolver.fleet(arguments: request.hosts, hostsFile: request.hostsFile, fleetFile: file)
            .selecting(request.labels)
        // Checked before the watch starts, so that a stray word (`--every 2 s`) is one sentence and not a host
        // retried forever.
        if let problem = HostAddressCheck.unknownHost(among: request.hosts, resolver: resolver) {
            throw CoreError(.invalidRequest, problem)
        }
        return hosts
    }

    /// Opens every output, after checking that no two name the same file.
    private static func open(_ outputs: [RecordOutput], labels: RecordLabels) throws(CoreError)
        -> [RecordFileWriter]
    {
        var paths: Set<String> = []
        for case .file(let path, _, _, _) in outputs {
            let normalized = URL(fileURLWithPath: path).standardizedFileURL.path
            guard paths.insert(normalized).inserted else {
                throw CoreError(.invalidRequest, "\(path) is given twice as an output; name each file once.")
            }
        }
        var writers: [RecordFileWriter] = []
        for output in outputs { writers.append(try open(output, labels: labels)) }
        return writers
    }

    private static func open(_ output: RecordOutput, labels: RecordLabels) throws(CoreError) -> RecordFileWriter {
        switch output {
        case .stream(let format, let layout, let write):
            return RecordFileWriter(streamFormat: format, csvLayout: layout, labels: labels, write: write)
        case .file(let path, let format, let layout, let escaping):
            guard let chosen = format ?? RecordFileFormat.inferred(fromPath: path) else {
                throw CoreError(
                    .invalidRequest, "cannot tell the format of \(path) from its name; add --format csv|json|ndjson")
            }
            do {
                return try RecordFileWriter(
                    path: path, format: chosen, csvLayout: layout, labels: labels, terminalEscaping: escaping)
            } catch {
                throw CoreError(.failed, error.message)
            }
        }
    }

    /// Prunes the history every hour, so a week-long watch keeps its database to the retention window.
    private static func pruneHourly(_ database: StorageDatabase, retention: Duration, clock: any WatchClock) async {
        while !Task.isCancelled {
            do {
                try await clock.sleep(until: clock.now().addingTimeInterval(3600))
            } catch {
                return
            }
            _ = try? await database.history.prune(olderThan: clock.now().addingTimeInterval(-retention.inSeconds))
        }
    }
}

/// Where a watch's records go: the output file, the history database, and the OTLP metrics exporter. A
/// failure of the file or the database is said once and skips only that destination; collection and
/// the others go on, and every later record tries the failed one again, so a disk that had space freed
/// is written again from the next record on (said once too, with how many records it missed). `watch`
/// and `serve` both keep their records through one.
public final class RecordSink: Sendable {
    /// An output file or stream and whether it is failing now.
    private final class Output: Sendable {
        let writer: RecordFileWriter
        let state = Lock(DestinationState())

        init(writer: RecordFileWriter) { self.writer = writer }
    }
    private let outputs: [Output]
    private let history: StorageDatabase?
    private let metrics: HostMetricsExporter?
    private let diagnostics: Diagnostics
    /// Evaluates the alert rules on every record, in order, when the run has rules.
    private let alerts: AlertEngine?
    /// Whether the transitions go to the JSON and NDJSON outputs too.
    private let alertRecords: Bool
    /// The first failure of the run, for the exit status: the output is incomplete.
    private let failed = Lock<String?>(nil)
    private let historyState = Lock(DestinationState())

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
    /// Set once the reader of standard output went away (`| head`): the run ends, nothing more is written.
    private let readerClosed: @Sendable () -> Void
    /// A host's labels now (a reload may have changed them); `nil` for a host no longer watched.
    private let labels: @Sendable (String) -> [String: String]?
    private let closed = Lock(false)

    /// A sink to `writer`, `history` and `metrics`, any of which may be absent; failures go to `diagnostics`,
    /// and `readerClosed` is called once when the reader of standard output goes away.
    public convenience init(
        writer: RecordFileWriter?, history: StorageDatabase?, metrics: HostMetricsExporter?, diagnostics: Diagnostics,
        alerts: AlertEngine? = nil, readerClosed: @escaping @Sendable () -> Void = {}
    ) {
        self.init(
            writers: writer.map { [$0] } ?? [], history: history, metrics: metrics, diagnostics: diagnostics,
            alerts: alerts, readerClosed: readerClosed)
    }

    /// A sink writing every record to each of `writers` (each failing on its own), `history` and `metrics`;
    /// `labels` gives a host's labels at the time its record is written (the writers' own when it says `nil`).
    public init(
        writers: [RecordFileWriter], history: StorageDatabase?, metrics: HostMetricsExporter?,
        diagnostics: Diagnostics, alerts: AlertEngine? = nil, alertRecords: Bool = false,
        readerClosed: @escaping @Sendable () -> Void = {},
        labels: @escaping @Sendable (String) -> [String: String]? = { _ in nil }
    ) {
        self.alertRecords = alertRecords
        self.labels = labels
        self.outputs = writers.map { Output(writer: $0) }
        self.history = history
        self.metrics = metrics
        self.diagnostics = diagnostics
        self.alerts = alerts
        self.readerClosed = readerClosed
    }

    /// The first failure, if any.
    public var failure: String? { failed.withLock { $0 } }

    /// Writes every record of `events`, in order, until they end.
    public func write(_ events: WatchSubscription) async {
        for await event in events {
            switch event {
            case .record(let record):
                await write(record)
            case .missed(let count):
                // Only a destination stalled for minutes gets here: say so once, as a failure of the run.
                fail("\(count) event(s) were dropped because the output and the database fell behind")
            case .state, .removed:
                break
            }
        }
    }

    func write(_ record: SnapshotRecord) async {
        metrics?.record(record)
        let moves = await alerts?.observe(record) ?? []
        let alertLines = alertRecords ? moves.map(AlertJSON.record) : []
        let hostLabels = outputs.isEmpty ? nil : labels(record.host)
        for output in outputs where !(output.writer.path == nil && closed.withLock({ $0 })) {
            do {
                try output.writer.write(record, labels: hostLabels)
                for line in alertLines { try output.writer.write(other: line) }
                if let missed = output.state.withLock({ $0.succeeded() }) {
                    let target = output.writer.path ?? "standard output"
                    diagnostics.note(
                        "writing to \(target) again; the \(missed) record(s) made while it failed "
                            + "are only in the history database")
                }
            } catch  where error.readerClosed {
                closed.withLock { $0 = true }
                readerClosed()
            } catch {
                failed.withLock { $0 = $0 ?? error.message }
                if output.state.withLock({ $0.failedOnce() }) { diagnostics.error(error.message) }
            }
        }
        if let history {
            do {
                try await history.history.append([record])
                if let missed = historyState.withLock({ $0.succeeded() }) {
                    diagnostics.note(
                        "storing records in the history database again; \(missed) record(s) were not stored")
                }
            } catch {
                let message = error.message
                failed.withLock { $0 = $0 ?? message }
                if historyState.withLock({ $0.failedOnce() }) {
                    diagnostics.error(message + (outputs.isEmpty ? "" : " (the output file keeps receiving records)"))
                }
            }
        }
    }

    /// Completes the output file (a JSON array on a pipe gets its closing bracket).
    public func finish() {
        for output in outputs {
            // A destination failing at the end (a disk still full) or a reader gone has nothing to close.
            guard !output.state.withLock({ $0.failing }), !(output.writer.path == nil && closed.withLock({ $0 }))
            else { continue }
            do {
                try output.writer.finish()
            } catch {
                fail(error.message)
            }
        }
    }

    private func fail(_ message: String) {
        let first = failed.withLock { current -> Bool in
            guard current == nil else { return false }
            current = message
            return true
        }
        if first { diagnostics.error(message) }
    }
}
