/// The sections of a snapshot that one source of text yields.
///
/// `hostscope parse free` prints `{"memory": …}`, `parse df` prints `{"disks": …}`: a part
/// holds whichever sections its parser filled in, and collectors merge parts into a
/// ``Snapshot``.
///
/// ``devices`` is the one section a snapshot does not have: per-device I/O from `iostat` or
/// `/proc/diskstats`, which a collector joins onto ``Snapshot/disks`` by device name.
public struct SnapshotPart: Sendable, Equatable {
    public var os: OSInfo?
    public var uptimeSeconds: Double?
    public var load: LoadAverage?
    public var cpu: CPUStats?
    public var memory: MemoryStats?
    public var disks: [DiskStats]?
    public var network: [NetworkInterfaceStats]?
    public var processes: [ProcessStats]?
    /// Per-device I/O; printed by `hostscope parse` as `devices`, absent from snapshots.
    public var devices: [BlockDeviceStats]?
    public var warnings: [String]

    public init(
        os: OSInfo? = nil, uptimeSeconds: Double? = nil, load: LoadAverage? = nil, cpu: CPUStats? = nil,
        memory: MemoryStats? = nil, disks: [DiskStats]? = nil, network: [NetworkInterfaceStats]? = nil,
        processes: [ProcessStats]? = nil, devices: [BlockDeviceStats]? = nil, warnings: [String] = []
    ) {
        self.os = os
        self.uptimeSeconds = uptimeSeconds
        self.load = load
        self.cpu = cpu
        self.memory = memory
        self.disks = disks
        self.network = network
        self.processes = processes
        self.devices = devices
        self.warnings = warnings
    }
}

extension Snapshot {
    /// Copies every section the part holds into this snapshot, replacing what was there, and
    /// appends its warnings.
    public mutating func merge(_ part: SnapshotPart) {
        if let os = part.os { self.os = os }
        if let uptime = part.uptimeSeconds { uptimeSeconds = uptime }
        if let load = part.load { self.load = load }
        if let cpu = part.cpu { self.cpu = cpu }
        if let memory = part.memory { self.memory = memory }
        if let disks = part.disks { self.disks = disks }
        if let network = part.network { self.network = network }
        if let processes = part.processes { self.processes = processes }
        warnings.append(contentsOf: part.warnings)
    }
}
