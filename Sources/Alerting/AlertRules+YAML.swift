import Foundation
import ValueFormats
import Yams

extension AlertRules {
    /// Reads rules from the text of a rules file; `source` names it in messages.
    ///
    /// - Throws: ``AlertingError`` (`.invalid`) with one sentence naming `source` and the line.
    public static func parse(_ text: String, source: String) throws(AlertingError) -> AlertRules {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw yamlError(error, source: source)
        } catch {
            throw AlertingError(.invalid, "\(source) is not YAML (\(error)); fix the file and start again.")
        }
        var reader = RuleReader(source: source)
        return AlertRules(rules: try reader.read(root), source: source)
    }

    private static func yamlError(_ error: YamlError, source: String) -> AlertingError {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _),
            .composer(_, let problem, let mark, _):
            return AlertingError(.invalid, "\(source):\(mark.line): not valid YAML: \(problem); fix that line.")
        case .duplicatedKeysInMapping(let duplicates, _):
            let keys = duplicates.joined(separator: ", ")
            return AlertingError(.invalid, "\(source): the key \(keys) is given twice in one mapping; keep one.")
        default:
            return AlertingError(.invalid, "\(source) is not valid YAML (\(error)); fix the file.")
        }
    }
}

/// Walks the YAML nodes of a rules file into rules, failing at the first problem with its line.
private struct RuleReader {
    let source: String

    private static let ruleKeys: Set<String> = [
        "alert", "when", "for", "keep_firing_for", "severity", "hosts", "labels", "annotations",
    ]
    /// Labels the evaluator sets itself.
    private static let reservedLabels: Set<String> = ["alertname", "severity", "instance"]

    func fail(_ node: Node?, _ sentence: String) -> AlertingError {
        let line = node?.mark.map { ":\($0.line)" } ?? ""
        return AlertingError(.invalid, "\(source)\(line): \(sentence)")
    }

    mutating func read(_ root: Node?) throws(AlertingError) -> [AlertRule] {
        guard let root else { return [] }
        guard let mapping = root.mapping else {
            throw fail(root, "the file must be a mapping with a `rules:` list; see docs/alerts.md.")
        }
        var rulesNode: Node?
        for (key, value) in mapping {
            guard key.string == "rules" else {
                throw fail(key, "the key '\(key.string ?? "?")' is not known here; the file has only `rules:`.")
            }
            rulesNode = value
        }
        guard let rulesNode else { return [] }
        if rulesNode.scalar?.string == "" || rulesNode.null != nil { return [] }
        guard let sequence = rulesNode.sequence else {
            throw fail(rulesNode, "`rules:` must be a list of rules, each starting with `- alert: Name`.")
        }
        var rules: [AlertRule] = []
        var seen: [String: Int] = [:]
        for node in sequence {
            let rule = try readRule(node)
            let identity = "\(rule.name)/\(rule.severity.rawValue)/\(rule.labels.sorted { $0.key < $1.key })"
            if let earlier = seen[identity] {
                throw fail(
                    node,
                    "the rule \(rule.name) with severity \(rule.severity.rawValue) repeats the one of line \(earlier); "
                        + "give one of them other labels or remove it.")
            }
            seen[identity] = rule.line
            rules.append(rule)
        }
        return rules
    }

    private func string(_ node: Node, _ key: String) throws(AlertingError) -> String {
        guard let scalar = node.scalar else {
            throw fail(node, "`\(key)` must be a single value, not a list or mapping.")
        }
        return scalar.string
    }

    private func duration(_ node: Node, _ key: String) throws(AlertingError) -> Duration {
        let text = try string(node, key)
        guard let duration = DurationText.parse(text) else {
            throw fail(node, "`\(key): \(text)` is no duration; \(DurationText.syntax).")
        }
        return duration
    }

