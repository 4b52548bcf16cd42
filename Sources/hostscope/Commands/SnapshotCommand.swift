public import ArgumentParser
public import HostStats
import HostscopeCore
import OrderedJSON
import TerminalUI
import ValueFormats

/// Output formats of snapshot records.
enum RecordFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json, ndjson, csv
}

/// CSV layouts: one wide row per host, or one row per disk/interface/core figure.
enum CSVLayout: String, ExpressibleByArgument, CaseIterable {
    case wide, long
}

extension CollectorKind: ExpressibleByArgument {}

struct SnapshotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Snapshot CPU, memory, load, disks, network and top processes of hosts.",
        discussion: """
            With no host, snapshots this machine ("local") through the same probe as a remote host. \
            Hosts are ~/.ssh/config aliases and patterns ('db-*'), user@host, host:port, \
            user@host:port or local, the lines of --hosts-file (one per line, # comments), and the hosts \
            of a --fleet file's groups when no host is named (--label env=prod keeps those with the label; each \
            group's timeout, top and collector apply where --timeout, --top and --collector are not given); several \
            are collected at once. CPU and rates are measured over --sample inside one command on \
            the host, never taken from since-boot counters.

            Output is a table on a terminal and JSON when piped (one object per host; an array for \
            several hosts with --format json). On a terminal, several hosts get one line each (with \
            the sentence of each that failed below); --long gives each its full block. The table lists real filesystems, fullest first, \
            and leaves out pseudo ones (tmpfs, devtmpfs, /dev, overlay) and the loopback and virtual \
            interfaces (lo, ifb0), saying how many; --all lists them too. JSON and CSV keep every \
            entry. A host that fails yields an error record and a line \
            on stderr; the others still report. Exit status: 0 all hosts succeeded, 3 connect, \
            4 authentication, 5 host key, 6 collection, 7 timeout (the first failing host's).
            """)

    @Argument(help: "Hosts to snapshot (default: local).", completion: Completions.host)
    var hosts: [String] = []

    @OptionGroup var sources: HostSourceOptions

    @Option(
        name: [.customShort("f"), .long],
        help: "table, json, ndjson or csv (default: table on a terminal, json otherwise).")
    var format: RecordFormat?

    /// `-o`, the short name --format had before `-o` meant --output everywhere; kept for a release.
    @Option(name: .customShort("o"), help: .private)
    var formatAlias: RecordFormat?

    @Option(
        help: """
            auto, proc (kernel files, one command) or tools (mpstat, free, df, ps). BusyBox and macOS \
            hosts have one collector each (busybox, macos), which every choice runs (default: auto).
            """)
    var collector: CollectorKind?

    @Option(
        help: ArgumentHelp(
            "CPU and rate sampling window; 0 reads once, without CPU or rates.", valueName: "duration"))
    var sample: DurationArgument = DurationArgument(.milliseconds(250))

    @Option(help: "How many processes to list, busiest first (default: 10).")
    var top: Int?

    @Option(
        name: .customLong("csv-layout"), help: "CSV layout: wide (host-level columns) or long (per disk/interface).")
    var csvLayout: CSVLayout = .wide

    @Option(
        name: .customLong("timeout"),
        help: ArgumentHelp("Limit on the probe command on each host (default: 30s).", valueName: "duration"))
    var commandTimeout: DurationArgument?

    @Flag(help: "With several hosts, a table's full block per host instead of one line each.")
    var long = false

    @Flag(help: "Also list pseudo filesystems (tmpfs, /dev) and virtual interfaces (lo, ifb0) in the table.")
    var all = false

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var tracing: TracingOptions

    @Option(name: .customLong("db"), help: ArgumentHelp("Database that receives the spans.", valueName: "file"))
    var database: String?

    func validate() throws {
        guard (top ?? 0) >= 0 else { throw ValidationError("--top must be 0 or more.") }
        guard sample.duration <= .seconds(60) else {
            throw ValidationError(
                "--sample \(DurationText.format(sample.duration)) is longer than a minute; use watch for longer series."
            )
        }
    }

    func run() async throws {
        let options = CollectorOptions(
            kind: collector ?? .auto, sample: sample.duration, topProcesses: top ?? 10,
            commandTimeout: commandTimeout?.duration ?? .seconds(30))
        // The flags given win over a fleet file's groups; the others come from the file, then the defaults.
        let flags = FleetFlags(
            interval: true, timeout: commandTimeout != nil, top: top != nil, collector: collector != nil)
        let service = SnapshotService(
            settings: try .command(
                database: database,
                connection: connection.settings(
                    attended: hosts.count <= 1 && sources.hostsFile == nil && sources.fleet.fleetFile == nil),
                tracing: tracing))
        let selector = try sources.fleet.selector()
        let records: [SnapshotRecord]
        do {
            records = try await withTerminationSignals { [hosts, sources] () async throws(CoreError) in
                try await service.collect(
                    hosts, hostsFile: sources.hostsFile, fleetFile: sources.fleet.fleetFile, labels: selector,
                    options: options,
                    flags: flags)
            }
        } catch {
            throw Output.fail(error)
        }

        switch format ?? formatAlias ?? (Output.stdoutIsTerminal ? .table : .json) {
        case .table:
            let width = Output.terminalWidth
            if records.count > 1 && !long {
                Output.write(SnapshotTable.summary(records, width: width))
            } else {
                Output.write(records.map { SnapshotTable.render($0, width: width, all: all) }.joined(separator: "\n"))
            }
        case .json:
            let values = records.map(\.jsonValue)
            Output.writeData((values.count == 1 ? values[0] : .array(values)).prettyJSONString + "\n")
        case .ndjson:
            Output.writeData(records.map { $0.jsonValue.jsonString + "\n" }.joined())
        case .csv:
            switch csvLayout {
            case .wide: Output.writeData(SnapshotCSV.wideHeader + records.map(SnapshotCSV.wideRow).joined())
            case .long: Output.writeData(SnapshotCSV.longHeader + records.map(SnapshotCSV.longRows).joined())
            }
        }
        // A table on a terminal already shows each error; stderr repeats them only where the table is not seen.
        if !(Output.stdoutIsTerminal && Output.stderrIsTerminal && (format ?? formatAlias ?? .table) == .table) {
            for case .failure(let failure) in records {
                Output.error(failure.message)
            }
        }
        let status = ExitStatus(records: records)
        if status != .success { throw ExitCode(status.rawValue) }
    }
}
