import Foundation
import HostStats
public import HostscopeCore
import Synchronization
import ValueFormats

/// How `hostscope mcp` was started: the hosts it may reach, where the file tools are confined, the database, and
/// the bounds on what a session may ask.
public struct MCPConfiguration: Sendable {
    /// The hosts a tool may reach: these, and plain names the fleet's patterns admit.
    public var fleet: ResolvedFleet
    /// `--root`: the directory the file tools are confined to.
    public var root: String?
    /// The database (history and spans), connection settings, tracing and where diagnostics go.
    public var settings: CoreSettings
    /// The most tool calls a session may make per minute (a burst of as many, refilled evenly).
    public var callsPerMinute: Int
    /// The most bytes of one tool result's JSON; a longer one is cut and says how to ask for less.
    public var maxResultBytes: Int
    /// The most bytes one JSON-RPC message may have; a longer one is refused.
    public var maxRequestBytes: Int
    /// Whether tool call spans record arguments and results (the chat's content switch).
    public var captureContent: Bool
    /// `serve`'s live watch of its fleet: its hosts may be reached too, `host_snapshot` and the snapshot
    /// resource answer from its latest record while that is fresh, and resource subscriptions follow its records.
    public var watch: FleetWatch?
    /// `serve`'s alerts, read live by `list_alerts`; without it `list_alerts` reads the alerts a `watch` or `serve`
    /// last stored in the database.
    public var alerts: AlertEngine?

    /// A configuration with the default bounds: 120 calls a minute, 48 KiB results, 1 MiB requests.
    public init(
        fleet: ResolvedFleet, root: String?, settings: CoreSettings, callsPerMinute: Int = 120,
        maxResultBytes: Int = 48 * 1024, maxRequestBytes: Int = 1024 * 1024, captureContent: Bool = false,
        watch: FleetWatch? = nil, alerts: AlertEngine? = nil
    ) {
        self.watch = watch
        self.alerts = alerts
        self.fleet = fleet
        self.root = root
        self.settings = settings
        self.callsPerMinute = callsPerMinute
        self.maxResultBytes = maxResultBytes
        self.maxRequestBytes = maxRequestBytes
        self.captureContent = captureContent
    }
}

/// What the tools, resources and prompts of one server reach: the configuration, one ``HostTools`` per host (kept
/// for the session, so a warm call reuses its SSH session), the history and span stores.
final class MCPEnvironment: Sendable {
    let configuration: MCPConfiguration
    let history: HistoryService
    let traces: TraceService
    private let pool = Lock<[String: HostTools]>([:])

    init(configuration: MCPConfiguration) {
        self.configuration = configuration
        history = HistoryService(settings: configuration.settings)
        traces = TraceService(settings: configuration.settings)
    }

    /// The names of the hosts listed at start.
    var hostNames: [String] { configuration.fleet.hosts.map(\.displayName) }

    /// The host called `name` if the server may reach it.
    ///
    /// - Throws: ``MCPToolFailure`` naming the hosts it may reach otherwise.
    func host(named name: String) throws(MCPToolFailure) -> ResolvedHost {
        if let host = configuration.fleet.host(named: name) { return host }
        if let host = configuration.watch?.hosts.first(where: { $0.displayName == name }) { return host }
        let known = hostNames.prefix(20).joined(separator: ", ") + (hostNames.count > 20 ? ", …" : "")
        throw MCPToolFailure(
            "\(name) is not a host this server may reach; use one of: \(known.isEmpty ? "(none)" : known)"
                + " (list_hosts lists them)")
    }

    /// The tools of `host`, opened on first use and kept for the session.
    func tools(for host: ResolvedHost) -> HostTools {
        pool.withLock { tools in
            if let existing = tools[host.displayName] { return existing }
            let created = HostTools(host: host, root: configuration.root)
            tools[host.displayName] = created
            return created
        }
    }

    /// The latest snapshot of `host` from `serve`'s watch, when the host is watched and the record is a snapshot
    /// younger than two intervals of the watch; its ten busiest processes, as `host_snapshot` gives them.
    func watchedSnapshot(of host: ResolvedHost) -> Snapshot? {
        guard let watch = configuration.watch, let record = watch.state(of: host.displayName)?.latest,
            case .snapshot(var snapshot) = record.scrubbingSecrets(),
            Date().timeIntervalSince(snapshot.collectedAt) <= 2 * watch.plan.interval.inSeconds
        else { return nil }
        snapshot.processes = Array(snapshot.processes.prefix(10))
        return snapshot
    }

    /// Closes every SSH session the tools opened.
    func close() async {
        let all = pool.withLock { tools in
            defer { tools = [:] }
            return Array(tools.values)
        }
        for tools in all { await tools.close() }
    }
}
