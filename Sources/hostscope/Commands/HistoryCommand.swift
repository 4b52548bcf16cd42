import ArgumentParser
import Foundation
import HostStats
import HostscopeCore
import OrderedJSON
import Storage
import TerminalUI
import ValueFormats

/// Output formats of `history`.
enum HistoryFormat: String, ExpressibleByArgument, CaseIterable {
    case csv, json, ndjson
}

/// A moment on the command line: a duration back from now (`2h`, `90m`) or an RFC 3339 time.
struct TimeArgument: ExpressibleByArgument, Sendable {
    enum Value: Sendable {
        case ago(Duration)
        case at(Date)
    }

    var value: Value

    /// How to write a moment, for the message about one that could not be read.
    static let syntax =
        "a time is a duration back from now (30m, 2h, 1h30m, 7d) or an RFC 3339 time (2026-11-21T19:00:00Z); "
        + DurationText.syntax

    init?(argument: String) {
        if let duration = DurationText.parse(argument) {
            value = .ago(duration)
        } else if let date = RFC3339.parse(argument) {
            value = .at(date)
        } else {
            return nil
        }
    }

    func resolve(now: Date) -> Date {
        switch value {
        case .ago(let duration): now.addingTimeInterval(-duration.inSeconds)
        case .at(let date): date
        }
    }
}

struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Print the snapshots `watch` stored for a host, or for all hosts, over a time range.",
        discussion: """
            Reads the SQLite history that `hostscope watch` writes (it may be running meanwhile) and \
            prints its records oldest first: error records included, so gaps stay visible. JSON and \
            NDJSON are the hostscope.snapshot/1 objects exactly as watch produced them; CSV has the \
            columns of `snapshot --format csv`. On a terminal without --format, a table per host shows \
            the range and the samples, and the smallest, mean, largest and last value of each figure \
            (CPU busy, memory used, load, the fullest disk, network rates) and the errors; a pipe gets CSV.

            HOST is a host as watch named it, a glob such as 'db-*' (quote it), or all; without HOST \
            every host is printed. --since and --until take a duration back from now (2h, 30m, 7d) \
            or an RFC 3339 time (2026-11-21T19:00:00Z); both ends are inclusive. The table draws each \
            figure's course over the range as a sparkline.

            --step 1m rolls the records of each host up into steps counted from the Unix epoch (12:00, \
            12:01, …): the samples, the errors and the mean of each figure per step, as a table on a \
            terminal, as CSV, or as hostscope.history-step/1 objects in JSON and NDJSON.

            --fleet FILE --label env=prod reads only the hosts of the fleet file with that label (the \
            label of a host is its label now, in the file, not when it was recorded).

            The database is --db, else $HOSTSCOPE_DB, else $XDG_DATA_HOME/hostscope/hostscope.sqlite \
            (~/.local/share/hostscope/hostscope.sqlite when XDG_DATA_HOME is unset).
            """)

    @Argument(help: "Host, glob pattern or all (default: all).", completion: Completions.host)
    var host: String?

    @Option(
        help: ArgumentHelp("Earliest record: a duration back from now (2h) or an RFC 3339 time.", valueName: "time"))
    var since: TimeArgument?

    @Option(help: ArgumentHelp("Latest record: a duration back from now or an RFC 3339 time.", valueName: "time"))
    var until: TimeArgument?

    @Option(
        name: [.customShort("f"), .customLong("format")],
        help: ArgumentHelp(
            "csv, json (one array) or ndjson (one record per line) (default: a summary table on a terminal, else csv).",
            valueName: "format")
    )
    var chosenFormat: HistoryFormat?

    /// `-o`, the short name --format had before `-o` meant --output everywhere; kept for a release.
    @Option(name: .customShort("o"), help: .private)
    var formatAlias: HistoryFormat?

    var format: HistoryFormat { chosenFormat ?? formatAlias ?? .csv }

    @Option(
        name: .customLong("csv-layout"), help: "CSV layout: wide (host-level columns) or long (per disk/interface).")
    var csvLayout: CSVLayout = .wide

    @Option(name: .customLong("db"), help: ArgumentHelp("The history database file.", valueName: "file"))
    var database: String?

    @OptionGroup var fleet: FleetOptions

    @Option(
        help: ArgumentHelp(
            "Roll records up into the mean of each figure per step (e.g. 1m), per host.", valueName: "duration"))
    var step: DurationArgument?

    /// Records fetched per read: bounds memory however long the history is.
    static let pageSize = 500

    func validate() throws {
        let now = Date()
        if let since, let until, since.resolve(now: now) > until.resolve(now: now) {
            throw ValidationError("--since is later than --until; nothing could match.")
        }
        if let step, step.duration < .seconds(1) {
            throw ValidationError("--step \(DurationText.format(step.duration)) is too short; use 1s or more.")
        }
        if !fleet.labels.isEmpty, fleet.fleetFile == nil {
            throw ValidationError("--label selects hosts by the labels of a fleet file; add --fleet FILE.")
        }
        _ = try fleet.selector()
    }

    /// Whether the figures are summarised in a table: on a terminal, when no format was asked for.
    var summaryTable: Bool { chosenFormat == nil && formatAlias == nil && Output.stdoutIsTerminal }

    func run() async throws {
        let now = Date()
        var history = HistoryService(settings: try .command(database: database))
        if let fleetFile = fleet.fleetFile {
            var definition = FleetDefinition(
                arguments: [], hostsFile: nil, fleetFile: fleetFile, settings: ConnectionSettings())
            definition.labels = try fleet.selector()
            do {
                history = history.restricted(to: try definition.resolve().hosts.map(\.displayName))
            } catch {
                throw Output.fail(error.message, .usage)
            }
        }
        if let step {
            try await runSteps(history, length: step.duration, now: now)
            return
        }
        if summaryTable {
            let summary: HistorySummary
            do {
                summary = try await history.summarize(
                    host: host, since: since?.resolve(now: now), until: until?.resolve(now: now))
            } catch {
                throw Output.fail(error)
            }
            Output.write(HistoryTable.render(summary, width: Output.terminalWidth))
            if summary.unreadable > 0 {
                throw Output.fail(
                    "\(summary.unreadable) stored record(s) could not be read and were left out", .failure)
            }
            return
        }
        var output = PageWriter()
        switch (format, csvLayout) {
        case (.csv, .wide): output.append(SnapshotCSV.wideHeader)
        case (.csv, .long): output.append(SnapshotCSV.longHeader)
        case (.json, _): output.append("[")
        case (.ndjson, _): break
        }
        var first = true
        var skipped = 0
        do {
            try await history.read(
                host: host, since: since?.resolve(now: now), until: until?.resolve(now: now), pageSize: Self.pageSize
            ) { page in
                for stored in page {
                    guard let text = render(stored, first: first) else {
                        skipped += 1
                        continue
                    }
                    output.append(text)
                    first = false
                }
                output.flush()
            }
        } catch {
            throw Output.fail(error)
        }
        if format == .json { output.append(first ? "]\n" : "\n]\n") }
        output.flush()
        if skipped > 0 {
            throw Output.fail("\(skipped) stored record(s) could not be read and were left out", .failure)
        }
    }

    /// `--step`: the steps as a table per host on a terminal, else in the chosen format as they complete.
    private func runSteps(_ history: HistoryService, length: Duration, now: Date) async throws {
        var output = PageWriter()
        var collected: [HistoryStep] = []
        var first = true
        let unreadable: Int
        if !summaryTable {
            switch format {
            case .csv: output.append(HistoryStep.csvHeader)
            case .json: output.append("[")
            case .ndjson: break
            }
        }
        do {
            unreadable = try await history.steps(
                host: host, since: since?.resolve(now: now), until: until?.resolve(now: now), length: length,
                pageSize: Self.pageSize
            ) { steps in
                guard !summaryTable else {
                    collected += steps
                    return
                }
                for step in steps {
                    switch format {
                    case .csv: output.append(step.csvRow)
                    case .ndjson: output.append(step.jsonValue.jsonString + "\n")
                    case .json:
                        let element = step.jsonValue.prettyJSONString.replacingOccurrences(of: "\n", with: "\n  ")
                        output.append((first ? "\n  " : ",\n  ") + element)
                    }
                    first = false
                }
                output.flush()
            }
        } catch {
            throw Output.fail(error)
        }
        if summaryTable {
            Output.write(HistoryTable.render(steps: collected, length: length, width: Output.terminalWidth))
        } else if format == .json {
            output.append(first ? "]\n" : "\n]\n")
        }
        output.flush()
        if unreadable > 0 {
            throw Output.fail("\(unreadable) stored record(s) could not be read and were left out", .failure)
        }
    }

    /// One record in the chosen format, or `nil` (with a warning) when its stored JSON is unreadable.
    private func render(_ stored: StoredRecord, first: Bool) -> String? {
        switch format {
        case .ndjson:
            // Exactly the line watch wrote: no parse, no re-serialisation.
            return stored.json + "\n"
        case .json:
            guard let value = try? stored.jsonValue() else { return warnUnreadable(stored) }
            // Indented as one element of a pretty-printed array.
            let element = value.prettyJSONString.replacingOccurrences(of: "\n", with: "\n  ")
            return (first ? "\n  " : ",\n  ") + element
        case .csv:
            guard let record = try? stored.record() else { return warnUnreadable(stored) }
            return csvLayout == .wide ? SnapshotCSV.wideRow(record) : SnapshotCSV.longRows(record)
        }
    }

    private func warnUnreadable(_ stored: StoredRecord) -> String? {
        Output.warning(
            "record \(stored.id) of \(stored.host) at \(RFC3339.format(stored.collectedAt)) is not valid snapshot "
                + "JSON; left out")
        return nil
    }
}

/// Collects one page of output (CSV or JSON: data) and writes it with one call, so that a long
/// history is neither held whole in memory nor written a record per system call.
private struct PageWriter {
    private var text = ""

    mutating func append(_ piece: String) {
        text += piece
    }

    mutating func flush() {
        guard !text.isEmpty else { return }
        Output.writeData(text)
        text = ""
    }
}
