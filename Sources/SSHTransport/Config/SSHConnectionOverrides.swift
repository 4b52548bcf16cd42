/// Connection options given on the command line, which win over ssh_config as `ssh`'s do.
public struct SSHConnectionOverrides: Sendable, Hashable {
    /// `--user`; a destination's own `user@` still wins.
    public var user: String?
    /// `--port`; a destination's own `:port` still wins.
    public var port: Int?
    /// `--identity`: tried before the config's `IdentityFile`s, which still follow (as `ssh -i`).
    public var identityFiles: [String]
    /// `--known-hosts`: replaces `UserKnownHostsFile`.
    public var userKnownHostsFiles: [String]?
    /// `--accept-new-host-key` sets `.acceptNew`.
    public var strictHostKeyChecking: StrictHostKeyChecking?
    /// `--connect-timeout`.
    public var connectTimeout: Duration?
    /// `-J`: jump hosts (`a,b`) that win over the config's `ProxyJump` and `ProxyCommand`, as `ssh -J` does;
    /// `none` leaves the config's `ProxyCommand` in force but not its `ProxyJump`.
    public var proxyJump: String?

    /// Options as given; nil and empty leave the config's values in place.
    public init(
        user: String? = nil, port: Int? = nil, identityFiles: [String] = [], userKnownHostsFiles: [String]? = nil,
        strictHostKeyChecking: StrictHostKeyChecking? = nil, connectTimeout: Duration? = nil,
        proxyJump: String? = nil
    ) {
        self.user = user
        self.port = port
        self.identityFiles = identityFiles
        self.userKnownHostsFiles = userKnownHostsFiles
        self.strictHostKeyChecking = strictHostKeyChecking
        self.connectTimeout = connectTimeout
        self.proxyJump = proxyJump
    }

    /// What a jump host on the way is resolved with: the keys, known_hosts files, host key policy and
    /// timeout given on the command line, but not the target's user, port or jump hosts.
    var forJumpHost: SSHConnectionOverrides {
        SSHConnectionOverrides(
            identityFiles: identityFiles, userKnownHostsFiles: userKnownHostsFiles,
            strictHostKeyChecking: strictHostKeyChecking, connectTimeout: connectTimeout)
    }
}
