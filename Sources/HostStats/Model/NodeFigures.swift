/// One named figure of a kernel file, as read: `pgfault 15992825`, `TCP_inuse 5`.
public struct KernelFigure: Sendable, Equatable {
    public var name: String
    public var value: Double

    public init(_ name: String, _ value: Double) {
        self.name = name
        self.value = value
    }
}

/// One network device's counters from `/proc/net/dev`, every column the kernel prints, named as
/// node_exporter names them (`receive_packets`, `transmit_colls`).
public struct NetworkDeviceCounters: Sendable, Equatable {
    public var device: String
    public var counters: [KernelFigure]

    public init(device: String, counters: [KernelFigure]) {
        self.device = device
        self.counters = counters
    }
}

/// `/proc/stat`'s lines besides the CPU ticks: what the kernel has done since boot, and now.
public struct KernelActivity: Sendable, Equatable {
    /// `ctxt`: context switches since boot.
    public var contextSwitches: UInt64?
    /// `intr`'s first figure: interrupts serviced since boot.
    public var interrupts: UInt64?
    /// `processes`: forks since boot.
    public var forks: UInt64?
    /// `procs_running`: runnable processes now.
    public var procsRunning: UInt64?
    /// `procs_blocked`: processes waiting for I/O now.
    public var procsBlocked: UInt64?

    public init(
        contextSwitches: UInt64? = nil, interrupts: UInt64? = nil, forks: UInt64? = nil, procsRunning: UInt64? = nil,
        procsBlocked: UInt64? = nil
    ) {
        self.contextSwitches = contextSwitches
        self.interrupts = interrupts
        self.forks = forks
        self.procsRunning = procsRunning
        self.procsBlocked = procsBlocked
    }
}

/// One line of a `/proc/pressure/{cpu,io,memory}` file.
public struct PressureStall: Sendable, Equatable {
    /// `cpu`, `io` or `memory`.
    public var resource: String
    /// `some` (at least one task stalled) or `full` (every non-idle task stalled).
    public var kind: String
    public var avg10: Double
    public var avg60: Double
    public var avg300: Double
    /// Stalled time since boot, in microseconds.
    public var totalMicroseconds: UInt64

    public init(resource: String, kind: String, avg10: Double, avg60: Double, avg300: Double, totalMicroseconds: UInt64)
    {
        self.resource = resource
        self.kind = kind
        self.avg10 = avg10
        self.avg60 = avg60
        self.avg300 = avg300
        self.totalMicroseconds = totalMicroseconds
    }
}

/// One CPU's line of `/proc/net/softnet_stat`.
public struct SoftnetCPU: Sendable, Equatable {
    public var cpu: Int
    public var processed: UInt64
    public var dropped: UInt64
    public var timeSqueezed: UInt64

    public init(cpu: Int, processed: UInt64, dropped: UInt64, timeSqueezed: UInt64) {
        self.cpu = cpu
        self.processed = processed
        self.dropped = dropped
        self.timeSqueezed = timeSqueezed
    }
}

/// Bytes queued on UDP sockets of one address family (`/proc/net/udp`, `/proc/net/udp6`).
public struct UDPQueues: Sendable, Equatable {
    /// `v4` or `v6`.
    public var ip: String
    public var transmitBytes: UInt64
    public var receiveBytes: UInt64

    public init(ip: String, transmitBytes: UInt64, receiveBytes: UInt64) {
        self.ip = ip
        self.transmitBytes = transmitBytes
        self.receiveBytes = receiveBytes
    }
}

/// One line of `/proc/mounts`.
public struct MountEntry: Sendable, Equatable {
    public var device: String
    public var mountPoint: String
    public var type: String
    public var readOnly: Bool

    public init(device: String, mountPoint: String, type: String, readOnly: Bool) {
        self.device = device
        self.mountPoint = mountPoint
        self.type = type
        self.readOnly = readOnly
    }
}

/// One network device's `/sys/class/net/DEVICE/*` attributes, by file name, as read (`mtu`:
/// `1500`, `operstate`: `up`); an attribute the kernel refused to give (`speed` of a link that is
/// down) is absent.
public struct NetworkDeviceClass: Sendable, Equatable {
    public var device: String
    public var attributes: [String: String]

    public init(device: String, attributes: [String: String]) {
        self.device = device
        self.attributes = attributes
    }
}

/// The kernel's clock discipline as `adjtimex(2)` reads it (`struct timex`, in the kernel's units:
/// `offset` and `jitter` in microseconds, or nanoseconds when `status` has `STA_NANO`; `maxError`,
/// `estimatedError` and `tick` in microseconds; `frequency`, `ppsFrequency` and `stability` in
/// 2^-16 ppm).
public struct KernelTimex: Sendable, Equatable {
    /// The call's return value, the clock state: `5` (`TIME_ERROR`) when not synchronised.
    public var state: Int64
    public var offset: Int64
    public var frequency: Int64
    public var maxError: Int64
    public var estimatedError: Int64
    public var status: Int64
    public var constant: Int64
    public var precision: Int64
    public var tolerance: Int64
    public var tick: Int64
    public var ppsFrequency: Int64
    public var jitter: Int64
    public var shift: Int64
    public var stability: Int64
    public var jitterCount: Int64
    public var calibrationCount: Int64
    public var errorCount: Int64
    public var stabilityExceededCount: Int64
    public var taiOffset: Int64

