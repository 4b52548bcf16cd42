import FleetConfig
public import HostStats
import SSHTransport
import ValueFormats

/// `snapshot`: one-off snapshots of several hosts, collected at once; a slow or failing host does not
/// hold up the others, and every host yields one record.
public struct SnapshotService: Sendable {
    /// The database, connection and tracing settings of the command.
    public let settings: CoreSettings

    /// A service for `settings`.
    public init(settings: CoreSettings) {
        self.settings = settings
    }

    /// Resolves `hosts` (ssh_config aliases and patterns, `user@host:port`, `local`; none means `local`)
    /// and collects them at once under tracing, the spans stored in the database. Records come back in
    /// the order of the arguments. Cancelling stops every collection (each then yields an error
    /// record) and every session is closed.
    ///
    /// - Throws: ``CoreError`` (`invalidRequest`) when a host cannot be resolved; nothing was collected.
    ///
    /// - Parameters:
    ///   - hostsFile: a file of further hosts or patterns, one per line (`#` comments), as `watch`'s.
    ///   - fleetFile: a fleet file (`--fleet`), whose groups' hosts are collected when no host is named.
    ///   - labels: only the hosts with these fleet-file labels.
    ///   - flags: which of `options` the command line gave: the others are the fleet file's, per group
    ///     (`timeout`, `top`, `collector`), then its `defaults:`, then `options`'.
    public func collect(
        _ hosts: [String], hostsFile: String? = nil, fleetFile: String? = nil, labels: LabelSelector = LabelSelector(),
        options: CollectorOptions,
        flags: FleetFlags = FleetFlags(interval: true, timeout: true, top: true, collector: true)
    ) async throws(CoreError) -> [SnapshotRecord] {
        var options = options
        var profiles: [String: HostProfile] = [:]
        let resolved: [ResolvedHost]
        let aliases: [String]
        let resolver: HostResolver
        do {
            resolver = try HostResolver(settings: settings.connection, environment: settings.environment)
        } catch {
            throw CoreError(.invalidRequest, "\(error)")
        }
        aliases = resolver.config.hostAliases
        if let fleetFile {
            let fleet = try resolver.fleet(
                arguments: hosts, hostsFile: hostsFile, fleetFile: FleetFile.read(at: fleetFile)
            )
            .selecting(labels).overridden(by: flags)
            resolved = fleet.hosts
            profiles = fleet.profiles
            options = flags.applying(FleetCollectionDefaults(fleet.file), interval: .zero, collector: options).1
        } else if let hostsFile {
            resolved = try resolver.watchHosts(arguments: hosts, hostsFile: hostsFile)
        } else {
            do {
                resolved = try resolver.resolve(arguments: hosts.isEmpty ? [HostTarget.localName] : hosts)
            } catch {
                throw CoreError(.invalidRequest, "\(error)")
            }
        }
        let records = await TraceRuntime.with(settings.traceSetup(), diagnostics: settings.diagnostics) {
            [options, profiles] _ in
            await Self.collect(resolved, options: options, profiles: profiles)
        }
        return records.map { Self.suggestingAlias($0, aliases: aliases) }
    }

    /// A record whose host name did not resolve, with the ssh_config alias it was probably meant to be.
    static func suggestingAlias(_ record: SnapshotRecord, aliases: [String]) -> SnapshotRecord {
        guard case .failure(var failure) = record, failure.kind == .connect,
            failure.message.contains("cannot resolve host name"), !aliases.contains(failure.host),
            let suggestion = NameSuggestion.closest(to: failure.host, among: aliases)
        else { return record }
        failure.message += "; did you mean \(suggestion)?"
        return .failure(failure)
    }

    /// Collects resolved hosts at once, in the current tracer's spans; records in the order of `hosts`. A host
    /// with a profile (a fleet file's group) is collected with its settings over `options`.
    public static func collect(
        _ hosts: [ResolvedHost], options: CollectorOptions, profiles: [String: HostProfile] = [:]
    ) async -> [SnapshotRecord] {
        await withTaskGroup(of: (Int, SnapshotRecord).self) { group in
            for (index, host) in hosts.enumerated() {
                let options = profiles[host.displayName]?.collector(from: options) ?? options
                group.addTask {
                    let (runner, connection) = host.commandRunner()
                    let collector = HostCollector(host: host.displayName, runner: runner, options: options)
                    let record = await SnapshotTracing.collect(host: host.displayName, options: options) {
                        await collector.snapshot()
                    }
                    await connection?.close()
                    return (index, record)
                }
            }
            var records = [SnapshotRecord?](repeating: nil, count: hosts.count)
            for await (index, record) in group { records[index] = record }
            return records.compactMap { $0 }
        }
    }
}

extension ResolvedHost {
    /// What runs a host's commands: this machine's shell, or a session to the host (to be closed by the
    /// caller).
    ///
    /// - Parameter connectWait: how long a command waits for the session to connect (``HostConnection/connectWait``).
    func commandRunner(connectWait: Duration? = nil) -> (runner: any CommandRunner, connection: HostConnection?) {
        switch self {
        case .local:
            return (LocalCommandRunner(), nil)
        case .ssh(let options):
            let connection = HostConnection(options: options, connectWait: connectWait)
            return (connection, connection)
        }
    }
}
