public import FleetConfig
public import Foundation
public import SSHTransport

/// The connection options every command takes (`--user`, `--port`, `--identity`, …), applied
/// over `~/.ssh/config` the way `ssh`'s command line is.
public struct ConnectionSettings: Sendable {
    public var user: String?
    public var port: Int?
    public var identityFiles: [String] = []
    public var knownHostsFile: String?
    public var acceptNewHostKey = false
    public var connectTimeout: Duration?
    /// `-J`: jump hosts that win over ProxyJump and ProxyCommand (`none` for a direct connection).
    public var jump: String?
    /// Name of an environment variable holding the password (the password itself never
    /// travels in argv).
    public var passwordEnvironmentVariable: String?
    /// Name of an environment variable holding private key passphrases.
    public var passphraseEnvironmentVariable: String?
    /// An ssh_config file to read instead of `~/.ssh/config` and `/etc/ssh/ssh_config`.
    public var configFile: String?
    /// Who is asked for a password or passphrase no variable holds; `nil` asks no one (a chat, which owns
    /// the terminal's input, and services).
    public var prompter: SecretPrompter?
    /// Told of each warning about the ssh_config files (`SSHConfig.warnings`) when a ``HostResolver`` reads
    /// them; the command line prints each once per run.
    public var configWarning: (@Sendable (String) -> Void)?
    /// Told when a host key is added to known_hosts, in `ssh`'s words.
    public var hostKeyRecorded: (@Sendable (String) -> Void)?
    /// Whether a host key that known_hosts does not hold may be recorded (`--accept-new-host-key`,
    /// `StrictHostKeyChecking accept-new`); `false` leaves known_hosts as it is whatever the config says (shell
    /// completion, which must change nothing).
    public var recordsHostKeys = true
    /// Told each step of reaching a host and each command run there (`-v`): the command's
    /// ``Diagnostics/debug``, which the resolver hands to every session it configures.
    public var debug: (@Sendable (String) -> Void)?

    public init() {}

    /// Process environment variable holding passphrases when `--passphrase-env` is not given.
    public static let defaultPassphraseVariable = "HOSTSCOPE_KEY_PASSPHRASE"
}

/// A host argument made concrete: the machine itself, or SSH options for a remote host.
public enum ResolvedHost: Sendable {
    case local
    case ssh(SSHConnectionOptions)

    /// The name the user knows the host by, used in records and messages.
    public var displayName: String {
        switch self {
        case .local: HostTarget.localName
        case .ssh(let options): options.displayName
        }
    }
}

/// Turns host arguments into ``ResolvedHost`` values through ssh_config.
public struct HostResolver: Sendable {
    public let config: SSHConfig
    public let settings: ConnectionSettings
    private let environment: [String: String]

