public import Foundation

/// One host's state at one moment: the `hostscope.snapshot/1` record of DESIGN.md.
///
/// Every section is optional because a collector may fail to read one part (a host without
/// `df`, say) and still report the rest; what it could not read is named in ``warnings``.
public struct Snapshot: Sendable, Equatable {
    public static let schema = "hostscope.snapshot/1"

    public var host: String
    public var collectedAt: Date
    /// Which collector produced the figures: `proc`, `tools`, `macos`, `busybox`.
    public var collector: String
    /// Wall time of the collection as seen by the client, sample window included.
    public var durationMs: Double
    public var os: OSInfo?
    public var uptimeSeconds: Double?
    public var load: LoadAverage?
    public var cpu: CPUStats?
    public var memory: MemoryStats?
    public var disks: [DiskStats]
    public var network: [NetworkInterfaceStats]
    public var processes: [ProcessStats]
    public var warnings: [String]
    /// The instant this record was due at, for a record of a schedule (`watch`); nil for a
    /// one-off snapshot.
    public var slot: Date?
    /// The kernel counters behind the rates, when the collector read them (Linux `/proc`); not part of the
    /// JSON record.
    public var counters: KernelCounters?
    /// The figures of node_exporter's other collectors, when the collector read them (Linux `/proc`); not
    /// part of the JSON record.
    public var node: NodeFigures?

