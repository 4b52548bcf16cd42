/// What to do with a host key that known_hosts does not vouch for.
public enum HostKeyPolicy: Sendable, Equatable {
    /// Refuse unknown keys (OpenSSH `StrictHostKeyChecking yes`, the default).
    case strict
    /// Record an unknown key in the first known_hosts file and connect
    /// (`StrictHostKeyChecking accept-new`, and also what `no`/`off` map to).
    case acceptNew
}

/// A secret the SSH layer needs during authentication.
public enum SecretRequest: Sendable, Equatable {
    /// The password of `user` on `host`.
    case password(user: String, host: String)
    /// The passphrase of the private key at `keyPath`.
    case passphrase(keyPath: String)
}

/// A secret string that never prints itself.
///
/// Passwords and passphrases travel inside this type so that an accidental interpolation into
/// a log line, an error or a span shows `<redacted>` instead of the secret.
public struct Secret: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The secret itself; read only where it is handed to libssh2.
    public let reveal: String

    public init(_ value: String) {
        reveal = value
    }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
}

/// Supplies secrets on demand (from an environment variable, a prompt on the terminal …);
/// returns `nil` when it has none, and the method is then skipped.
public typealias SecretProvider = @Sendable (SecretRequest) -> Secret?

/// Everything needed to open one SSH session, already resolved from `~/.ssh/config` and the
/// command line (paths expanded, defaults applied).
public struct SSHConnectionOptions: Sendable {
    /// What the user called the host (an alias, `user@host:port`…), used in messages.
    public var displayName: String
    /// The name or address to connect to, and to look up in known_hosts.
    public var hostName: String
    /// Where `hostName` was set (`~/.ssh/config line 12`), when an ssh_config `HostName` set it: a name
    /// that does not resolve is then traced to that line.
    public var hostNameOrigin: String?
    /// The user's ssh_config file as messages name it: `~/.ssh/config`, or the file given with `-F`.
    public var userConfigFile = SSHConfig.userConfigPath
    public var port: Int
    public var user: String
    /// Private key files to try, in order, after the agent. Missing files are skipped.
    public var identityFiles: [String]
    /// Use only the keys of `identityFiles`, also when offered by the agent.
    public var identitiesOnly: Bool
    /// The ssh-agent socket, or `nil` to not use an agent.
    public var agentSocket: String?
    /// known_hosts files to consult, in order; newly accepted keys go to the first.
    public var knownHostsFiles: [String]
    /// `RevokedHostKeys` files: keys listed there are refused before known_hosts is consulted.
    public var revokedHostKeysFiles: [String] = []
    public var hostKeyPolicy: HostKeyPolicy
    /// Bound on DNS-to-authenticated time for the TCP connect, the handshake and each
    /// authentication step (OpenSSH's `ConnectTimeout`; 10 s by default here).
    public var connectTimeout: Duration
    /// Send a keepalive when the session has been quiet this long (`ServerAliveInterval`).
    ///
    /// Besides SSH keepalives, the socket gets TCP keepalive probes at this interval, so a host
    /// that vanished without closing the connection is declared dead after
    /// ``keepaliveCountMax`` unanswered probes and the session reports itself broken.
    public var keepaliveInterval: Duration?
    /// Unanswered keepalives before the connection is considered dead (`ServerAliveCountMax`).
    public var keepaliveCountMax: Int = 3
    /// The algorithm lists of ssh_config (`Ciphers`, `MACs`, `KexAlgorithms`, `HostKeyAlgorithms`).
    public var algorithms = SSHAlgorithmPreferences()
    /// Whether password authentication may be tried after the keys.
    public var allowPassword: Bool
    /// Source of passwords and key passphrases.
    public var secrets: SecretProvider?
    /// How the host is reached: directly, through a `ProxyCommand`, or through jump hosts
    /// (``SSHConfig/resolveConnection(_:overrides:makeOptions:)`` works it out from ssh_config).
    public var route: SSHRoute = .direct
    /// Told when a host key is added to known_hosts (`StrictHostKeyChecking accept-new` or `no`,
    /// `--accept-new-host-key`), so the user hears of it as `ssh` tells them; called on the session's thread.
    public var hostKeyRecorded: (@Sendable (RecordedHostKey) -> Void)?
    /// Told each step of connecting as it happens, in a sentence that starts with ``displayName``, as `ssh -v`
    /// prints them (`-v`): the address, a jump host or `ProxyCommand`, the server and its host key, each
    /// authentication method tried and its outcome, the one that succeeded; called on the session's thread. The
    /// steps name keys by their files, never a secret.
    public var verbose: (@Sendable (String) -> Void)?