    public init(
        state: Int64, offset: Int64, frequency: Int64, maxError: Int64, estimatedError: Int64, status: Int64,
        constant: Int64, precision: Int64, tolerance: Int64, tick: Int64, ppsFrequency: Int64, jitter: Int64,
        shift: Int64, stability: Int64, jitterCount: Int64, calibrationCount: Int64, errorCount: Int64,
        stabilityExceededCount: Int64, taiOffset: Int64
    ) {
        self.state = state
        self.offset = offset
        self.frequency = frequency
        self.maxError = maxError
        self.estimatedError = estimatedError
        self.status = status
        self.constant = constant
        self.precision = precision
        self.tolerance = tolerance
        self.tick = tick
        self.ppsFrequency = ppsFrequency
        self.jitter = jitter
        self.shift = shift
        self.stability = stability
        self.jitterCount = jitterCount
        self.calibrationCount = calibrationCount
        self.errorCount = errorCount
        self.stabilityExceededCount = stabilityExceededCount
        self.taiOffset = taiOffset
    }

    /// `STA_NANO`: `offset` and `jitter` are in nanoseconds.
    public var isNanoseconds: Bool { status & 0x2000 != 0 }
    /// `TIME_ERROR`: the clock is not synchronised.
    public var isSynchronised: Bool { state != 5 }
}

/// One `*.prom` file of the textfile directory: its modification time and its text, or why it
/// could not be read.
public struct TextfileRead: Sendable, Equatable {
    public var path: String
    /// Seconds since the epoch, from the host's `stat`.
    public var modifiedSeconds: Double?
    public var text: String

    public init(path: String, modifiedSeconds: Double?, text: String) {
        self.path = path
        self.modifiedSeconds = modifiedSeconds
        self.text = text
    }
}

/// The figures node_exporter's default Linux collectors export beyond a snapshot's own, as one
/// probe read them from the host's kernel files (see docs/serve.md for the families they become).
///
/// Every part is optional or empty when its file was absent or unreadable (`/proc/pressure` before
/// Linux 4.20 or in a container, conntrack without its module): a figure the host does not give is
/// left out, never taken as zero.
public struct NodeFigures: Sendable, Equatable {
    /// `/proc/meminfo`, every field in file order, named as node_exporter names them
    /// (`Active_anon_bytes`, `HugePages_Total`).
    public var memory: [KernelFigure] = []
    /// `/proc/net/dev`, every column per device.
    public var networkDevices: [NetworkDeviceCounters] = []
    public var activity: KernelActivity?
    /// `/proc/vmstat`'s fields of node_exporter's default selection (`oom_kill`, `pgpg*`, `pswp*`,
    /// `pg*fault`).
    public var vmstat: [KernelFigure] = []
    public var pressure: [PressureStall] = []
    /// `/proc/net/sockstat` and `sockstat6`, named `PROTOCOL_field` (`TCP_inuse`, `sockets_used`,
    /// `UDP6_inuse`); `mem` figures are pages.
    public var sockets: [KernelFigure] = []
    /// Whether each `sockets` figure came from `sockstat6`, by name.
    public var sockets6: Set<String> = []
    /// `/proc/net/netstat`, `/proc/net/snmp` and `/proc/net/snmp6`, named `Protocol_Field`
    /// (`Tcp_ActiveOpens`, `Udp6_InDatagrams`), node_exporter's default selection.
    public var netstat: [KernelFigure] = []
    /// `/proc/sys/fs/file-nr`: allocated and maximum file handles.
    public var fileHandlesAllocated: UInt64?
    public var fileHandlesMaximum: UInt64?
    /// `/proc/sys/kernel/random/entropy_avail` and `poolsize`, in bits.
    public var entropyAvailable: UInt64?
    public var entropyPoolSize: UInt64?
    public var softnet: [SoftnetCPU] = []
    /// `/proc/sys/net/netfilter/nf_conntrack_count` and `_max`, when the module is loaded.
    public var conntrackEntries: UInt64?
    public var conntrackLimit: UInt64?
    /// `/proc/net/stat/nf_conntrack`: node_exporter's columns (``ProcConntrackStatParser/fields``), each
    /// summed over the CPUs, when the module is loaded.
    public var conntrackStats: [KernelFigure] = []
    public var udpQueues: [UDPQueues] = []
    /// `/proc/net/arp`: entries per device.
    public var arpEntries: [KernelFigure] = []
    /// The host's own clock when the probe ran, in seconds since the epoch.
    public var hostClockSeconds: Double?
    /// The host's clock minus the collector's at the moment the probe was sent.
    public var clockOffsetSeconds: Double?
    /// `/proc/mounts`, for each filesystem's read-only flag.
    public var mounts: [MountEntry] = []
    /// `/sys/class/net/*`: the attributes read once per connection, with the state ones (operstate,
    /// carrier and its change counts) of this tick over them.
    public var networkClass: [NetworkDeviceClass] = []
    /// The textfile directory's `*.prom` files; nil when the directory is not there.
    public var textfiles: [TextfileRead]?
    /// A textfile could not be read, or the directory held more than hostscope reads.
    public var textfileError = false
    /// `adjtimex(2)`, read at most once a minute (``LinuxProcProbe/timexInterval``) where the host
    /// has `perl` and a known architecture; between reads, the last one.
    public var timex: KernelTimex?
    /// The host's page size, the unit of sockstat's `mem` figures.
    public var pageSize: UInt64 = 4096

    public init() {}

    /// The most network devices whose figures are kept; a namespace with more gives the first
    /// ones and says so once in `warnings`.
    public static let deviceLimit = 512
}
