import Foundation
import SSHTransport

/// The hosts a fleet command was told to watch, as given: host and pattern arguments and a hosts
/// file. Read again on a reload (`serve`'s SIGHUP), so an edited hosts file or ssh_config takes
/// effect without a restart.
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

    /// Why a fleet could not be read: one sentence saying what to do.
    public struct Failure: Error, Sendable {
        public var message: String
    }

    /// Reads the hosts file and ssh_config and resolves every host and pattern.
    public func resolve() throws(Failure) -> ResolvedFleet {
        do {
            let resolver = try HostResolver(settings: settings)
            var entries = arguments.map { HostListEntry(text: $0) }
            if let hostsFile {
                guard let text = try? String(contentsOfFile: hostsFile, encoding: .utf8) else {
                    throw Failure(message: "cannot read the hosts file \(hostsFile); check the path")
                }
                entries += try HostList.parseHostsFile(text, path: hostsFile)
            }
            guard !entries.isEmpty else {
                throw Failure(message: "no hosts to watch: name hosts or 'pattern*' arguments, or pass --hosts-file")
            }
            let hosts = try HostList.targets(for: entries, config: resolver.config).map { try resolver.resolve($0) }
            let patterns = entries.map(\.text).filter(HostList.isPattern)
            return ResolvedFleet(hosts: hosts, patterns: patterns, resolver: resolver)
        } catch let error as SSHError {
            throw Failure(message: error.message)
        } catch let error as Failure {
            throw error
        } catch {
            throw Failure(message: "\(error)")
        }
    }
}

/// A fleet read and resolved: its hosts, and the patterns that admit further hosts by name.
public struct ResolvedFleet: Sendable {
    /// The hosts named or selected by a pattern, in order.
    public var hosts: [ResolvedHost]
    /// The pattern arguments (`'web-*'`, `'db-*,!db-old'`).
    public var patterns: [String]
    let resolver: HostResolver?

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
        // or as whom hostscope connects.
        // `local` (this machine) only when named outright.
        guard let resolver, !name.isEmpty, name != HostTarget.localName, name.utf8.count <= 253,
            name.utf8.allSatisfy({ $0 == 45 || $0 == 46 || $0 == 95 || (48...57).contains($0) || (65...90).contains($0)
                || (97...122).contains($0) }),
            patterns.contains(where: { pattern in
                !pattern.contains("@") && !pattern.contains(":")
                    && HostPattern.matches(name, patternList: pattern)
            }),
            let target = try? HostTarget(parsing: name)
        else { return nil }
        return try? resolver.resolve(target)
    }
}