    public init(
        displayName: String? = nil, hostName: String, port: Int = 22, user: String, identityFiles: [String] = [],
        identitiesOnly: Bool = false, agentSocket: String? = nil, knownHostsFiles: [String],
        hostKeyPolicy: HostKeyPolicy = .strict, connectTimeout: Duration = .seconds(10),
        keepaliveInterval: Duration? = nil, allowPassword: Bool = true, secrets: SecretProvider? = nil
    ) {
        self.displayName = displayName ?? hostName
        self.hostName = hostName
        self.port = port
        self.user = user
        self.identityFiles = identityFiles
        self.identitiesOnly = identitiesOnly
        self.agentSocket = agentSocket
        self.knownHostsFiles = knownHostsFiles
        self.hostKeyPolicy = hostKeyPolicy
        self.connectTimeout = connectTimeout
        self.keepaliveInterval = keepaliveInterval
        self.allowPassword = allowPassword
        self.secrets = secrets
    }

    /// `host` for port 22, `[host]:port` otherwise: the form known_hosts uses.
    public var knownHostsName: String {
        port == 22 ? hostName : "[\(hostName)]:\(port)"
    }
}

/// How a session was established; spans and `-v` output report it.
public struct SSHConnectionInfo: Sendable, Equatable {
    /// The numeric address actually connected to.
    public var remoteAddress: String
    /// The server's identification string, e.g. `SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u6`.
    public var serverBanner: String?
    /// The host key algorithm, e.g. `ssh-ed25519`.
    public var hostKeyType: String
    /// `SHA256:` followed by the unpadded base64 digest, as `ssh-keygen -lf` prints it.
    public var hostKeyFingerprint: String
    /// Whether the key was already known or was recorded during this connect.
    public var hostKeyStatus: HostKeyStatus
    /// The authentication that succeeded: `publickey` with its source, or `password`.
    public var authMethod: String
    /// The cipher negotiated for data from the server, e.g. `aes128-ctr`.
    public var cipher: String = ""
    /// The MAC negotiated for data from the server, e.g. `hmac-sha2-256`.
    public var mac: String = ""
    public var tcpConnectDuration: Duration
    public var handshakeDuration: Duration
    public var authDuration: Duration
}

/// A host key hostscope has just added to known_hosts.
public struct RecordedHostKey: Sendable, Equatable {
    /// The name it was recorded under: `host`, or `[host]:port` off port 22.
    public var knownHostsName: String
    /// OpenSSH's short name for the key type: `ED25519`, `ECDSA`, `RSA`.
    public var keyType: String
    /// `SHA256:…`.
    public var fingerprint: String
    /// The known_hosts file it was appended to.
    public var file: String

    /// A recorded key's description.
    public init(knownHostsName: String, keyType: String, fingerprint: String, file: String) {
        self.knownHostsName = knownHostsName
        self.keyType = keyType
        self.fingerprint = fingerprint
        self.file = file
    }

    /// What `ssh` prints on stderr when it records a key, word for word:
    /// `Warning: Permanently added '[127.0.0.1]:2222' (ED25519) to the list of known hosts.`
    public var notice: String {
        "Warning: Permanently added '\(knownHostsName)' (\(keyType)) to the list of known hosts."
    }
}

/// The outcome of the known_hosts check.
public enum HostKeyStatus: Sendable, Equatable {
    /// A known_hosts file already held this key for the host.
    case known(file: String)
    /// The key was new and has been appended to `file`.
    case accepted(file: String)
}

/// What a finished remote command produced.
public struct SSHExecResult: Sendable, Equatable {
    public var stdout: [UInt8]
    public var stderr: [UInt8]
    /// The exit status, or `nil` when the command was killed by a signal or the server sent none.
    public var exitStatus: Int32?
    /// The signal name without `SIG` (`TERM`, `KILL`) when the command was killed by one.
    public var exitSignal: String?
    /// True when output beyond the limit was discarded and the channel closed early.
    public var truncated: Bool
    /// Bytes the command wrote, including any discarded past the limit.
    public var stdoutBytes: Int
    public var stderrBytes: Int
    public var duration: Duration
}
