import Agent
import ArgumentParser
import Foundation
import HostStats
import SSHTransport
import Synchronization

extension RecordFileFormat: ExpressibleByArgument {}
extension RecordFileWriter.CSVLayoutChoice: ExpressibleByArgument {}

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Snapshot hosts every few seconds into CSV, JSON or NDJSON.",
        discussion: """
            Each host is read on its own fixed-rate schedule (ticks at start + k × --every, so \
            lateness never accumulates) over a session kept between ticks. Every tick of every \
            host yields exactly one record: a snapshot, or an error record (timeout, auth, \
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

        let plan = WatchPlan(
            hosts: resolved, interval: every.duration, count: count, duration: runFor?.duration,
            collector: CollectorOptions(kind: collector, topProcesses: top, commandTimeout: commandTimeout.duration))
        let status = liveView
            ? LiveStatus(hosts: resolved.map(\.displayName), width: Output.terminalWidth, write: { Output.write($0) })
            : nil
        let sink = RecordSink(writer: writer)

        // Spans go to the history database: pass watch's --db and --retain here once it has them.
        let trace = await TraceRuntime.start(try tracing.setup(database: nil, retention: nil))
        await withTerminationSignals {
            await FleetWatch(plan: plan).run(
                record: { record in sink.write(record) },
                status: { update in await status?.update(update) })
        }
        await trace.finishReporting()
        await status?.finish()
        sink.finish()
        if let failure = sink.failure {
            throw Output.fail(failure, .failure)
        }
    }
}

/// Where `watch` records go; a failed file stops receiving records (said once) while
/// collection goes on.
final class RecordSink: Sendable {
    private let writer: RecordFileWriter?
    private let failed = Mutex<String?>(nil)

    init(writer: RecordFileWriter?) {
        self.writer = writer
    }

    var failure: String? { failed.withLock { $0 } }

    func write(_ record: SnapshotRecord) {
        guard let writer, failure == nil else { return }
        do {
            try writer.write(record)
        } catch {
            failed.withLock { $0 = error.message }
            Output.error(error.message)
        }
    }

    func finish() {
        guard failure == nil else { return }
        do {
            try writer?.finish()
        } catch {
            failed.withLock { $0 = error.message }
        }
    }
}
