import Foundation

/// One alert rule: when its conditions hold for a host (and a device of it) for `for`, the alert fires.
public struct AlertRule: Sendable, Equatable {
    /// How urgent an alert is, as node-mixin's rules label them.
    public enum Severity: String, Sendable, CaseIterable {
        case info
        case warning
        case critical
    }

    /// The `alertname` label, as `NodeFilesystemAlmostOutOfSpace`.
    public var name: String
    /// Every condition must hold; the alert's value is the first one's figure.
    public var conditions: [AlertCondition]
    /// How long the conditions must hold before the alert fires (pending until then).
    public var forDuration: Duration
    /// How long the alert keeps firing after its conditions stopped holding.
    public var keepFiringFor: Duration
    public var severity: Severity
    /// ssh_config patterns of the hosts the rule applies to (`!` excludes); empty means every host.
    public var hosts: [String]
    /// Labels added to every alert of the rule.
    public var labels: [String: String]
    /// Annotations (`summary`, `description`, …), templates filled in when the alert is evaluated.
    public var annotations: [String: AlertTemplate]
    /// The line of the rule in its file, for messages.
    public var line: Int

    /// The scope the rule's alerts are per: the one device scope among its figures, else host-wide.
    public var scope: AlertFigure.Scope {
        conditions.lazy.compactMap { AlertFigure.all[$0.figure]?.scope }.first { $0 != .host && $0 != .collection }
            ?? (conditions.contains { AlertFigure.all[$0.figure]?.scope == .host } ? .host : .collection)
    }
}

/// A set of alert rules, as read from a rules file (or the shipped defaults).
public struct AlertRules: Sendable, Equatable {
    public var rules: [AlertRule]
    /// Where the rules came from: a path, or `defaults`.
    public var source: String

    public init(rules: [AlertRule], source: String) {
        self.rules = rules
        self.source = source
    }

    /// Reads the rules file at `path`: the one way every face loads rules (`--rules`, a fleet file's `rules:`).
    ///
    /// - Throws: ``AlertingError`` with one sentence naming the file and, for what is in it, the line.
    public static func load(path: String) throws(AlertingError) -> AlertRules {
        guard let file = fopen(path, "r") else {
            throw AlertingError(
                .unreadable,
                "The rules file \(path) could not be read (\(String(cString: strerror(errno)))); "
                    + "check the path given to --rules.")
        }
        fclose(file)
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else {
            throw AlertingError(.unreadable, "The rules file \(path) is not UTF-8 text; save it as UTF-8 YAML.")
        }
        return try parse(text, source: path)
    }

    /// The rules hostscope ships (docs/alerts.md lists them), the file `hostscope alerts defaults` prints.
    public static var defaults: AlertRules {
        // The shipped text is tested to parse, so this cannot fail at run time.
        (try? parse(DefaultAlertRules.text, source: "defaults")) ?? AlertRules(rules: [], source: "defaults")
    }

    /// The text of the shipped defaults, as `hostscope alerts defaults` prints it.
    public static var defaultsText: String { DefaultAlertRules.text }

    /// The same rules, said to come from `source`.
    public func with(source: String) -> AlertRules { AlertRules(rules: rules, source: source) }
}
