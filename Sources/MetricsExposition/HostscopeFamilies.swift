public import Foundation
public import HostStats

/// What the exposition says about one watched host: how its collections went, and its latest
/// snapshot when the latest collection succeeded.
public struct HostCollectionSummary: Sendable, Equatable {
    /// The host as the user named it (the `instance` label on `/metrics`).
    public var host: String
    /// The latest collection, when one has finished.
    public var latest: SnapshotRecord?
    /// When the last successful collection finished.
    public var lastSuccess: Date?
    /// Finished collections since `serve` started, failures included.
    public var collections: UInt64
    /// Failed collections since `serve` started, by kind.
    public var errors: [FailureKind: UInt64]

    public init(
        host: String, latest: SnapshotRecord? = nil, lastSuccess: Date? = nil, collections: UInt64 = 0,
        errors: [FailureKind: UInt64] = [:]
    ) {
        self.host = host
        self.latest = latest
        self.lastSuccess = lastSuccess
        self.collections = collections
        self.errors = errors
    }

    /// The latest snapshot, when the latest collection succeeded; `nil` while the host fails, so a
    /// failing host's figures go stale in Prometheus rather than being repeated.
    public var currentSnapshot: Snapshot? {
        if case .snapshot(let snapshot) = latest { return snapshot }
        return nil
    }
}

/// hostscope's own families: whether each host answers, how long collections take, what fails,
/// and the top processes.
public enum HostscopeFamilies {
    public static let up = MetricFamily(
        "hostscope_up", .gauge,
        help: "1 when the latest collection of the host succeeded, 0 when it failed or none has ended yet.")
    public static let lastSuccess = MetricFamily(
        "hostscope_last_success_timestamp_seconds", .gauge,
        help: "When the last successful collection of the host ended, in seconds since the Unix epoch.")
    public static let collectionDuration = MetricFamily(
        "hostscope_collection_duration_seconds", .gauge,
        help: "How long the latest successful collection of the host took, sample window included.")
    public static let collections = MetricFamily(
        "hostscope_collections_total", .counter, help: "Collections of the host that ended since serve started.")
    public static let errors = MetricFamily(
        "hostscope_collection_errors_total", .counter,
        help: "Failed collections of the host since serve started, by kind of failure.")
    public static let topProcessInfo = MetricFamily(
        "hostscope_top_process_info", .gauge,
        help: "The host's busiest processes by rank (1 the busiest): pid, user and command name; always 1.")
    public static let topProcessCPU = MetricFamily(
        "hostscope_top_process_cpu_ratio", .gauge,
        help: "CPU time of the process of this rank over the latest sample window, in cores (1 is one core busy).")
    public static let topProcessMemory = MetricFamily(
        "hostscope_top_process_resident_memory_bytes", .gauge, help: "Resident memory of the process of this rank.")
    public static let hosts = MetricFamily(
        "hostscope_hosts", .gauge, help: "Hosts watched by this serve process.")
    public static let probeRefusals = MetricFamily(
        "hostscope_probe_refusals_total", .counter,
        help: "/probe targets refused since serve started: not_in_fleet (no host or pattern of the fleet admits "
            + "the name) or limit (--probe-max-hosts hosts added by probes are watched).")
    /// One series per pending or firing alert, as Prometheus's own `ALERTS` series.
    public static let alert = MetricFamily(
        "hostscope_alert", .gauge,
        help: "1 for each pending or firing alert of serve's rules, as Prometheus's ALERTS: alertname, alertstate, "
            + "severity, instance and the alert's own labels.")
    public static let buildInfo = MetricFamily(
        "hostscope_build_info", .gauge, help: "The hostscope version serving these metrics; always 1.")

    /// Every per-host family, in exposition order.
    /// The host's clock minus the collector's, measured each tick (node_exporter cannot have it: it
    /// runs on the host and has no other clock to compare).
    public static let clockOffset = MetricFamily(
        "hostscope_clock_offset_seconds", .gauge,
        help: "The host's clock minus hostscope's when the probe read it, good to half the probe's round trip.")

    public static let perHost: [MetricFamily] = [
        up, lastSuccess, collectionDuration, collections, errors, topProcessInfo, topProcessCPU, topProcessMemory,
        clockOffset,
    ]

    /// The most top processes shown per host: each rank is a series, so this bounds cardinality.
    public static let topProcessLimit = 10
    /// The longest command name shown in a label.
    public static let commandNameLimit = 64

    /// The hostscope samples of one host; at most `topProcesses` (capped at ``topProcessLimit``)
    /// processes are shown, by their executable's name only: arguments may hold secrets and make
    /// every invocation a new series.
    public static func samples(for summary: HostCollectionSummary, topProcesses: Int) -> [MetricSample] {
        typealias L = MetricSample.Label
        var samples: [MetricSample] = []
        let snapshot = summary.currentSnapshot
        samples.append(MetricSample(up, [], snapshot == nil ? 0 : 1))
        if let lastSuccess = summary.lastSuccess {
            samples.append(MetricSample(self.lastSuccess, [], lastSuccess.timeIntervalSince1970))
        }
        if let snapshot { samples.append(MetricSample(collectionDuration, [], snapshot.durationMs / 1000)) }
        samples.append(MetricSample(collections, [], Double(summary.collections)))
        for kind in FailureKind.allCases {
            samples.append(MetricSample(errors, [L("kind", kind.rawValue)], Double(summary.errors[kind] ?? 0)))
        }
        if let snapshot {
            let count = max(0, min(topProcesses, topProcessLimit))
            for (index, process) in snapshot.processes.prefix(count).enumerated() {
                let rank = L("rank", String(index + 1))
                samples.append(
                    MetricSample(
                        topProcessInfo,
                        [
                            rank, L("pid", String(process.pid)), L("user", process.user ?? ""),
                            L("command", commandName(process.command)),
                        ], 1))
                if let cpu = process.cpuPercent { samples.append(MetricSample(topProcessCPU, [rank], cpu / 100)) }
                if let rss = process.rssBytes { samples.append(MetricSample(topProcessMemory, [rank], Double(rss))) }
            }
        }
        return samples
    }

    /// The executable's name of a command line (`/usr/sbin/sshd -D` → `sshd`, `[kworker/0:1]` as is),
    /// at most ``commandNameLimit`` characters.
    public static func commandName(_ command: String) -> String {
        if command.hasPrefix("[") { return String(command.prefix(commandNameLimit)) }
        let first = command.split(separator: " ", maxSplits: 1).first.map(String.init) ?? command
        let name = first.split(separator: "/").last.map(String.init) ?? first
        return String(name.prefix(commandNameLimit))
    }
}