    private func stringMap(_ node: Node, _ key: String) throws(AlertingError) -> [(Node, String, String)] {
        guard let mapping = node.mapping else { throw fail(node, "`\(key)` must be a mapping of names to text.") }
        var pairs: [(Node, String, String)] = []
        for (name, value) in mapping {
            let text = try string(value, "\(key).\(name.string ?? "?")")
            let label = name.string ?? ""
            guard isName(label) else {
                throw fail(name, "'\(label)' is not a label name (letters, digits and _, not starting with a digit).")
            }
            pairs.append((value, label, text))
        }
        return pairs
    }

    private func isName(_ text: String) -> Bool {
        guard let first = text.first, !first.isNumber else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }

    private func list(_ node: Node, _ key: String) throws(AlertingError) -> [(Node, String)] {
        if let sequence = node.sequence {
            var items: [(Node, String)] = []
            for item in sequence { items.append((item, try string(item, key))) }
            return items
        }
        return [(node, try string(node, key))]
    }

    private func readRule(_ node: Node) throws(AlertingError) -> AlertRule {
        guard let mapping = node.mapping else {
            throw fail(node, "each rule must be a mapping starting with `alert: Name`.")
        }
        let line = node.mark?.line ?? 0
        var rule = AlertRule(
            name: "", conditions: [], forDuration: .zero, keepFiringFor: .zero, severity: .warning, hosts: [],
            labels: [:], annotations: [:], line: line)
        var hasAlert = false
        var hasWhen = false
        for (keyNode, value) in mapping {
            let key = keyNode.string ?? ""
            guard Self.ruleKeys.contains(key) else {
                let hint = NameSuggestion.closest(to: key, among: Self.ruleKeys.sorted()).map {
                    " (did you mean \($0)?)"
                }
                throw fail(
                    keyNode,
                    "the rule key '\(key)' is not known\(hint ?? ""); a rule has "
                        + Self.ruleKeys.sorted().joined(separator: ", ") + ".")
            }
            switch key {
            case "alert":
                let name = try string(value, key)
                guard isName(name) else {
                    throw fail(value, "the alert name '\(name)' must be letters, digits and _ (as NodeCPUHighUsage).")
                }
                rule.name = name
                hasAlert = true
            case "when":
                hasWhen = true
                for (item, text) in try list(value, key) {
                    switch AlertCondition.parse(text) {
                    case .success(let condition): rule.conditions.append(condition)
                    case .failure(let problem): throw fail(item, "the condition '\(text)' \(problem.phrase).")
                    }
                }
            case "for": rule.forDuration = try duration(value, key)
            case "keep_firing_for": rule.keepFiringFor = try duration(value, key)
            case "severity":
                let text = try string(value, key)
                guard let severity = AlertRule.Severity(rawValue: text) else {
                    throw fail(value, "the severity '\(text)' is none of info, warning, critical.")
                }
                rule.severity = severity
            case "hosts": rule.hosts = try list(value, key).map(\.1)
            case "labels":
                for (node, label, text) in try stringMap(value, key) {
                    guard !Self.reservedLabels.contains(label) else {
                        throw fail(
                            node, "the label '\(label)' is set by hostscope itself; use `severity:` or another name.")
                    }
                    rule.labels[label] = text
                }
            default:  // annotations
                for (node, name, text) in try stringMap(value, key) {
                    switch AlertTemplate.parse(text) {
                    case .success(let template): rule.annotations[name] = template
                    case .failure(let problem): throw fail(node, "the annotation \(name) \(problem.phrase).")
                    }
                }
            }
        }
        guard hasAlert else { throw fail(node, "the rule has no `alert:` name.") }
        guard hasWhen, !rule.conditions.isEmpty else {
            throw fail(node, "the rule \(rule.name) has no `when:` condition (as `cpu_busy_percent > 90`).")
        }
        let scopes = Set(
            rule.conditions.compactMap { AlertFigure.all[$0.figure]?.scope }.filter { $0 != .host && $0 != .collection }
        )
        guard scopes.count <= 1 else {
            throw fail(
                node,
                "the rule \(rule.name) mixes figures per \(scopes.map(\.rawValue).sorted().joined(separator: " and ")); "
                    + "one rule reads host-wide figures and figures of one kind of device only.")
        }
        return rule
    }
}
