import SSHTransport

/// The hosts a long-running face watches, as given: host and pattern arguments and a hosts file. Read
/// again on a reload (`serve`'s SIGHUP), so an edited hosts file or ssh_config takes effect without a
/// restart.
public struct FleetDefinition: Sendable {
    /// Host and pattern arguments, as typed.
    public var arguments: [String]
    /// `--hosts-file`.
    public var hostsFile: String?
    /// Connection options that apply to every host.
    public var settings: ConnectionSettings

    public init(arguments: [String], hostsFile: String?, settings: ConnectionSettings) {
        self.arguments = arguments
        self.hostsFile = hostsFile
        self.settings = settings
    }

    /// Reads ssh_config and the hosts file and resolves every host and pattern.
    ///
    /// - Throws: ``CoreError`` (`invalidRequest`) with the sentence to show: a file that cannot be read,
    ///   no host at all, a host that does not resolve, an ssh_config that cannot be read.
    public func resolve() throws(CoreError) -> ResolvedFleet {
        let resolver: HostResolver
        do {
            resolver = try HostResolver(settings: settings)
        } catch {
            throw CoreError(.invalidRequest, error.message)
        }
        return try resolver.fleet(arguments: arguments, hostsFile: hostsFile)
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

    /// The host of the fleet called `name`: one of ``hosts``, or a plain host name that one of the
    /// ``patterns`` matches (resolved through ssh_config); `nil` for anything else, so a request can
    /// never make hostscope connect to an address outside the fleet.
    public func host(named name: String) -> ResolvedHost? {
        if let host = hosts.first(where: { $0.displayName == name }) { return host }
        // A pattern admits bare names only: no user, port, brackets or path that would change where
        // or as whom hostscope connects; `local` (this machine) only when named outright.
        guard let resolver, !name.isEmpty, name != HostTarget.localName, name.utf8.count <= 253,
            name.utf8.allSatisfy(Self.isHostNameByte),
            patterns.contains(where: { pattern in
                !pattern.contains("@") && !pattern.contains(":") && HostPattern.matches(name, patternList: pattern)
            }),
            let target = try? HostTarget(parsing: name)
        else { return nil }
        return try? resolver.resolve(target)
    }

    /// Letters, digits, `-`, `.` and `_`.
    static func isHostNameByte(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
    }
}
