import Foundation
import HostStats
import MetricsExposition
import TestSupport
import Testing

/// A host's figures built from the real captures of `Fixtures/captured/debian12-local`, as the
/// proc collector reads them.
struct ExpositionFixture {
    var snapshot: Snapshot
    /// The counters the collector read, also set as the snapshot's ``Snapshot/counters``.
    var cpu: CPUCounters
    var disks: [DiskIOCounters]

    static func debian12() throws -> ExpositionFixture {
        func read(_ name: String) throws -> String {
            String(
                decoding: try Data(
                    contentsOf: Repository.fixtures.appendingPathComponent("captured/debian12-local/\(name)")),
                as: UTF8.self)
        }
        let cpu = try ProcStatParser.parse(try read("proc_stat.txt"))
        let disks = try ProcDiskStatsParser.parse(try read("proc_diskstats.txt"))
        var snapshot = Snapshot(
            host: "web1", collectedAt: Date(timeIntervalSince1970: 1_795_600_000), collector: "proc", durationMs: 41.5,
            os: OSInfo(
                family: "linux", name: "Debian GNU/Linux 12 (bookworm)", kernel: "6.1.0-18-amd64", arch: "x86_64"),
            uptimeSeconds: try ProcUptimeParser.parse(try read("proc_uptime.txt")),
            load: try ProcLoadAvgParser.parse(try read("proc_loadavg.txt")),
            memory: try ProcMemInfoParser.parse(try read("proc_meminfo.txt")),
            disks: try filesystems(try read("df_kP_and_iP.txt")),
            network: try ProcNetDevParser.parse(try read("proc_net_dev.txt")))
        snapshot.processes = [
            ProcessStats(
                pid: 812, ppid: 1, user: "postgres", cpuPercent: 37.5, memoryPercent: 2.1, rssBytes: 52_428_800,
                command: "/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main --password=hunter2"),
            ProcessStats(pid: 2, ppid: 0, user: "root", cpuPercent: 0.5, command: "[kthreadd]"),
        ]
        snapshot.counters = KernelCounters(cpu: cpu, disks: disks)
        return ExpositionFixture(snapshot: snapshot, cpu: cpu, disks: disks)
    }

    /// `df -kP` rows with the inode counts of the `df -iP` run printed after them.
    static func filesystems(_ text: String) throws -> [DiskStats] {
        let second = try #require(text.range(of: "\nFilesystem ", options: .backwards))
        let sizes = try DfParser.parse(String(text[..<second.lowerBound]) + "\n").value
        let inodes = try DfParser.parse(String(text[text.index(after: second.lowerBound)...])).value
        return sizes.map { disk in
            var disk = disk
            if let match = inodes.first(where: { $0.mount == disk.mount }) {
                disk.inodesTotal = match.inodesTotal
                disk.inodesUsed = match.inodesUsed
            }
            return disk
        }
    }

    var summary: HostCollectionSummary {
        HostCollectionSummary(
            host: snapshot.host, latest: .snapshot(snapshot), lastSuccess: snapshot.collectedAt, collections: 12,
            errors: [.timeout: 2])
    }

    func samples(topProcesses: Int = 5) -> [MetricSample] {
        FleetExposition.samples(for: summary, topProcesses: topProcesses)
    }

    /// The whole exposition of this host alone, with its `instance` label.
    func document(_ format: ExpositionFormat) -> [UInt8] {
        let series = RenderedSeries(samples(), leadingLabels: [MetricSample.Label("instance", snapshot.host)])
        let process = RenderedSeries(FleetExposition.processSamples(version: "1.2.3", hosts: 1))
        return ExpositionWriter.document(families: FleetExposition.families, series: [process, series], format: format)
    }
}
