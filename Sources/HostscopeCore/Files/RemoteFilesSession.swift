public import Foundation
import HostStats
public import RemoteFiles
import SSHTransport
import ValueFormats
public import ValueFormats

/// A `hostscope files` argument that cannot be used (a local path, a malformed host).
public struct FilesArgumentError: Error, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// A connected read-only browser for one `HOST:PATH` argument, and the path it names.
///
/// Paths are read in ``RemotePath``'s escaped form (`caf\xe9`), so every name hostscope prints
/// can be given back to it.
public struct RemoteFilesSession: Sendable {
    public let browser: RemoteFileBrowser
    /// The path part of the argument.
    public let path: RemotePath
    /// The host as the user named it.
    public let host: String
    private let connection: HostConnection

    private init(browser: RemoteFileBrowser, path: RemotePath, host: String, connection: HostConnection) {
        self.browser = browser
        self.path = path
        self.host = host
        self.connection = connection
    }

    /// Parses `argument` (`web1:/var/log`, `me@db1:logs`, `sftp://me@db1:2222/srv`), connects
    /// through ssh_config and `settings`, and confines paths to `root` when given.
    ///
    /// - Throws: ``FilesArgumentError`` for an unusable argument, `CollectionError` (classified
    ///   `connect`, `auth`, `host_key`, `timeout`) when connecting fails, ``RemoteFilesError``
    ///   when the root cannot be used.
    public static func open(
        argument: String, settings: ConnectionSettings,
        environment: [String: String] = ProcessInfo.processInfo.environment, root: String?
    ) async throws -> RemoteFilesSession {
        let target: FileTarget
        do {
            target = try FileTarget(parsing: argument)
        } catch {
            throw FilesArgumentError(error.message)
        }
        guard case .remote = target.host else {
            throw FilesArgumentError(
                "\(argument) is a local path; name a remote one as HOST:PATH (web1:/var/log) or sftp://HOST/PATH")
        }
        let resolved: ResolvedHost
        do {
            resolved = try HostResolver(settings: settings, environment: environment).resolve(target.host)
        } catch {
            throw FilesArgumentError(error.message)
        }
        guard case .ssh(let options) = resolved else {
            throw FilesArgumentError("\(argument) does not name a remote host; use HOST:PATH")
        }
        let connection = HostConnection(options: options)
        let session = try await connection.connectedSession()
        do {
            let browser = try await RemoteFileBrowser.open(
                session: session, host: options.displayName, root: root.map { RemotePath(escaped: $0) })
            return RemoteFilesSession(
                browser: browser, path: RemotePath(escaped: target.path), host: options.displayName,
                connection: connection)
        } catch {
            await connection.close()
            throw error
        }
    }

    /// Closes the SSH session.
    public func close() async {
        await connection.close()
    }

    /// Opens a session for `argument`, runs `body`, and closes the session whatever happens.
    public static func with<T: Sendable>(
        argument: String, settings: ConnectionSettings,
        environment: [String: String] = ProcessInfo.processInfo.environment, root: String?,
        _ body: (RemoteFilesSession) async throws -> T
    ) async throws -> T {
        let session = try await open(argument: argument, settings: settings, environment: environment, root: root)
        do {
            let result = try await body(session)
            await session.close()
            return result
        } catch {
            await session.close()
            throw error
        }
    }
}
