import HostStats
import RemoteFiles
import Tracing

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
    ///
    /// - Parameter operation: the command (`ls`, `cat`): the whole command is one trace, a `files <operation>`
    ///   span with the connect and every SFTP call under it. A failure gives it error status with the sentence
    ///   the user is shown.
    public func with<T: Sendable>(
        _ argument: String, root: String?, operation: String = "files",
        _ body: (RemoteFilesSession) async throws -> T
    ) async throws -> T {
        try await TraceRuntime.with(settings.traceSetup(), diagnostics: settings.diagnostics) { _ in
            try await withSpan("files " + operation, ofKind: .internal) { span in
                span.attributes["files.operation"] = operation
                do {
                    return try await RemoteFilesSession.with(
                        argument: argument, settings: settings.connection, environment: settings.environment,
                        root: root
                    ) { session in
                        span.attributes["hostscope.host"] = session.host
                        return try await body(session)
                    }
                } catch {
                    if let sentence = Self.sentence(error) {
                        span.setStatus(SpanStatus(code: .error, message: sentence))
                    }
                    throw error
                }
            }
        }
    }

    /// What a failed command said to the user, or `nil` when it was stopped rather than failed (Ctrl-C).
    static func sentence(_ error: any Error) -> String? {
        switch error {
        case is CancellationError: nil
        case let error as RemoteFilesError: error.code == .interrupted ? nil : error.message
        case let error as CollectionError: error.message
        case let error as FilesArgumentError: error.message
        default: "\(error)"
        }
    }
}
