/// `files`: read-only browsing of a remote workspace over SFTP, one session per call.
public struct FilesService: Sendable {
    /// The connection and tracing settings of the command.
    public let settings: CoreSettings

    /// A service for `settings`.
    public init(settings: CoreSettings) {
        self.settings = settings
    }

    /// Connects for `argument` (`web1:/var/log`, `sftp://me@db1:2222/srv`), confined to `root` when given,
    /// runs `body` with the session, and closes it whatever happens. The connect and every SFTP call are
    /// spans, stored in the database for `hostscope trace`.
    ///
    /// - Throws: ``FilesArgumentError`` for an unusable argument, `CollectionError` (classified
    ///   `connect`, `auth`, `host_key`, `timeout`) when connecting fails, `RemoteFilesError` when the
    ///   root or a path cannot be used; and whatever `body` throws.
    public func with<T: Sendable>(
        _ argument: String, root: String?, _ body: (RemoteFilesSession) async throws -> T
    ) async throws -> T {
        try await TraceRuntime.with(settings.traceSetup(), diagnostics: settings.diagnostics) { _ in
            try await RemoteFilesSession.with(
                argument: argument, settings: settings.connection, environment: settings.environment, root: root,
                body)
        }
    }
}
