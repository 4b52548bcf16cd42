import Alerting
import ArgumentParser
import Foundation
import HostStats
import HostscopeCore
import TerminalUI
import ValueFormats

/// How each tick collects and where its records are kept: the options `watch` and `serve` share. The
/// collection settings are optional so that a fleet file's group settings apply where no flag is given.
struct WatchOptions: ParsableArguments {
    @Option(help: "auto, proc or tools (default: auto).")
    var collector: CollectorKind?

    @Option(help: "How many processes to record per snapshot (default: 10).")
    var top: Int?

    @Option(
        name: .customLong("timeout"),
        help: ArgumentHelp("Limit on each probe command, at most 80% of --every (default: 30s).", valueName: "duration")
    )
    var commandTimeout: DurationArgument?

    @Option(
        name: .customLong("textfile-directory"),
        help: ArgumentHelp(
            "The hosts' directory of *.prom files passed on, as node_exporter's --collector.textfile.directory "
                + "(default: /var/lib/prometheus/node-exporter).", valueName: "dir"))
    var textfileDirectory: String?

    @Option(name: .customLong("db"), help: ArgumentHelp("The history database file.", valueName: "file"))
    var database: String?

    @Flag(name: .customLong("no-history"), help: "Do not store records in the history database.")
    var noHistory = false

    @Option(help: ArgumentHelp("Delete history records older than this (e.g. 7d).", valueName: "duration"))
    var retain: DurationArgument?

    @OptionGroup var ruleOptions: AlertRuleOptions

    /// `--rules`.
    var rules: String? {
        get { ruleOptions.rules }
        set { ruleOptions.rules = newValue }
    }

    /// `--no-alerts`.
    var noAlerts: Bool { ruleOptions.noAlerts }

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

    @Option(
        name: .customLong("alertmanager-headers"),
        help: ArgumentHelp(
            "A file (mode 0600) of 'name: value' lines sent with every request to --alertmanager, e.g. "
                + "'Authorization: Bearer …' (never printed or traced). Default: HOSTSCOPE_ALERTMANAGER_HEADERS "
                + "(name=value,…).",
            valueName: "file"))
    var alertmanagerHeaders: String?

    @Option(
        name: .customLong("alert-webhook-headers"),
        help: ArgumentHelp(
            "The same for every --alert-webhook. Default: HOSTSCOPE_ALERT_WEBHOOK_HEADERS.", valueName: "file"))
    var alertWebhookHeaders: String?

    /// Where alerts are sent: every --alertmanager and --alert-webhook, each with its headers (registered as
    /// secrets as they are read).
    ///
    /// - Throws: the exit status of a usage error for a URL that is not http(s), for receivers without rules,
    ///   for headers without receivers, and for a headers file or variable that cannot be used.
    func alertReceivers(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> [AlertReceiver] {
        for url in alertmanagers + alertWebhooks where !(url.hasPrefix("http://") || url.hasPrefix("https://")) {
            throw Output.fail("the alert receiver '\(url)' is not an http:// or https:// URL; give one.", .usage)
        }
        if noAlerts && !(alertmanagers.isEmpty && alertWebhooks.isEmpty) {
            throw Output.fail(
                "--no-alerts evaluates no rules, so --alertmanager and --alert-webhook have nothing to send.", .usage)
        }
        // A file only (never a value on the command line, where every local user can read it), or the variable.
        func headers(_ file: String?, _ option: String, _ variable: String) throws -> [(name: String, value: String)] {
            do {
                return try HeaderSources(
                    option: option, arguments: file.map { ["@" + $0] } ?? [], environmentVariables: [variable],
                    environment: environment
                ).resolve().headers
            } catch {
                throw Output.fail(error.message, .usage)
            }
        }
        if alertmanagerHeaders != nil && alertmanagers.isEmpty {
            throw Output.fail("--alertmanager-headers gives headers for --alertmanager; name one too.", .usage)
        }
        if alertWebhookHeaders != nil && alertWebhooks.isEmpty {
            throw Output.fail("--alert-webhook-headers gives headers for --alert-webhook; name one too.", .usage)
        }
        let managerHeaders =
            alertmanagers.isEmpty
            ? [] : try headers(alertmanagerHeaders, "--alertmanager-headers", "HOSTSCOPE_ALERTMANAGER_HEADERS")
        let webhookHeaders =
            alertWebhooks.isEmpty
            ? [] : try headers(alertWebhookHeaders, "--alert-webhook-headers", "HOSTSCOPE_ALERT_WEBHOOK_HEADERS")
        return alertmanagers.map { AlertReceiver.alertmanager($0, headers: managerHeaders) }
            + alertWebhooks.map { AlertReceiver.webhook($0, headers: webhookHeaders) }
    }

    /// The rules to evaluate: the file of --rules, the shipped ones without it, none with --no-alerts.
    ///
    /// - Throws: the exit status of a usage error, after the sentence naming the file and line.
    func alertRules() throws -> AlertRules? {
        try ruleOptions.load()
    }

    /// The collection settings of every tick: the flags, else the built-in ones (a fleet file's `defaults:`
    /// replace those through ``FleetFlags/applying(_:interval:collector:)``).
    func collectorOptions() -> CollectorOptions {
        var options = CollectorOptions(
            kind: collector ?? .auto, topProcesses: top ?? 10, commandTimeout: commandTimeout?.duration ?? .seconds(30))
        if let textfileDirectory { options.textfileDirectory = textfileDirectory }
        return options
    }

    /// Refuses a `--textfile-directory` the probe cannot hold (ArgumentParser calls it for each command using these options).
    func validate() throws {
        if let textfileDirectory, !RemotePath.isPlainAbsolute(textfileDirectory) {
            throw ValidationError(
                "--textfile-directory \(textfileDirectory) cannot be used: give an absolute path of letters, digits, "
                    + "'.', '_', '-' and '/', such as /var/lib/prometheus/node-exporter.")
        }
    }

    /// Which collection settings the flags gave, with `interval` for `--every`: they win over the fleet file.
    func flags(interval: Bool) -> FleetFlags {
        FleetFlags(
            interval: interval, timeout: commandTimeout != nil, top: top != nil, collector: collector != nil,
            textfileDirectory: textfileDirectory != nil)
    }
}
