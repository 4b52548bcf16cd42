public import HostStats

/// The exposition of a watched fleet: hostscope's own families, then node_exporter's.
public enum FleetExposition {
    /// Every family, in exposition order.
    public static let families: [MetricFamily] =
        [
            HostscopeFamilies.buildInfo, HostscopeFamilies.hosts, HostscopeFamilies.probeRefusals,
            HostscopeFamilies.alert,
        ]
        + HostscopeFamilies.perHost + NodeExporterFamilies.all

    /// ``families`` as a set, to tell a rendered host's unlisted families.
    static let listedFamilies = Set(families)

    /// One host's samples: hostscope's, and node_exporter's when its latest collection succeeded.
    public static func samples(for summary: HostCollectionSummary, topProcesses: Int) -> [MetricSample] {
        var samples = HostscopeFamilies.samples(for: summary, topProcesses: topProcesses)
        if let snapshot = summary.currentSnapshot {
            samples += NodeExporterMapping.samples(snapshot: snapshot)
        }
        return samples
    }

    /// One `hostscope_alert` sample per alert: `alertname` and `alertstate` first, then `severity`, `instance`
    /// and the other labels by name.
    public static func alertSamples(_ alerts: [(labels: [String: String], state: String)]) -> [MetricSample] {
        alerts.map { alert in
            let first = ["alertname", "alertstate", "severity", "instance"]
            var labels = [MetricSample.Label("alertname", alert.labels["alertname"] ?? "")]
            labels.append(MetricSample.Label("alertstate", alert.state))
            for name in first.dropFirst(2) { labels.append(MetricSample.Label(name, alert.labels[name] ?? "")) }
            for (name, value) in alert.labels.sorted(by: { $0.key < $1.key }) where !first.contains(name) {
                labels.append(MetricSample.Label(name, value))
            }
            return MetricSample(HostscopeFamilies.alert, labels, 1)
        }
    }

    /// The samples that describe the serving process rather than a host.
    /// `probeRefusals` are `/probe` targets refused since start, by reason.
    public static func processSamples(
        version: String, hosts: Int, probeRefusals: [(reason: String, count: UInt64)] = []
    )
        -> [MetricSample]
    {
        [
            MetricSample(HostscopeFamilies.buildInfo, [MetricSample.Label("version", version)], 1),
            MetricSample(HostscopeFamilies.hosts, [], Double(hosts)),
        ]
            + probeRefusals.map {
                MetricSample(
                    HostscopeFamilies.probeRefusals, [MetricSample.Label("reason", $0.reason)], Double($0.count))
            }
    }
}
