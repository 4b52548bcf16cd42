public import FleetConfig
import SSHTransport

/// The hosts a long-running face watches, as given: host and pattern arguments and a hosts file. Read
/// again on a reload (`serve`'s SIGHUP), so an edited hosts file or ssh_config takes effect without a
/// restart.
public struct FleetDefinition: Sendable {
    /// Host and pattern arguments, as typed.
    public var arguments: [String]
    /// `--hosts-file`.
    public var hostsFile: String?
    /// `--fleet`: read again on every ``resolve()``.
    public var fleetFile: String?
    /// `--label`: only the hosts with these labels.
    public var labels = LabelSelector()
    /// The collection settings the command line gave: they win over the fleet file's groups.
    public var flags = FleetFlags()
    /// Connection options that apply to every host.
    public var settings: ConnectionSettings

    public init(arguments: [String], hostsFile: String?, fleetFile: String? = nil, settings: ConnectionSettings) {
        self.arguments = arguments
        self.hostsFile = hostsFile
        self.fleetFile = fleetFile
        self.settings = settings
    }

    /// Reads ssh_config, the hosts file and the fleet file and resolves every host and pattern. Host
    /// arguments or a hosts file win over the fleet file's groups: the file then gives those hosts their
    /// labels and settings only.
    ///
    /// - Throws: ``CoreError`` (`invalidRequest`) with the sentence to show: a file that cannot be read,
    ///   no host at all, a host that does not resolve, an ssh_config that cannot be read, a fleet file's
    ///   problem with its line.
    public func resolve() throws(CoreError) -> ResolvedFleet {
        let file = try fleetFile.map { path throws(CoreError) in try FleetFile.read(at: path) }
        let resolver: HostResolver
        do {
            resolver = try HostResolver(settings: settings)
        } catch {
            throw CoreError(.invalidRequest, error.message)
        }
        return try resolver.fleet(arguments: arguments, hostsFile: hostsFile, fleetFile: file).selecting(labels)
            .overridden(by: flags)
    }

    /// The names on ssh_config's `Host` lines that are not patterns, in file order: the fleet of a face started
    /// without hosts (`hostscope mcp`).
    ///
    /// - Throws: ``CoreError`` (`invalidRequest`) when ssh_config cannot be read.
    public func configuredHosts() throws(CoreError) -> [String] {
        do {
            return try HostResolver(settings: settings).config.hostAliases
        } catch {
            throw CoreError(.invalidRequest, error.message)
        }
    }
}

/// A fleet read and resolved: its hosts, and the patterns that admit further hosts by name.
public struct ResolvedFleet: Sendable {
    /// The hosts named or selected by a pattern, in order.
    public var hosts: [ResolvedHost]
    /// The pattern arguments and hosts-file lines (`'web-*'`, `'db-*,!db-old'`).
    public var patterns: [String]
    /// The fleet file read, if any (its `serve:` settings, its defaults).
    public var file: FleetFile?
    /// Labels and group settings of the hosts the fleet file names or selects, by name.
    public var profiles: [String: HostProfile] = [:]
    /// The fleet file's patterns with their profiles, for hosts they admit on request.
    var patternProfiles: [(String, HostProfile)] = []
    let resolver: HostResolver?

    /// A fleet of exactly `hosts` (and `patterns`, which then admit no further host: there is no
    /// ssh_config to resolve them through).
    public init(hosts: [ResolvedHost], patterns: [String] = []) {
        self.hosts = hosts
        self.patterns = patterns
        self.resolver = nil
    }

    init(hosts: [ResolvedHost], patterns: [String], resolver: HostResolver) {
        self.hosts = hosts
        self.patterns = patterns
        self.resolver = resolver
    }

    /// The host of the fleet called `name`: one of ``hosts``, or a name one of the ``patterns`` admits
    /// (``admission(of:)``); `nil` for anything else.
    public func host(named name: String) -> ResolvedHost? {
        admission(of: name)?.host
    }

    /// How the host called `name` belongs to the fleet: one of ``hosts`` (named by the operator), or a
    /// name one of the ``patterns`` admits by ``PatternAdmission``'s rule, resolved through ssh_config;
    /// `nil` for anything else, so a request can never make hostscope connect to an address it chose.
    ///
    /// A host admitted by a pattern is connected to with known_hosts only (no host key is recorded, whatever
    /// `--accept-new-host-key` or `StrictHostKeyChecking` say) and by key or agent only (no password is
    /// sent): the name came from whoever sent the request, not from the operator.
    public func admission(of name: String) -> FleetAdmission? {
        if let host = hosts.first(where: { $0.displayName == name }) { return .named(host) }
        // A pattern admits plain host names only: no user, port, brackets or path that would change where
        // or as whom hostscope connects; `local` (this machine) only when named outright.
        guard let resolver, let normalized = PatternAdmission.normalized(name), normalized != HostTarget.localName
        else { return nil }
        if let host = hosts.first(where: { $0.displayName == normalized }) { return .named(host) }
        let dots = patterns.filter { !$0.contains("@") && !$0.contains(":") }.compactMap {
            PatternAdmission.patternDots(selecting: normalized, patternList: $0)
        }.max()
        guard let dots, let target = try? HostTarget(parsing: normalized),
            case .ssh(var options)? = try? resolver.resolve(target),
            PatternAdmission.addressIsFixed(
                name: normalized, hostName: options.hostName, fromHostName: options.hostNameOrigin != nil,
                patternDots: dots)
        else { return nil }
        options.hostKeyPolicy = .strict
        options.hostKeyRecorded = nil
        options.allowPassword = false
        return .pattern(.ssh(options))
    }

}

/// How a host a request names belongs to the fleet (``ResolvedFleet/admission(of:)``).
public enum FleetAdmission: Sendable {
    /// Named by the operator: an argument, a hosts-file line, or a name a pattern expanded to from ssh_config.
    case named(ResolvedHost)
    /// A name a pattern admitted on request; connected to with known_hosts and keys only.
    case pattern(ResolvedHost)

    /// The host, however it was admitted.
    public var host: ResolvedHost {
        switch self {
        case .named(let host), .pattern(let host): host
        }
    }
}
