/// The kernel's cumulative counters a snapshot's rates were computed from, as read at collection time.
///
/// They are not part of the snapshot record (its JSON carries the rates); exporters that speak in counters
/// use them, such as OTLP metrics, whose `system.cpu.time` and `system.disk.io` are cumulative sums since
/// boot.
public struct KernelCounters: Sendable, Equatable {
    /// `/proc/stat`: ticks per CPU state, total and per logical CPU.
    public var cpu: CPUCounters?
    /// `/proc/diskstats`: sectors read and written per block device.
    public var disks: [DiskIOCounters]
    /// How many ticks make a second in ``cpu`` (USER_HZ).
    public var ticksPerSecond: Double

    /// Creates counters.
    public init(cpu: CPUCounters? = nil, disks: [DiskIOCounters] = [], ticksPerSecond: Double = 100) {
        self.cpu = cpu
        self.disks = disks
        self.ticksPerSecond = ticksPerSecond
    }
}
