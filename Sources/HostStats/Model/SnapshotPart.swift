/// The sections of a snapshot that one source of text yields.
///
/// `hostscope parse free` prints `{"memory": …}`, `parse df` prints `{"disks": …}`: a part
/// holds whichever sections its parser filled in, and collectors merge parts into a
/// ``Snapshot``.
public struct SnapshotPart: Sendable, Equatable {
    public var os: OSInfo?
    public var uptimeSeconds: Double?
    public var load: LoadAverage?
    public var cpu: CPUStats?
    public var memory: MemoryStats?
    public var disks: [DiskStats]?
    public var network: [NetworkInterfaceStats]?
    public var processes: [ProcessStats]?
    public var warnings: [String]

    public init(
        os: OSInfo? = nil, uptimeSeconds: Double? = nil, load: LoadAverage? = nil, cpu: CPUStats? = nil,
        memory: MemoryStats? = nil, disks: [DiskStats]? = nil, network: [NetworkInterfaceStats]? = nil,
        processes: [ProcessStats]? = nil, warnings: [String] = []
    ) {
        self.os = os
        self.uptimeSeconds = uptimeSeconds
        self.load = load
        self.cpu = cpu
        self.memory = memory
        self.disks = disks
        self.network = network
        self.processes = processes
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
