/// How to reach one host: ssh_config resolved for it, with tokens, `~` and defaults filled in.
public struct SSHHostConfig: Sendable, Hashable {
    /// The host as the user named it (`%n`), before `HostName` replaced it.
    public var alias: String
    /// The name or address to connect to (`HostName`, with `%h`); lower-cased unless it is an address, as
    /// `ssh` does.
    public var hostName: String
    /// The remote user: the destination's `user@`, then `--user`, then `User`, then the local user.
    public var user: String
    /// The port: the destination's `:port`, then `--port`, then `Port`, then 22.
    public var port: Int
    /// The name host keys are recorded under, when `HostKeyAlias` is set.
    public var hostKeyAlias: String?
    /// Keys to offer, in order; `IdentityFile` accumulates across blocks and `none` entries are dropped.
    public var identityFiles: [IdentityFile]
    /// Whether to offer only `identityFiles`, not every key the agent holds.
    public var identitiesOnly: Bool
    /// The user's known_hosts files, expanded; empty for `UserKnownHostsFile none`.
    public var userKnownHostsFiles: [String]
    /// The system's known_hosts files, expanded; empty for `GlobalKnownHostsFile none`.
    public var globalKnownHostsFiles: [String]
    /// `RevokedHostKeys` files, expanded (`~`, `%` tokens and `${VAR}`, as OpenSSH 9.4 and later expand
    /// them); empty when none is configured.
    public var revokedHostKeysFiles: [String]
    /// What to do about an unknown host key.
    public var strictHostKeyChecking: StrictHostKeyChecking
    /// `ConnectTimeout`; nil when not configured (the session applies its own default).
    public var connectTimeout: Duration?
    /// `ServerAliveInterval`; zero turns keepalives off.
    public var serverAliveInterval: Duration
    /// `ServerAliveCountMax`: unanswered keepalives before the session is considered dead.
    public var serverAliveCountMax: Int
    /// The agent to ask for keys.
    public var identityAgent: IdentityAgent
    /// `Ciphers`, `MACs`, `KexAlgorithms` and `HostKeyAlgorithms`, as configured.
    public var algorithms: SSHAlgorithmPreferences
    /// `ProxyJump` or `ProxyCommand` as `ssh` settles them; nil when neither applies or the one that counts
    /// is `none`.
    public var proxy: SSHProxy?
    /// Directives hostscope does not apply (`ForwardAgent`, `SendEnv`, …) that apply to this host, in
    /// order, so a caller can say what it is leaving out.
    public var otherDirectives: [SSHConfigDirective]
    /// The line each applied setting came from, by lower-case keyword (`"port"`), for messages.
    public var origins: [String: SSHConfigLocation]
    /// The `Host` and `Match` lines whose blocks applied, in reading order: `Host web1 (~/.ssh/config line 3)`.
    public var appliedBlocks: [String] = []

    /// Settings given directly rather than resolved, with `ssh`'s defaults for the rest except the identity
    /// files, which default to none; `SSHConfig.resolve` is how a user's host is normally turned into one.
    public init(
        hostName: String,
        user: String,
        port: Int = SSHHostConfig.defaultPort,
        alias: String? = nil,
        hostKeyAlias: String? = nil,
        identityFiles: [IdentityFile] = [],
        identitiesOnly: Bool = false,
        userKnownHostsFiles: [String],
        globalKnownHostsFiles: [String] = [],
        revokedHostKeysFiles: [String] = [],
        strictHostKeyChecking: StrictHostKeyChecking = .ask,
        connectTimeout: Duration? = nil,
        serverAliveInterval: Duration = .zero,
        serverAliveCountMax: Int = SSHHostConfig.defaultServerAliveCountMax,
        identityAgent: IdentityAgent = .disabled,
        algorithms: SSHAlgorithmPreferences = SSHAlgorithmPreferences(),
        proxy: SSHProxy? = nil,
        otherDirectives: [SSHConfigDirective] = [],
        origins: [String: SSHConfigLocation] = [:]
    ) {
        self.alias = alias ?? hostName
        self.hostName = hostName
        self.user = user
        self.port = port
        self.hostKeyAlias = hostKeyAlias
        self.identityFiles = identityFiles
        self.identitiesOnly = identitiesOnly
        self.userKnownHostsFiles = userKnownHostsFiles
        self.globalKnownHostsFiles = globalKnownHostsFiles
        self.revokedHostKeysFiles = revokedHostKeysFiles
        self.strictHostKeyChecking = strictHostKeyChecking
        self.connectTimeout = connectTimeout
        self.serverAliveInterval = serverAliveInterval
        self.serverAliveCountMax = serverAliveCountMax
        self.identityAgent = identityAgent
        self.algorithms = algorithms
        self.proxy = proxy
        self.otherDirectives = otherDirectives
        self.origins = origins
    }

