import Foundation
import HostStats

/// A figure a rule can read from a host's records: host-wide, or one per filesystem, interface, disk or core.
///
/// A figure of a device scope gives one value per device, and the device's labels (node_exporter's names:
/// `mountpoint`, `device`, `fstype`, `cpu`) become labels of the alert.
public struct AlertFigure: Sendable {
    /// What one value of the figure belongs to.
    public enum Scope: String, Sendable, CaseIterable {
        case host
        case filesystem
        case interface
        case disk
        case core
        /// Figures of the collection itself (failed records count too), evaluated on every record.
        case collection
    }

    /// The name a rule's condition uses, as `filesystem_avail_percent`.
    public let name: String
    public let scope: Scope
    /// What the figure is, for `hostscope alerts figures` and docs/alerts.md.
    public let summary: String
    /// The values a threshold may take.
    public let range: ClosedRange<Double>
    let read: @Sendable (FigureInput) -> [FigureValue]

    /// Every figure, by name.
    public static let all: [String: AlertFigure] = Dictionary(
        uniqueKeysWithValues: catalog.map { ($0.name, $0) })
}

/// One value of a figure with the labels of what it belongs to (none for a host-wide figure).
struct FigureValue: Sendable {
    var labels: [String: String]
    var value: Double
}

/// What a figure is read from: the host's record now, its previous snapshot (for rates of counters) and
/// the run of failed collections it is in.
struct FigureInput {
    var snapshot: Snapshot?
    var previous: Snapshot?
    var failures: FailureRun
}

/// How many collections in a row failed, and how (for hostscope's own alerts).
struct FailureRun: Sendable, Equatable {
    /// Failures in a row of the kinds that reached the host (authentication, the probe's command, its output).
    var failing = 0
    /// Connect and timeout failures in a row: the host could not be reached.
    var unreachable = 0
    /// Whether the last record failed because the host key did not match.
    var hostKeyChanged = false

    mutating func record(_ record: SnapshotRecord) {
        switch record {
        case .snapshot:
            self = FailureRun()
        case .failure(let failure):
            let reached = failure.kind == .auth || failure.kind == .command || failure.kind == .parse
            failing = reached ? failing + 1 : 0
            unreachable = failure.kind == .connect || failure.kind == .timeout ? unreachable + 1 : 0
            hostKeyChanged = failure.kind == .hostKey
        }
    }
}

extension AlertFigure {
    private static let percent: ClosedRange<Double> = 0...100
    private static let nonNegative: ClosedRange<Double> = 0...Double.greatestFiniteMagnitude
    private static let any: ClosedRange<Double> = -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude
    private static let flag: ClosedRange<Double> = 0...1

    private static func host(
        _ name: String, _ summary: String, _ range: ClosedRange<Double>,
        _ value: @escaping @Sendable (FigureInput, Snapshot) -> Double?
    ) -> AlertFigure {
        AlertFigure(name: name, scope: .host, summary: summary, range: range) { input in
            guard let snapshot = input.snapshot, let figure = value(input, snapshot), figure.isFinite else { return [] }
            return [FigureValue(labels: [:], value: figure)]
        }
    }

    private static func collection(
        _ name: String, _ summary: String, _ range: ClosedRange<Double>,
        _ value: @escaping @Sendable (FailureRun) -> Double
    ) -> AlertFigure {
        AlertFigure(name: name, scope: .collection, summary: summary, range: range) { input in
            [FigureValue(labels: [:], value: value(input.failures))]
        }
    }

    private static func filesystem(
        _ name: String, _ summary: String, _ range: ClosedRange<Double>,
        _ value: @escaping @Sendable (DiskStats, Snapshot) -> Double?
    ) -> AlertFigure {
        AlertFigure(name: name, scope: .filesystem, summary: summary, range: range) { input in
            guard let snapshot = input.snapshot else { return [] }
            return snapshot.disks.compactMap { disk in
                guard let figure = value(disk, snapshot), figure.isFinite else { return nil }
                var labels = ["device": disk.filesystem, "mountpoint": disk.mount]
                if let type = disk.type { labels["fstype"] = type }
                return FigureValue(labels: labels, value: figure)
            }
        }
    }

