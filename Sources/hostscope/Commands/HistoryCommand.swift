import Agent
import ArgumentParser
import Foundation
import HostStats
import OrderedJSON
import Storage

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

    init?(argument: String) {
        if let duration = DurationText.parse(argument) {
            value = .ago(duration)
        } else if let date = Timestamp.parse(argument) {
            value = .at(date)
        } else {
            return nil
        }
    }

    func resolve(now: Date) -> Date {
        switch value {
        case .ago(let duration):
            let (seconds, attoseconds) = duration.components
            return now.addingTimeInterval(-(Double(seconds) + Double(attoseconds) / 1e18))
        case .at(let date): return date
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
            columns of `snapshot --format csv`.

            HOST is a host as watch named it, a glob such as 'db-*' (quote it), or all; without HOST \
            every host is printed. --since and --until take a duration back from now (2h, 30m, 7d) \
            or an RFC 3339 time (2026-11-21T19:00:00Z); both ends are inclusive.

            The database is --db, else $HOSTSCOPE_DB, else $XDG_DATA_HOME/hostscope/hostscope.sqlite \
            (~/.local/share/hostscope/hostscope.sqlite when XDG_DATA_HOME is unset).
            """)

    @Argument(help: "Host, glob pattern or all (default: all).")
    var host: String?

    @Option(
        help: ArgumentHelp("Earliest record: a duration back from now (2h) or an RFC 3339 time.", valueName: "time"))
    var since: TimeArgument?

    @Option(help: ArgumentHelp("Latest record: a duration back from now or an RFC 3339 time.", valueName: "time"))
    var until: TimeArgument?

    @Option(name: [.customShort("o"), .long], help: "csv, json (one array) or ndjson (one record per line).")
    var format: HistoryFormat = .csv

    @Option(
        name: .customLong("csv-layout"), help: "CSV layout: wide (host-level columns) or long (per disk/interface).")
    var csvLayout: CSVLayout = .wide

    @Option(name: .customLong("db"), help: ArgumentHelp("The history database file.", valueName: "file"))
    var database: String?

    /// Records fetched per read: bounds memory however long the history is.
    static let pageSize = 500

    func validate() throws {
        let now = Date()
        if let since, let until, since.resolve(now: now) > until.resolve(now: now) {
            throw ValidationError("--since is later than --until; nothing could match.")
        }
    }

    func run() async throws {
        let path = DatabaseLocation.path(explicit: database, environment: ProcessInfo.processInfo.environment)
        let store: StorageDatabase
        do {
            store = try await StorageDatabase.open(at: path, mode: .existingOnly)
            store.accessNotes.forEach(Output.note)
        } catch where error.code == .notFound {
            throw Output.fail("no history yet at \(path): run `hostscope watch` first", .failure)
        } catch {
            throw Output.fail(error.message, .failure)
        }
        let now = Date()
        let filter = HostFilter(argument: host)
        let query = HistoryQuery(hosts: filter, since: since?.resolve(now: now), until: until?.resolve(now: now))
        var skipped = 0
        do {
            if filter != .all, try await store.history.count(HistoryQuery(hosts: filter)) == 0 {
                throw Output.fail(try await unknownHostMessage(store, path: path), .failure)
            }
            var output = PageWriter()
            switch (format, csvLayout) {
            case (.csv, .wide): output.append(SnapshotCSV.wideHeader)
            case (.csv, .long): output.append(SnapshotCSV.longHeader)
            case (.json, _): output.append("[")
            case (.ndjson, _): break
            }
            var first = true
            var cursor: HistoryCursor?
            repeat {
                let page = try await store.history.page(query, after: cursor, limit: Self.pageSize)
                for stored in page.records {
                    guard let text = render(stored, first: first) else {
                        skipped += 1
                        continue
                    }
                    output.append(text)
                    first = false
                }
                output.flush()
                cursor = page.next
            } while cursor != nil
            if format == .json { output.append(first ? "]\n" : "\n]\n") }
            output.flush()
        } catch let error as StorageError {
            throw Output.fail(error.message, .failure)
        }
        if skipped > 0 {
            throw Output.fail("\(skipped) stored record(s) could not be read and were left out", .failure)
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
            "record \(stored.id) of \(stored.host) at \(Timestamp.format(stored.collectedAt)) is not valid snapshot "
                + "JSON; left out")
        return nil
    }

    private func unknownHostMessage(_ store: StorageDatabase, path: String) async throws -> String {
        let known = try await store.history.hosts().map(\.host)
        var subject = "no history for \(host ?? "")"
        if case .pattern(let pattern) = HostFilter(argument: host) { subject = "no host matching '\(pattern)'" }
        guard !known.isEmpty else { return "\(subject) at \(path): the database holds no records yet" }
        let listed = known.prefix(20).joined(separator: ", ") + (known.count > 20 ? ", …" : "")
        return "\(subject) at \(path); hosts with history: \(listed)"
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
