/// The cumulative tick counters of one CPU line of `/proc/stat`, in USER_HZ ticks since boot.
///
/// Counters the running kernel does not print (iowait before 2.5.41, steal before 2.6.11, guest
/// before 2.6.24, …) read as zero. `guest` is already counted inside `user`, and `guestNice`
/// inside `nice`, so neither is added again when totalling.
public struct CPUTicks: Sendable, Equatable {
    public var user: UInt64
    public var nice: UInt64
    public var system: UInt64
    public var idle: UInt64
    public var iowait: UInt64
    public var irq: UInt64
    public var softirq: UInt64
    public var steal: UInt64
    public var guest: UInt64
    public var guestNice: UInt64

    public init(
        user: UInt64 = 0, nice: UInt64 = 0, system: UInt64 = 0, idle: UInt64 = 0, iowait: UInt64 = 0,
        irq: UInt64 = 0, softirq: UInt64 = 0, steal: UInt64 = 0, guest: UInt64 = 0, guestNice: UInt64 = 0
    ) {
        self.user = user
        self.nice = nice
        self.system = system
        self.idle = idle
        self.iowait = iowait
        self.irq = irq
        self.softirq = softirq
        self.steal = steal
        self.guest = guest
        self.guestNice = guestNice
    }

    /// All ticks spent, guest time not counted twice; `nil` when the counters add up past
    /// `UInt64.max` (no kernel's do, but the text read may hold anything).
    public var total: UInt64? { UInt64.checkedSum(user, nice, system, idle, iowait, irq, softirq, steal) }

    /// The ticks spent between `earlier` and `self`, or `nil` when any counter went backwards
    /// (a CPU taken offline and back, a counter wrap, or samples given in the wrong order).
    public func delta(since earlier: CPUTicks) -> CPUTicks? {
        guard user >= earlier.user, nice >= earlier.nice, system >= earlier.system, idle >= earlier.idle,
            iowait >= earlier.iowait, irq >= earlier.irq, softirq >= earlier.softirq, steal >= earlier.steal,
            guest >= earlier.guest, guestNice >= earlier.guestNice
        else { return nil }
        return CPUTicks(
            user: user - earlier.user, nice: nice - earlier.nice, system: system - earlier.system,
            idle: idle - earlier.idle, iowait: iowait - earlier.iowait, irq: irq - earlier.irq,
            softirq: softirq - earlier.softirq, steal: steal - earlier.steal, guest: guest - earlier.guest,
            guestNice: guestNice - earlier.guestNice)
    }
}

/// One read of `/proc/stat`: the aggregate `cpu` line and every `cpuN` line.
public struct CPUCounters: Sendable, Equatable {
    /// One logical CPU's counters, keyed by the number of its `cpuN` line.
    public struct Core: Sendable, Equatable {
        public var core: Int
        public var ticks: CPUTicks

        public init(core: Int, ticks: CPUTicks) {
            self.core = core
            self.ticks = ticks
        }
    }

    public var total: CPUTicks
    /// The online CPUs in the order the kernel lists them; offline CPUs have no line.
    public var perCore: [Core]
    /// `btime`: boot time in seconds since the Unix epoch, when the sample included it.
    public var bootTime: Int64?

    public init(total: CPUTicks, perCore: [Core] = [], bootTime: Int64? = nil) {
        self.total = total
        self.perCore = perCore
        self.bootTime = bootTime
    }
}

extension CPUStats {
    /// Utilisation between two reads of `/proc/stat`.
    ///
    /// Percentages are shares of all ticks spent in the window. A counter that went backwards
    /// leaves that line's figures `nil` rather than negative; so does a window without ticks.
    /// `elapsedMs` is the wall time between the reads, reported as `sample_ms`.
    public init(from earlier: CPUCounters, to later: CPUCounters, elapsedMs: Double?) {
        self.init(cores: later.perCore.isEmpty ? nil : later.perCore.count, sampleMs: elapsedMs)
        if let delta = later.total.delta(since: earlier.total), let ticks = delta.total, ticks > 0 {
            let total = Double(ticks)
            func share(_ ticks: UInt64) -> Double { Double(ticks) / total * 100 }
            userPercent = share(delta.user)
            nicePercent = share(delta.nice)
            systemPercent = share(delta.system)
            iowaitPercent = share(delta.iowait)
            irqPercent = share(delta.irq)
            softirqPercent = share(delta.softirq)
            stealPercent = share(delta.steal)
            idlePercent = share(delta.idle)
            busyPercent = share(ticks - delta.idle - delta.iowait)
            activePercent = share(ticks - delta.idle)
        }
        let earlierCores = Dictionary(
            earlier.perCore.map { ($0.core, $0.ticks) }, uniquingKeysWith: { first, _ in first })
        perCore = later.perCore.map { core in
            guard let before = earlierCores[core.core], let delta = core.ticks.delta(since: before),
                let ticks = delta.total, ticks > 0
            else { return CoreStats(core: core.core, busyPercent: nil) }
            return CoreStats(
                core: core.core, busyPercent: Double(ticks - delta.idle - delta.iowait) / Double(ticks) * 100)
        }
    }
}
