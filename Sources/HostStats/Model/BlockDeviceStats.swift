/// I/O of one block device, as `iostat` and `/proc/diskstats` report it.
///
/// The snapshot's `disks` are filesystems keyed by mount point, while these tools speak of
/// devices (`vda`, `nvme0n1`, `disk0`) and do not know where they are mounted. A collector joins
/// the two through df's filesystem column; `hostscope parse iostat` and `parse proc-diskstats`
/// print them unjoined in a `devices` section. Counters are cumulative since boot and are never
/// presented as rates; rates come only from a tool's interval report.
public struct BlockDeviceStats: Sendable, Equatable {
    public var device: String
    /// Bytes read since boot.
    public var readBytes: UInt64?
    /// Bytes written since boot.
    public var writeBytes: UInt64?
    /// Completed read requests since boot.
    public var reads: UInt64?
    /// Completed write requests since boot.
    public var writes: UInt64?
    public var readBytesPerSecond: Double?
    public var writeBytesPerSecond: Double?
    public var readsPerSecond: Double?
    public var writesPerSecond: Double?
    /// Share of the interval during which the device had requests in flight (iostat `%util`).
    public var utilizationPercent: Double?
    /// Reads and writes together, for tools that do not split them (macOS iostat `MB/s`).
    public var bytesPerSecond: Double?
    /// Requests per second, reads and writes together (iostat `tps`).
    public var transfersPerSecond: Double?

    public init(
        device: String, readBytes: UInt64? = nil, writeBytes: UInt64? = nil, reads: UInt64? = nil,
        writes: UInt64? = nil, readBytesPerSecond: Double? = nil, writeBytesPerSecond: Double? = nil,
        readsPerSecond: Double? = nil, writesPerSecond: Double? = nil, utilizationPercent: Double? = nil,
        bytesPerSecond: Double? = nil, transfersPerSecond: Double? = nil
    ) {
        self.device = device
        self.readBytes = readBytes
        self.writeBytes = writeBytes
        self.reads = reads
        self.writes = writes
        self.readBytesPerSecond = readBytesPerSecond
        self.writeBytesPerSecond = writeBytesPerSecond
        self.readsPerSecond = readsPerSecond
        self.writesPerSecond = writesPerSecond
        self.utilizationPercent = utilizationPercent
        self.bytesPerSecond = bytesPerSecond
        self.transfersPerSecond = transfersPerSecond
    }
}
