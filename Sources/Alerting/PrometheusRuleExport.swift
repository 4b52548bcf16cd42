import ValueFormats
import Yams

/// The rules as a Prometheus rule file over node_exporter's metric names (and hostscope's own, as `serve`'s
/// `/metrics` exports them), so that a Prometheus scraping hostscope gives the same alerts.
public enum PrometheusRuleExport {
    /// Each figure's PromQL. A predicted figure needs a plain metric (``raw``).
    static let expressions: [String: String] = [
        "cpu_busy_percent":
            "100 * (1 - sum without (mode) (avg without (cpu) (rate(node_cpu_seconds_total{mode=~\"idle|iowait\"}[2m]))))",
        "memory_used_percent": "100 * (1 - node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes)",
        "memory_available_percent": "100 * node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes",
        "swap_used_percent": "100 * (1 - node_memory_SwapFree_bytes / node_memory_SwapTotal_bytes)",
        "load1": "node_load1", "load5": "node_load5", "load15": "node_load15",
        "load1_per_cpu": "node_load1 / count without (cpu, mode) (node_cpu_seconds_total{mode=\"idle\"})",
        "clock_offset_seconds": "hostscope_clock_offset_seconds",
        "clock_skew_seconds": "abs(hostscope_clock_offset_seconds)",
        "major_page_faults_per_second": "rate(node_vmstat_pgmajfault[5m])",
        "pressure_cpu_some_percent": "100 * rate(node_pressure_cpu_waiting_seconds_total[1m])",
        "pressure_io_some_percent": "100 * rate(node_pressure_io_waiting_seconds_total[1m])",
        "pressure_memory_some_percent": "100 * rate(node_pressure_memory_waiting_seconds_total[1m])",
        "filesystem_avail_percent": "100 * node_filesystem_avail_bytes / node_filesystem_size_bytes",
        "filesystem_used_percent":
            "100 * (node_filesystem_size_bytes - node_filesystem_free_bytes) / (node_filesystem_size_bytes "
            + "- node_filesystem_free_bytes + node_filesystem_avail_bytes)",
        "filesystem_avail_bytes": "node_filesystem_avail_bytes",
        "filesystem_files_free_percent": "100 * node_filesystem_files_free / node_filesystem_files",
        "filesystem_files_free": "node_filesystem_files_free",
        "filesystem_readonly": "node_filesystem_readonly",
        "network_receive_errors_ratio":
            "rate(node_network_receive_errs_total[2m]) / rate(node_network_receive_packets_total[2m])",
        "network_transmit_errors_ratio":
            "rate(node_network_transmit_errs_total[2m]) / rate(node_network_transmit_packets_total[2m])",
        "network_receive_bytes_per_second": "rate(node_network_receive_bytes_total[2m])",
        "network_transmit_bytes_per_second": "rate(node_network_transmit_bytes_total[2m])",
        "disk_io_weighted_seconds_per_second": "rate(node_disk_io_time_weighted_seconds_total[5m])",
        "disk_io_busy_percent": "100 * rate(node_disk_io_time_seconds_total[5m])",
        "cpu_core_busy_percent":
            "100 * (1 - sum without (mode) (rate(node_cpu_seconds_total{mode=~\"idle|iowait\"}[2m])))",
    ]

    /// The figures that are one metric, as `predict_linear` needs.
    static let raw: Set<String> = ["filesystem_avail_bytes", "filesystem_files_free", "load1", "load5", "load15"]

    /// The rule file: one group, `hostscope`; rules over figures Prometheus cannot see (the collection's own:
    /// `unreachable_records`, `failing_records`, `host_key_changed`) are left out and named in a comment.
    public static func render(_ rules: AlertRules) -> String {
        var exported: [Node] = []
        var skipped: [String] = []
        for rule in rules.rules {
            guard let expression = expression(rule) else {
                skipped.append(rule.name)
                continue
            }
            var pairs: [(Node, Node)] = [("alert", Node(rule.name)), ("expr", Node(expression))]
            if rule.forDuration > .zero { pairs.append(("for", Node(DurationText.format(rule.forDuration)))) }
            if rule.keepFiringFor > .zero {
                pairs.append(("keep_firing_for", Node(DurationText.format(rule.keepFiringFor))))
            }
            let labels = (rule.labels.merging(["severity": rule.severity.rawValue]) { $1 }).sorted { $0.key < $1.key }
            pairs.append(("labels", .mapping(.init(labels.map { (Node($0.key), Node($0.value)) }))))
            if !rule.annotations.isEmpty {
                let annotations = rule.annotations.sorted { $0.key < $1.key }.map {
                    (Node($0.key), Node($0.value.source))
                }
                pairs.append(("annotations", .mapping(.init(annotations))))
            }
            exported.append(.mapping(.init(pairs)))
        }
        let group = Node.mapping(
            .init([(Node("name"), Node("hostscope")), (Node("rules"), .sequence(.init(exported)))]))
        let document = Node.mapping(.init([(Node("groups"), .sequence(.init([group])))]))
        var text = "# Prometheus rules written by `hostscope alerts rules --format prometheus` from \(rules.source).\n"
        if !skipped.isEmpty {
            text +=
                "# Left out (figures of hostscope's own collection): \(Array(Set(skipped)).sorted().joined(separator: ", ")).\n"
        }
        return text + ((try? Yams.serialize(node: document, width: -1)) ?? "")
    }

    /// A rule's conditions joined with `and`; `nil` when a figure has no PromQL.
    static func expression(_ rule: AlertRule) -> String? {
        var parts: [String] = []
        let scopes = Set(rule.conditions.compactMap { AlertFigure.all[$0.figure]?.scope })
        for condition in rule.conditions {
            guard let expression = expressions[condition.figure] else { return nil }
            let threshold = AlertValueText.plain(condition.threshold)
            if let trend = condition.trend {
                guard raw.contains(condition.figure) else { return nil }
                let horizon = Int(trend.horizon.inSeconds.rounded())
                parts.append(
                    "predict_linear(\(expression)[\(DurationText.format(trend.window))], \(horizon)) "
                        + "\(condition.comparison.rawValue) \(threshold)")
            } else {
                parts.append("(\(expression)) \(condition.comparison.rawValue) \(threshold)")
            }
        }
        // Host-wide and per-device figures meet on the host.
        let joiner = scopes.count > 1 ? " and on (instance) " : " and "
        return parts.map { "(\($0))" }.joined(separator: joiner)
    }
}