    public init(settings: ConnectionSettings, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(SSHError)
    {
        self.settings = settings
        self.environment = environment
        config = try SSHConfig.load(configFile: settings.configFile)
        if let warn = settings.configWarning {
            for warning in config.warnings { warn(warning.description) }
        }
        if let debug = settings.debug {
            let files = config.filePaths
            debug(
                files.isEmpty
                    ? "no ssh_config file to read (\(settings.configFile ?? "~/.ssh/config, /etc/ssh/ssh_config"))"
                    : "read ssh_config \(files.joined(separator: ", "))")
        }
    }

    /// Expands arguments (hosts, `'db-*'` patterns, hosts-file entries) and resolves each.
    public func resolve(arguments: [String]) throws(SSHError) -> [ResolvedHost] {
        let targets = try HostList.targets(forArguments: arguments, config: config)
        var resolved: [ResolvedHost] = []
        for target in targets { resolved.append(try resolve(target)) }
        return resolved
    }

    /// Resolves one target.
    public func resolve(_ target: HostTarget) throws(SSHError) -> ResolvedHost {
        guard case .remote(let destination) = target else { return .local }
        var overrides = SSHConnectionOverrides()
        overrides.user = settings.user
        overrides.port = settings.port
        overrides.identityFiles = settings.identityFiles
        if let file = settings.knownHostsFile { overrides.userKnownHostsFiles = [file] }
        if settings.acceptNewHostKey { overrides.strictHostKeyChecking = .acceptNew }
        if !settings.recordsHostKeys { overrides.strictHostKeyChecking = .yes }
        overrides.connectTimeout = settings.connectTimeout
        overrides.proxyJump = settings.jump
        // The target and every jump host on the way to it get their options the same way.
        let options = try config.resolveConnection(destination, overrides: overrides) {
            host, displayName in connectionOptions(host, displayName: displayName)
        }
        return .ssh(options)
    }

    private func connectionOptions(_ host: SSHHostConfig, displayName: String) -> SSHConnectionOptions {
        let policy: HostKeyPolicy =
            switch host.strictHostKeyChecking {
            case .acceptNew, .no: .acceptNew
            case .yes, .ask: .strict
            }
        let secrets = SecretSources(
            passwordVariable: settings.passwordEnvironmentVariable,
            passphraseVariable: settings.passphraseEnvironmentVariable ?? ConnectionSettings.defaultPassphraseVariable,
            environment: environment, prompter: settings.prompter)
        var options = SSHConnectionOptions(
            displayName: displayName, hostName: host.hostName, port: host.port, user: host.user,
            identityFiles: host.identityFiles.map(\.path), identitiesOnly: host.identitiesOnly,
            agentSocket: host.identityAgent.socketPath,
            knownHostsFiles: host.userKnownHostsFiles + host.globalKnownHostsFiles, hostKeyPolicy: policy,
            connectTimeout: host.connectTimeout ?? .seconds(10),
            keepaliveInterval: host.serverAliveInterval > .zero ? host.serverAliveInterval : nil,
            allowPassword: secrets.canSupplyPassword, secrets: secrets.provider)
        options.keepaliveCountMax = host.serverAliveCountMax
        options.hostNameOrigin = host.origins["hostname"]?.description
        options.userConfigFile = settings.configFile ?? SSHConfig.userConfigPath
        options.algorithms = host.algorithms
        options.revokedHostKeysFiles = host.revokedHostKeysFiles
        if let notice = settings.hostKeyRecorded {
            options.hostKeyRecorded = { recorded in notice(recorded.notice) }
        }
        if let debug = settings.debug {
            options.verbose = debug
            debug(
                "\(displayName): "
                    + (host.appliedBlocks.isEmpty
                        ? "no ssh_config block applies"
                        : "ssh_config \(host.appliedBlocks.joined(separator: ", "))"))
            let keys = options.identityFiles.isEmpty ? "none" : options.identityFiles.joined(separator: ", ")
            let agent = options.agentSocket.map { "the agent at \($0)" } ?? "no agent"
            debug(
                "\(displayName): user \(options.user), host \(options.hostName) port \(options.port); keys: \(keys); "
                    + "\(agent); known_hosts: \(options.knownHostsFiles.joined(separator: ", "))")
        }
        return options
    }
}

extension HostResolver {
    /// The hosts of a watch: `arguments` (hosts and ssh_config patterns such as `db-*`) and the lines of
    /// the hosts file at `hostsFile` (one host or pattern per line, `#` comments), each once.
    ///
    /// - Throws: ``CoreError`` (`invalidRequest`) when the file cannot be read, names no host, or a host
    ///   cannot be resolved.
    public func watchHosts(arguments: [String], hostsFile: String?) throws(CoreError) -> [ResolvedHost] {
        try fleet(arguments: arguments, hostsFile: hostsFile).hosts
    }

    /// The fleet of a watch: its hosts as ``watchHosts(arguments:hostsFile:)`` resolves them, and the
    /// patterns among the arguments and the file's lines, which admit further hosts by name
    /// (``ResolvedFleet/host(named:)``).
    public func fleet(arguments: [String], hostsFile: String?, fleetFile: FleetFile? = nil) throws(CoreError)
        -> ResolvedFleet
    {
        var entries = arguments.map { HostListEntry(text: $0) }
        do {
            // Hosts on the command line win over the file's: the file then gives them their labels only.
            if let fleetFile, arguments.isEmpty, hostsFile == nil {
                entries = fleetFile.entries.map {
                    HostListEntry(text: $0.text, location: SSHConfigLocation(file: fleetFile.path, line: $0.line))
                }
            }
            if let hostsFile {
                // Bounded and a regular file: a reload on SIGHUP must not hang on a FIFO or read a log by mistake.
                let bytes = try OperatorFile.bytes(
                    at: hostsFile, describedAs: "the hosts file", maximumBytes: OperatorFile.maximumHostsFileBytes)
                entries += try HostList.parseHostsFile(String(decoding: bytes, as: UTF8.self), path: hostsFile)
            }
            guard !entries.isEmpty else {
                throw CoreError(
                    .invalidRequest,
                    "no hosts to watch: name hosts or 'pattern*' arguments, or pass --hosts-file or --fleet")
            }
            var resolved: [ResolvedHost] = []
            for target in try HostList.targets(for: entries, config: config) { resolved.append(try resolve(target)) }
            var fleet = ResolvedFleet(
                hosts: resolved, patterns: entries.map(\.text).filter(HostList.isPattern), resolver: self)
            if let fleetFile { try profile(&fleet, from: fleetFile) }
            return fleet
        } catch let error as CoreError {
            throw error
        } catch let error as SSHError {
            throw CoreError(.invalidRequest, fleetFile?.naming(error.message) ?? error.message)
        } catch {
            throw CoreError(.invalidRequest, "\(error)")
        }
    }
}