    public init(
        host: String, collectedAt: Date, collector: String, durationMs: Double = 0, os: OSInfo? = nil,
        uptimeSeconds: Double? = nil, load: LoadAverage? = nil, cpu: CPUStats? = nil, memory: MemoryStats? = nil,
        disks: [DiskStats] = [], network: [NetworkInterfaceStats] = [], processes: [ProcessStats] = [],
        warnings: [String] = []
    ) {
        self.host = host
        self.collectedAt = collectedAt
        self.collector = collector
        self.durationMs = durationMs
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

/// Operating system identity, read once per connection.
public struct OSInfo: Sendable, Equatable {
    /// `linux`, `darwin`, `freebsd`, … (lower-cased `uname -s`).
    public var family: String
    /// A human name: `PRETTY_NAME` of os-release, or `macOS 14.4.1`.
    public var name: String?
    public var kernel: String?
    public var arch: String?
    /// `uname -n`: the host's own name for itself (`/proc/sys/kernel/hostname`).
    public var nodename: String?
    /// `/proc/sys/kernel/domainname` (`(none)` when unset, as the kernel writes it).
    public var domainname: String?
    /// `uname -v`: the kernel's build (`#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1`).
    public var kernelVersion: String?
    /// Every `KEY=value` of os-release, unquoted.
    public var release: [String: String] = [:]

    public init(family: String, name: String? = nil, kernel: String? = nil, arch: String? = nil) {
        self.family = family
        self.name = name
        self.kernel = kernel
        self.arch = arch
    }
}

/// Run-queue load averages over 1, 5 and 15 minutes.
public struct LoadAverage: Sendable, Equatable {
    public var one: Double
    public var five: Double
    public var fifteen: Double

    public init(one: Double, five: Double, fifteen: Double) {
        self.one = one
        self.five = five
        self.fifteen = fifteen
    }
}

/// CPU utilisation over a sampling window, as percentages of all cores (0–100).
///
/// `busy = 100 − idle − iowait` and `active = 100 − idle`; guest time is already inside user
/// time on Linux, so it is not added again. Percentages are `nil` when only one sample exists:
/// since-boot averages are never passed off as current figures.
public struct CPUStats: Sendable, Equatable {
    public var cores: Int?
    public var sampleMs: Double?
    public var busyPercent: Double?
    public var activePercent: Double?
    public var userPercent: Double?
    public var nicePercent: Double?
    public var systemPercent: Double?
    public var iowaitPercent: Double?
    public var irqPercent: Double?
    public var softirqPercent: Double?
    public var stealPercent: Double?
    public var idlePercent: Double?
    public var perCore: [CoreStats]

    public init(
        cores: Int? = nil, sampleMs: Double? = nil, busyPercent: Double? = nil, activePercent: Double? = nil,
        userPercent: Double? = nil, nicePercent: Double? = nil, systemPercent: Double? = nil,
        iowaitPercent: Double? = nil, irqPercent: Double? = nil, softirqPercent: Double? = nil,
        stealPercent: Double? = nil, idlePercent: Double? = nil, perCore: [CoreStats] = []
    ) {
        self.cores = cores
        self.sampleMs = sampleMs
        self.busyPercent = busyPercent
        self.activePercent = activePercent
        self.userPercent = userPercent
        self.nicePercent = nicePercent
        self.systemPercent = systemPercent
        self.iowaitPercent = iowaitPercent
        self.irqPercent = irqPercent
        self.softirqPercent = softirqPercent
        self.stealPercent = stealPercent
        self.idlePercent = idlePercent
        self.perCore = perCore
    }
}

/// One logical CPU's busy share over the sampling window.
public struct CoreStats: Sendable, Equatable {
    public var core: Int
    public var busyPercent: Double?

    public init(core: Int, busyPercent: Double?) {
        self.core = core
        self.busyPercent = busyPercent
    }
}

/// Physical memory and swap, in bytes.
public struct MemoryStats: Sendable, Equatable {
    public var totalBytes: UInt64?
    public var usedBytes: UInt64?
    public var availableBytes: UInt64?
    public var freeBytes: UInt64?
    public var buffersBytes: UInt64?
    public var cachedBytes: UInt64?
    public var usedPercent: Double?
    public var swapTotalBytes: UInt64?
    public var swapUsedBytes: UInt64?
    /// The formula behind `used_bytes`, e.g. `total-available` on Linux.
    public var definition: String?

    public init(
        totalBytes: UInt64? = nil, usedBytes: UInt64? = nil, availableBytes: UInt64? = nil, freeBytes: UInt64? = nil,
        buffersBytes: UInt64? = nil, cachedBytes: UInt64? = nil, usedPercent: Double? = nil,
        swapTotalBytes: UInt64? = nil, swapUsedBytes: UInt64? = nil, definition: String? = nil
    ) {
        self.totalBytes = totalBytes
        self.usedBytes = usedBytes
        self.availableBytes = availableBytes
        self.freeBytes = freeBytes
        self.buffersBytes = buffersBytes
        self.cachedBytes = cachedBytes
        self.usedPercent = usedPercent
        self.swapTotalBytes = swapTotalBytes
        self.swapUsedBytes = swapUsedBytes
        self.definition = definition
    }
}

/// One mounted filesystem.
///
/// `used_percent = used / (used + available) × 100`, as df computes it but unrounded: blocks
/// reserved for root count neither as used nor as available.
public struct DiskStats: Sendable, Equatable {
    public var filesystem: String
    public var type: String?
    public var mount: String
    public var sizeBytes: UInt64?
    public var usedBytes: UInt64?
    public var availableBytes: UInt64?
    public var usedPercent: Double?
    public var inodesTotal: UInt64?
    public var inodesUsed: UInt64?
    public var readBytesPerSecond: Double?
    public var writeBytesPerSecond: Double?

    public init(
        filesystem: String, type: String? = nil, mount: String, sizeBytes: UInt64? = nil, usedBytes: UInt64? = nil,
        availableBytes: UInt64? = nil, usedPercent: Double? = nil, inodesTotal: UInt64? = nil,
        inodesUsed: UInt64? = nil, readBytesPerSecond: Double? = nil, writeBytesPerSecond: Double? = nil
    ) {
        self.filesystem = filesystem
        self.type = type
        self.mount = mount
        self.sizeBytes = sizeBytes
        self.usedBytes = usedBytes
        self.availableBytes = availableBytes
        self.usedPercent = usedPercent
        self.inodesTotal = inodesTotal
        self.inodesUsed = inodesUsed
        self.readBytesPerSecond = readBytesPerSecond
        self.writeBytesPerSecond = writeBytesPerSecond
    }

    /// `used / (used + available) × 100`, or `nil` when either is unknown or both are zero.
    public static func usedPercent(used: UInt64?, available: UInt64?) -> Double? {
        // In doubles: two figures from a host may add up past UInt64.max.
        guard let used, let available, used > 0 || available > 0 else { return nil }
        return Double(used) / (Double(used) + Double(available)) * 100
    }
}

/// Counters and rates of one network interface.
public struct NetworkInterfaceStats: Sendable, Equatable {
    public var interface: String
    public var rxBytes: UInt64?
    public var txBytes: UInt64?
    public var rxBytesPerSecond: Double?
    public var txBytesPerSecond: Double?
    public var rxErrors: UInt64?
    public var txErrors: UInt64?
    public var rxDropped: UInt64?
    public var txDropped: UInt64?

    public init(
        interface: String, rxBytes: UInt64? = nil, txBytes: UInt64? = nil, rxBytesPerSecond: Double? = nil,
        txBytesPerSecond: Double? = nil, rxErrors: UInt64? = nil, txErrors: UInt64? = nil, rxDropped: UInt64? = nil,
        txDropped: UInt64? = nil
    ) {
        self.interface = interface
        self.rxBytes = rxBytes
        self.txBytes = txBytes
        self.rxBytesPerSecond = rxBytesPerSecond
        self.txBytesPerSecond = txBytesPerSecond
        self.rxErrors = rxErrors
        self.txErrors = txErrors
        self.rxDropped = rxDropped
        self.txDropped = txDropped
    }
}

/// One process, as `top` shows it.
///
/// `cpu_percent` is the share of one core over the sampling window (it can exceed 100 on a
/// multi-core host, as in `top`); `memory_percent` is resident memory over total memory.
public struct ProcessStats: Sendable, Equatable {
    public var pid: Int
    public var ppid: Int?
    public var user: String?
    public var cpuPercent: Double?
    public var memoryPercent: Double?
    public var rssBytes: UInt64?
    public var command: String

    public init(
        pid: Int, ppid: Int? = nil, user: String? = nil, cpuPercent: Double? = nil, memoryPercent: Double? = nil,
        rssBytes: UInt64? = nil, command: String
    ) {
        self.pid = pid
        self.ppid = ppid
        self.user = user
        self.cpuPercent = cpuPercent
        self.memoryPercent = memoryPercent
        self.rssBytes = rssBytes
        self.command = command
    }
}
