import Alerting
import ArgumentParser
import TerminalUI

/// `--rules FILE` and `--no-alerts`: which alert rules a command that watches (`watch`, `serve`, `top`) evaluates.
struct AlertRuleOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Alert rules file (YAML, docs/alerts.md); default: the shipped rules (`hostscope alerts defaults`).",
            valueName: "file"))
    var rules: String?

    @Flag(name: .customLong("no-alerts"), help: "Evaluate no alert rules.")
    var noAlerts = false

    /// The rules to evaluate: the file of --rules, the shipped ones without it, none with --no-alerts.
    ///
    /// - Throws: the exit status of a usage error, after the sentence naming the file and line.
    func load() throws -> AlertRules? {
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
}
