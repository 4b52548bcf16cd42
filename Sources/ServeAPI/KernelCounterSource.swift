import HostStats

/// The kernel counters behind a snapshot, for node_exporter's counter families
/// (`node_cpu_seconds_total`, `node_disk_*_total`).
enum KernelCounterSource {
    struct Counters {
        var cpu: CPUCounters?
        var disks: [DiskIOCounters]
        var ticksPerSecond: Double
    }

    /// The snapshot's counters; none until the snapshot model carries them.
    static func counters(of snapshot: Snapshot) -> Counters {
        Counters(cpu: nil, disks: [], ticksPerSecond: 100)
    }
}
