import Alerting
import ArgumentParser
import Foundation
import HostscopeCore
import OrderedJSON
import Storage
import TerminalUI

/// Output formats of `alerts`.
enum AlertsFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json, ndjson
}

struct AlertsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "alerts",
        abstract: "Show the alerts `watch` and `serve` evaluate, and the rules they evaluate.",
        discussion: """
            Without a subcommand, prints the pending and firing alerts kept in the history database \
            (`hostscope watch` and `hostscope serve` evaluate their rules on every record and store \
            each alert's state and every transition there); --history prints the transitions instead. \
            docs/alerts.md describes rules files and the shipped rules.
            """,
        subcommands: [
            AlertsListCommand.self, AlertsDefaultsCommand.self, AlertsFiguresCommand.self, AlertsCheckCommand.self,
            AlertsRulesCommand.self,
        ],
        defaultSubcommand: AlertsListCommand.self)
}

struct AlertsListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "Print the pending and firing alerts, or with --history their transitions.",
        discussion: """
            JSON has the shape of Prometheus's /api/v1/alerts entries (labels, annotations, state, \
            activeAt, value) plus firedAt; a transition has at, from, to, labels, annotations and value.
            """)

    @Flag(help: "Print the transitions (pending, firing, resolved) instead of the alerts now.")
    var history = false

    @Option(
        help: ArgumentHelp(
            "With --history: the earliest transition, a duration back from now (2h) or an RFC 3339 time.",
            valueName: "time"))
    var since: TimeArgument?

    @Option(help: ArgumentHelp("Only this host's alerts.", valueName: "host"), completion: Completions.host)
    var host: String?

    @Option(help: "With --history: at most this many transitions, the newest.")
    var limit = 1000

    @Option(
        name: [.customShort("f"), .customLong("format")],
        help: ArgumentHelp("table, json or ndjson (default: a table on a terminal, else ndjson).", valueName: "format"))
    var format: AlertsFormat?

    @Option(name: .customLong("db"), help: ArgumentHelp("The history database file.", valueName: "file"))
    var database: String?

    func validate() throws {
        if limit < 1 { throw ValidationError("--limit must be 1 or more.") }
        if since != nil && !history { throw ValidationError("--since reads transitions; add --history.") }
    }

    func run() async throws {
        let service = AlertService(settings: try .command(database: database))
        let chosen = format ?? (Output.stdoutIsTerminal ? .table : .ndjson)
        do {
            if history {
                let transitions = try await service.history(
                    since: since?.resolve(now: Date()), host: host, limit: limit)
                switch chosen {
                case .table: Output.write(AlertTable.render(transitions, width: Output.terminalWidth))
                case .json, .ndjson: writeJSON(transitions.map(AlertJSON.transition), as: chosen)
                }
            } else {
                let alerts = try await service.current().filter { host == nil || $0.host == host }
                switch chosen {
                case .table: Output.write(AlertTable.render(alerts, width: Output.terminalWidth))
                case .json, .ndjson: writeJSON(alerts.map(AlertJSON.alert), as: chosen)
                }
            }
        } catch {
            throw Output.fail(error)
        }
    }

    private func writeJSON(_ values: [JSONValue], as format: AlertsFormat) {
        if format == .json {
            Output.writeData(JSONWriter(pretty: true).string(.array(values)) + "\n")
        } else {
            Output.writeData(values.map { JSONWriter().string($0) + "\n" }.joined())
        }
    }
}

struct AlertsDefaultsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "defaults",
        abstract: "Print the shipped rules as a rules file to start from.")

    func run() {
        Output.writeData(AlertRules.defaultsText + "\n")
    }
}

struct AlertsFiguresCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "figures",
        abstract: "List the figures a rule's conditions can read.")

    func run() {
        let width = AlertFigure.catalog.map(\.name.count).max() ?? 0
        let lines = AlertFigure.catalog.map { figure in
            TerminalText.padded(figure.name, to: width) + "  "
                + TerminalText.padded(figure.scope.rawValue, to: 10) + "  " + figure.summary
        }
        Output.write(lines.joined(separator: "\n") + "\n")
    }
}

struct AlertsCheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check a rules file: print its rules, or the first problem with its line.")

    @Argument(help: "The rules file.", completion: .file())
    var file: String

    func run() throws {
        let rules: AlertRules
        do {
            rules = try AlertRules.load(path: file)
        } catch {
            throw Output.fail(error.message, .usage)
        }
        Output.write("\(file): \(rules.rules.count) rule(s)\n")
        for rule in rules.rules {
            let conditions = rule.conditions.map(\.text).joined(separator: " and ")
            Output.write("  \(rule.name) (\(rule.severity.rawValue)): \(conditions)\n")
        }
    }
}

/// Formats `alerts rules` writes.
enum AlertRulesFormat: String, ExpressibleByArgument, CaseIterable {
    case prometheus
}

struct AlertsRulesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rules",
        abstract: "Write the rules (a file's, or the shipped ones) as a Prometheus rule file.",
        discussion: """
            The expressions read node_exporter's metric names (and hostscope_clock_offset_seconds), as \
            `serve`'s /metrics exports them, so a Prometheus scraping serve gives the same alerts. Rules over \
            the collection's own figures (unreachable_records, failing_records, host_key_changed) are left \
            out and named in a comment.
            """)

    @Option(help: ArgumentHelp("The rules file (default: the shipped rules).", valueName: "file"))
    var rules: String?

    @Option(name: [.customShort("f"), .customLong("format")], help: "prometheus.")
    var format: AlertRulesFormat = .prometheus

    func run() throws {
        let chosen: AlertRules
        do {
            chosen = try rules.map { path throws(AlertingError) in try AlertRules.load(path: path) } ?? .defaults
        } catch {
            throw Output.fail(error.message, .usage)
        }
        Output.writeData(PrometheusRuleExport.render(chosen))
    }
}