    /// A rate per second of a network device's counter (or a ratio of two rates), between the previous
    /// snapshot and this one.
    private static func interface(
        _ name: String, _ summary: String, _ range: ClosedRange<Double>,
        _ value: @escaping @Sendable (_ rate: (String) -> Double?) -> Double?
    ) -> AlertFigure {
        AlertFigure(name: name, scope: .interface, summary: summary, range: range) { input in
            guard let now = input.snapshot, let before = input.previous, let devices = now.node?.networkDevices
            else { return [] }
            let seconds = now.collectedAt.timeIntervalSince(before.collectedAt)
            return devices.compactMap { device in
                let earlier = before.node?.networkDevices.first { $0.device == device.device }
                let rate = { (counter: String) -> Double? in
                    guard let earlier, let a = earlier.counters.first(where: { $0.name == counter })?.value,
                        let b = device.counters.first(where: { $0.name == counter })?.value
                    else { return nil }
                    return Self.rate(from: a, to: b, seconds: seconds)
                }
                guard let figure = value(rate), figure.isFinite else { return nil }
                return FigureValue(labels: ["device": device.device], value: figure)
            }
        }
    }

    private static func disk(
        _ name: String, _ summary: String, _ range: ClosedRange<Double>,
        _ counter: @escaping @Sendable (DiskIOCounters) -> UInt64?, scale: Double
    ) -> AlertFigure {
        AlertFigure(name: name, scope: .disk, summary: summary, range: range) { input in
            guard let now = input.snapshot, let before = input.previous, let disks = now.counters?.disks
            else { return [] }
            let seconds = now.collectedAt.timeIntervalSince(before.collectedAt)
            return disks.compactMap { disk in
                guard let earlier = before.counters?.disks.first(where: { $0.device == disk.device }),
                    let a = counter(earlier), let b = counter(disk),
                    let perSecond = Self.rate(from: Double(a), to: Double(b), seconds: seconds)
                else { return nil }
                return FigureValue(labels: ["device": disk.device], value: perSecond * scale)
            }
        }
    }

    /// The increase per second of a counter; nil over no time or when the counter went back (a reset).
    static func rate(from earlier: Double, to later: Double, seconds: Double) -> Double? {
        guard seconds > 0, later >= earlier else { return nil }
        return (later - earlier) / seconds
    }

    private static func ratio(_ part: UInt64?, _ whole: UInt64?) -> Double? {
        guard let part, let whole, whole > 0 else { return nil }
        return Double(part) / Double(whole) * 100
    }

    private static func pressure(_ resource: String) -> AlertFigure {
        host(
            "pressure_\(resource)_some_percent",
            "share of the last minute in which some task waited for \(resource) (PSI `some` avg60)", percent
        ) { _, snapshot in
            snapshot.node?.pressure.first { $0.resource == resource && $0.kind == "some" }?.avg60
        }
    }

