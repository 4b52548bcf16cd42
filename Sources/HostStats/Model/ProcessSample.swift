/// One process as one line of `/proc/PID/stat` shows it: raw counters, no rates.
///
/// CPU shares need two samples of `cpuTicks` and the time between them; `rssPages` needs the
/// host's page size (`getconf PAGESIZE`) to become bytes.
public struct ProcessSample: Sendable, Equatable {
    public var pid: Int
    /// The kernel's short name (≤ 15 bytes), which may hold spaces and parentheses.
    public var comm: String
    /// One-letter state: `R`, `S`, `D`, `Z`, `T`, `I`, …
    public var state: String
    public var ppid: Int
    /// `utime + stime`, in USER_HZ ticks.
    public var cpuTicks: UInt64
    public var rssPages: UInt64
    /// Start time after boot, in USER_HZ ticks.
    public var startTimeTicks: UInt64
    public var virtualBytes: UInt64?

    public init(
        pid: Int, comm: String, state: String, ppid: Int, cpuTicks: UInt64, rssPages: UInt64, startTimeTicks: UInt64,
        virtualBytes: UInt64? = nil
    ) {
        self.pid = pid
        self.comm = comm
        self.state = state
        self.ppid = ppid
        self.cpuTicks = cpuTicks
        self.rssPages = rssPages
        self.startTimeTicks = startTimeTicks
        self.virtualBytes = virtualBytes
    }
}
