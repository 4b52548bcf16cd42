/// A failure of the SSH layer, with a message a person can act on.
public struct SSHError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is; callers branch on it (exit codes, error records).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Base: String, Hashable, Sendable {
            case resolve, connect, timeout, handshake, hostKeyUnknown, hostKeyChanged, hostKeyFile, auth, config,
                channel, sessionClosed, sftp, protocolError, shellUnavailable
        }
        fileprivate let base: Base

        /// The host name could not be resolved.
        public static let resolve = Code(base: .resolve)
        /// TCP connect failed (refused, unreachable).
        public static let connect = Code(base: .connect)
        /// An operation did not finish before its deadline.
        public static let timeout = Code(base: .timeout)
        /// The SSH handshake failed (no banner, no common algorithm, connection dropped).
        public static let handshake = Code(base: .handshake)
        /// The host key is not in known_hosts and accepting new keys was not asked for.
        public static let hostKeyUnknown = Code(base: .hostKeyUnknown)
        /// known_hosts holds a different key for this host.
        public static let hostKeyChanged = Code(base: .hostKeyChanged)
        /// known_hosts could not be read or written.
        public static let hostKeyFile = Code(base: .hostKeyFile)
        /// No authentication method succeeded.
        public static let auth = Code(base: .auth)
        /// ssh_config or an option is invalid.
        public static let config = Code(base: .config)
        /// A channel could not be opened or an exec failed to start.
        public static let channel = Code(base: .channel)
        /// The session was closed or broke while the operation ran.
        public static let sessionClosed = Code(base: .sessionClosed)
        /// An SFTP operation failed (its status is in the message and `sftpStatus`).
        public static let sftp = Code(base: .sftp)
        /// The peer broke the protocol.
        public static let protocolError = Code(base: .protocolError)
        /// An ``SSHShell`` could not be started or has ended; the script did not run. Run it
        /// with ``SSHSession/exec(_:timeout:outputLimit:)`` or a new shell.
        public static let shellUnavailable = Code(base: .shellUnavailable)

        public var description: String { base.rawValue }
    }

    public var code: Code
    /// One sentence naming the host, what happened and what to do.
    public var message: String
    /// The libssh2 error code, when libssh2 reported the failure.
    public var libssh2Code: Int32?
    /// The SFTP status code, for `.sftp` failures.
    public var sftpStatus: UInt32?

    public init(_ code: Code, _ message: String, libssh2Code: Int32? = nil, sftpStatus: UInt32? = nil) {
        self.code = code
        self.message = message
        self.libssh2Code = libssh2Code
        self.sftpStatus = sftpStatus
    }

    public var description: String { message }
}
