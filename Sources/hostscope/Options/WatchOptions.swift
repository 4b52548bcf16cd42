import Alerting
import ArgumentParser
import HostStats
import HostscopeCore
import TerminalUI

/// How each tick collects and where its records are kept: the options `watch` and `serve` share.
struct WatchOptions: ParsableArguments {
    @Option(help: "auto, proc or tools.")
    var collector: CollectorKind = .auto

    @Option(help: "How many processes to record per snapshot.")
    var top: Int = 10

    @Option(
        name: .customLong("timeout"),
        help: ArgumentHelp("Limit on each probe command (at most 80% of --every).", valueName: "duration"))
    var commandTimeout: DurationArgument = DurationArgument(.seconds(30))

    @Option(name: .customLong("db"), help: ArgumentHelp("The history database file.", valueName: "file"))
    var database: String?

    @Flag(name: .customLong("no-history"), help: "Do not store records in the history database.")
    var noHistory = false

    @Option(help: ArgumentHelp("Delete history records older than this (e.g. 7d).", valueName: "duration"))
    var retain: DurationArgument?

    @Option(
        help: ArgumentHelp(
            "Alert rules file (YAML, docs/alerts.md); default: the shipped rules (`hostscope alerts defaults`).",
            valueName: "file"))
    var rules: String?

    @Flag(name: .customLong("no-alerts"), help: "Evaluate no alert rules.")
    var noAlerts = false

    @Option(
        name: .customLong("alertmanager"),
        help: ArgumentHelp(
            "Send firing and resolved alerts to this Alertmanager (its base URL); repeat for an HA pair.",
            valueName: "url"))
    var alertmanagers: [String] = []

    @Option(
        name: .customLong("alert-webhook"),
        help: ArgumentHelp("Send alerts to this URL as Alertmanager's webhook payload; repeatable.", valueName: "url"))
    var alertWebhooks: [String] = []

    /// Where alerts are sent: every --alertmanager and --alert-webhook.
    ///
    /// - Throws: the exit status of a usage error for a URL that is not http(s) or for receivers without rules.
    func alertReceivers() throws -> [AlertReceiver] {
        for url in alertmanagers + alertWebhooks where !(url.hasPrefix("http://") || url.hasPrefix("https://")) {
            throw Output.fail("the alert receiver '\(url)' is not an http:// or https:// URL; give one.", .usage)
        }
        if noAlerts && !(alertmanagers.isEmpty && alertWebhooks.isEmpty) {
            throw Output.fail(
                "--no-alerts evaluates no rules, so --alertmanager and --alert-webhook have nothing to send.", .usage)
        }
        return alertmanagers.map(AlertReceiver.alertmanager) + alertWebhooks.map(AlertReceiver.webhook)
    }

    /// The rules to evaluate: the file of --rules, the shipped ones without it, none with --no-alerts.
    ///
    /// - Throws: the exit status of a usage error, after the sentence naming the file and line.
    func alertRules() throws -> AlertRules? {
        if noAlerts {
            if rules != nil { throw Output.fail("--rules and --no-alerts contradict each other; give one.", .usage) }
            return nil
        }
        guard let rules else { return .defaults }
        do {
            return try AlertRules.load(path: rules)
        } catch {
            throw Output.fail(error.message, .usage)
        }
    }

    /// The collection settings of every tick.
    var collectorOptions: CollectorOptions {
        CollectorOptions(kind: collector, topProcesses: top, commandTimeout: commandTimeout.duration)
    }
}
