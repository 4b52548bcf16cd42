import ArgumentParser
import HostStats
import HostscopeCore

/// How each tick collects and where its records are kept: the options `watch` and `serve` share. The
/// collection settings are optional so that a fleet file's group settings apply where no flag is given.
struct WatchOptions: ParsableArguments {
    @Option(help: "auto, proc or tools (default: auto).")
    var collector: CollectorKind?

    @Option(help: "How many processes to record per snapshot (default: 10).")
    var top: Int?

    @Option(
        name: .customLong("timeout"),
        help: ArgumentHelp("Limit on each probe command, at most 80% of --every (default: 30s).", valueName: "duration")
    )
    var commandTimeout: DurationArgument?

    @Option(name: .customLong("db"), help: ArgumentHelp("The history database file.", valueName: "file"))
    var database: String?

    @Flag(name: .customLong("no-history"), help: "Do not store records in the history database.")
    var noHistory = false

    @Option(help: ArgumentHelp("Delete history records older than this (e.g. 7d).", valueName: "duration"))
    var retain: DurationArgument?

    /// The collection settings of every tick: the flags, else the built-in ones (a fleet file's `defaults:`
    /// replace those through ``FleetFlags/applying(_:interval:collector:)``).
    func collectorOptions() -> CollectorOptions {
        CollectorOptions(
            kind: collector ?? .auto, topProcesses: top ?? 10, commandTimeout: commandTimeout?.duration ?? .seconds(30))
    }

    /// Which collection settings the flags gave, with `interval` for `--every`: they win over the fleet file.
    func flags(interval: Bool) -> FleetFlags {
        FleetFlags(interval: interval, timeout: commandTimeout != nil, top: top != nil, collector: collector != nil)
    }
}
