public import HostStats

/// What a fleet file gives one host beyond where it connects: its labels, and its group's interval and
/// collection settings. A setting left `nil` is the watch plan's (a flag given on the command line clears
/// the file's, so the flag wins).
public struct HostProfile: Sendable, Equatable {
    /// Its labels: the file's defaults', its group's, then its own.
    public var labels: [String: String]
    /// Between two of its ticks.
    public var interval: Duration?
    /// The limit on each probe command.
    public var timeout: Duration?
    /// Processes recorded per snapshot.
    public var top: Int?
    /// Which probes collect it.
    public var collector: CollectorKind?
    /// Its directory of `*.prom` files.
    public var textfileDirectory: String?

    public init(
        labels: [String: String] = [:], interval: Duration? = nil, timeout: Duration? = nil, top: Int? = nil,
        collector: CollectorKind? = nil, textfileDirectory: String? = nil
    ) {
        self.textfileDirectory = textfileDirectory
        self.labels = labels
        self.interval = interval
        self.timeout = timeout
        self.top = top
        self.collector = collector
    }

    /// The interval of a host with this profile in `plan`.
    func interval(in plan: WatchPlan) -> Duration { interval ?? plan.interval }

    /// The collection settings of a host with this profile in `plan`.
    func collector(in plan: WatchPlan) -> CollectorOptions { collector(from: plan.collector) }

    /// `options` with this profile's collection settings over them.
    func collector(from options: CollectorOptions) -> CollectorOptions {
        var options = options
        if let timeout { options.commandTimeout = timeout }
        if let top { options.topProcesses = top }
        if let collector { options.kind = collector }
        if let textfileDirectory { options.textfileDirectory = textfileDirectory }
        return options
    }

    /// Whether a host must start again to follow `other` (its schedule or probes change); labels alone do not.
    func changesCollection(from other: HostProfile) -> Bool {
        interval != other.interval || timeout != other.timeout || top != other.top || collector != other.collector
            || textfileDirectory != other.textfileDirectory
    }

    /// This profile without the settings the command line gave (`interval`, `timeout`, `top`, `collector`,
    /// `textfileDirectory`): the flags win over the fleet file.
    public func overridden(
        interval: Bool, timeout: Bool, top: Bool, collector: Bool, textfileDirectory: Bool = false
    ) -> HostProfile {
        var profile = self
        if interval { profile.interval = nil }
        if timeout { profile.timeout = nil }
        if top { profile.top = nil }
        if collector { profile.collector = nil }
        if textfileDirectory { profile.textfileDirectory = nil }
        return profile
    }
}