    /// The port as `ssh` defaults it.
    public static let defaultPort = 22
    /// Keepalives unanswered before giving up, as `ssh` defaults it.
    public static let defaultServerAliveCountMax = 3
    /// Identity files tried when none is configured, in order. OpenSSH tries `id_rsa` first and adds
    /// key types libssh2 cannot use (`_sk`, XMSS, DSA); this order puts ed25519 first because Debian's
    /// libssh2 cannot sign with an RSA key for OpenSSH 8.8 and later.
    public static let defaultIdentityFiles = ["~/.ssh/id_ed25519", "~/.ssh/id_ecdsa", "~/.ssh/id_rsa"]
    /// The user known_hosts files when none is configured.
    public static let defaultUserKnownHostsFiles = ["~/.ssh/known_hosts", "~/.ssh/known_hosts2"]
    /// The system known_hosts files when none is configured.
    public static let defaultGlobalKnownHostsFiles = ["/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"]

    /// The first directive hostscope does not apply with this keyword (lower case), if one applies.
    public func otherDirective(_ keyword: String) -> SSHConfigDirective? {
        let keyword = keyword.lowercased()
        return otherDirectives.first { $0.keyword == keyword }
    }
}

/// A private key file to offer.
public struct IdentityFile: Sendable, Hashable {
    /// The path to read, with `~`, `%` tokens and `${VAR}` expanded.
    public var path: String
    /// The value as configured (`~/.ssh/id_%h`), which is also what `ssh -G` prints.
    public var configured: String
    /// Whether it is one of `SSHHostConfig.defaultIdentityFiles`, tried because nothing was configured; a
    /// missing default file is not worth mentioning, a missing configured one is.
    public var isDefault: Bool

    /// An identity file; `configured` is the value before expansion.
    public init(path: String, configured: String, isDefault: Bool) {
        self.path = path
        self.configured = configured
        self.isDefault = isDefault
    }
}

/// `StrictHostKeyChecking`.
public enum StrictHostKeyChecking: String, Sendable, Hashable, CaseIterable {
    /// Refuse unknown keys (`yes`, `true`).
    case yes
    /// Record unknown keys, refuse changed ones (`accept-new`).
    case acceptNew = "accept-new"
    /// Record unknown keys; OpenSSH then also connects to changed keys with forwarding off (`no`, `off`,
    /// `false`). hostscope refuses changed keys whatever this says.
    case no
    /// Ask on a terminal (`ask`, the default); without a person to ask it means `yes`.
    case ask

    /// Reads a config value, any case, with OpenSSH's synonyms.
    public init?(configValue: String) {
        switch configValue.lowercased() {
        case "yes", "true": self = .yes
        case "no", "off", "false": self = .no
        case "ask": self = .ask
        case "accept-new": self = .acceptNew
        default: return nil
        }
    }
}

/// Where the ssh-agent is.
public enum IdentityAgent: Sendable, Hashable {
    /// No agent: `IdentityAgent none`, or the variable naming the socket is unset or empty.
    case disabled
    /// The agent socket's path.
    case socket(String)

    /// The socket path, or nil when disabled.
    public var socketPath: String? {
        if case .socket(let path) = self {
            return path
        }
        return nil
    }
}