    /// Every figure, in the order docs/alerts.md lists them.
    public static let catalog: [AlertFigure] = [
        host("cpu_busy_percent", "CPU time neither idle nor waiting for I/O, in percent of all cores", percent) {
            $1.cpu?.busyPercent
        },
        host("memory_used_percent", "memory in use (total − available), in percent of total", percent) {
            $1.memory?.usedPercent
        },
        host("memory_available_percent", "memory available, in percent of total", percent) {
            ratio($1.memory?.availableBytes, $1.memory?.totalBytes)
        },
        host("swap_used_percent", "swap in use, in percent of swap", percent) {
            ratio($1.memory?.swapUsedBytes, $1.memory?.swapTotalBytes)
        },
        host("load1", "load average over 1 minute", nonNegative) { $1.load?.one },
        host("load5", "load average over 5 minutes", nonNegative) { $1.load?.five },
        host("load15", "load average over 15 minutes", nonNegative) { $1.load?.fifteen },
        host("load1_per_cpu", "load average over 1 minute divided by the number of cores", nonNegative) {
            guard let load = $1.load?.one, let cores = $1.cpu?.cores, cores > 0 else { return nil }
            return load / Double(cores)
        },
        host("clock_offset_seconds", "the host's clock minus hostscope's, in seconds", any) {
            $1.node?.clockOffsetSeconds
        },
        host("clock_skew_seconds", "how far the host's clock is off hostscope's, either way, in seconds", nonNegative) {
            $1.node?.clockOffsetSeconds.map(abs)
        },
        host("major_page_faults_per_second", "major page faults per second (`pgmajfault` of /proc/vmstat)", nonNegative)
        { input, snapshot in
            let field = { (snapshot: Snapshot?) in snapshot?.node?.vmstat.first { $0.name == "pgmajfault" }?.value }
            guard let previous = input.previous, let a = field(previous), let b = field(snapshot) else { return nil }
            return rate(from: a, to: b, seconds: snapshot.collectedAt.timeIntervalSince(previous.collectedAt))
        },
        pressure("cpu"), pressure("io"), pressure("memory"),
        filesystem("filesystem_avail_percent", "space available to users, in percent of the filesystem's size", percent)
        { disk, _ in
            ratio(disk.availableBytes, disk.sizeBytes)
        },
        filesystem("filesystem_used_percent", "space used, in percent of used + available (as df)", percent) {
            disk, _ in
            disk.usedPercent
        },
        filesystem("filesystem_avail_bytes", "space available to users, in bytes", nonNegative) { disk, _ in
            disk.availableBytes.map { Double($0) }
        },
        filesystem("filesystem_files_free_percent", "inodes free, in percent of all inodes", percent) { disk, _ in
            guard let total = disk.inodesTotal, let used = disk.inodesUsed, used <= total else { return nil }
            return ratio(total - used, total)
        },
        filesystem("filesystem_files_free", "inodes free", nonNegative) { disk, _ in
            guard let total = disk.inodesTotal, let used = disk.inodesUsed, used <= total else { return nil }
            return Double(total - used)
        },
        filesystem("filesystem_readonly", "1 when the filesystem is mounted read-only, else 0", flag) {
            disk, snapshot in
            let mount = snapshot.node?.mounts.first { $0.mountPoint == disk.mount }
            return mount?.readOnly == true ? 1 : 0
        },
        interface(
            "network_receive_errors_ratio", "receive errors per packet received, between two records",
            nonNegative
        ) { rate in
            guard let errors = rate("receive_errs"), let packets = rate("receive_packets"), packets > 0 else {
                return nil
            }
            return errors / packets
        },
        interface(
            "network_transmit_errors_ratio", "transmit errors per packet sent, between two records", nonNegative
        ) { rate in
            guard let errors = rate("transmit_errs"), let packets = rate("transmit_packets"), packets > 0 else {
                return nil
            }
            return errors / packets
        },
        interface("network_receive_bytes_per_second", "bytes received per second", nonNegative) {
            $0("receive_bytes")
        },
        interface("network_transmit_bytes_per_second", "bytes sent per second", nonNegative) {
            $0("transmit_bytes")
        },
        disk(
            "disk_io_weighted_seconds_per_second",
            "weighted seconds spent doing I/O per second: about the average queue length", nonNegative,
            \.weightedIOMilliseconds, scale: 0.001),
        disk(
            "disk_io_busy_percent", "share of time the disk was busy with I/O, in percent", percent, \.ioMilliseconds,
            scale: 0.1),
        AlertFigure(
            name: "cpu_core_busy_percent", scope: .core,
            summary: "one core's time neither idle nor waiting for I/O, in percent", range: percent
        ) { input in
            input.snapshot?.cpu?.perCore.compactMap { core in
                core.busyPercent.map { FigureValue(labels: ["cpu": String(core.core)], value: $0) }
            } ?? []
        },
        collection("unreachable_records", "collections in a row that could not connect or timed out", nonNegative) {
            Double($0.unreachable)
        },
        collection(
            "failing_records", "collections in a row that reached the host and failed (auth, command, parse)",
            nonNegative
        ) {
            Double($0.failing)
        },
        collection("host_key_changed", "1 when the last collection was refused because the host key changed", flag) {
            $0.hostKeyChanged ? 1 : 0
        },
    ]
}
