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

    /// Options as given; nil and empty leave the config's values in place.
    public init(
        user: String? = nil, port: Int? = nil, identityFiles: [String] = [], userKnownHostsFiles: [String]? = nil,
        strictHostKeyChecking: StrictHostKeyChecking? = nil, connectTimeout: Duration? = nil
    ) {
        self.user = user
        self.port = port
        self.identityFiles = identityFiles
        self.userKnownHostsFiles = userKnownHostsFiles
        self.strictHostKeyChecking = strictHostKeyChecking
        self.connectTimeout = connectTimeout
    }
}
