public import SSHTransport
import Tracing
public import ValueFormats

/// A read-only browser over one SSH session's SFTP subsystem: list, tree, stat, preview, grep,
/// find and download.
///
/// Nothing it does changes the host: files and directories are opened for reading only, and
/// it calls no SFTP request that writes, renames, removes, creates or changes attributes, and
/// no shell command at all (grep and find read over SFTP).
///
/// With a workspace root (``open(session:host:root:)``), every path is resolved on the server
/// with `realpath` and refused when it lands outside the root — `..`, absolute paths and
/// symbolic links alike. Relative paths are relative to the root, or to the login directory
/// without one. A name exchanged for a link while it is opened is caught after the open, from
/// where the server's handle leads; `RemoteFileBrowser+Opening.swift` says how, and what it
/// cannot catch over SFTP v3.
///
/// Each operation is a span (`files.ls`, `files.cat` …) through the `Tracing` API, with the
/// operation, path, bytes, duration and SFTP status as attributes.
public struct RemoteFileBrowser: Sendable {
    /// The host's name as the user knows it, for messages.
    public let host: String
    /// The canonical workspace root, when paths are confined to one.
    public let root: RemotePath?
    let session: SSHSession
    /// Where the server's handles lead, for opening under a root (see ``HandleLocator``).
    let handles: HandleLocator

    init(session: SSHSession, host: String, root: RemotePath?, handles: HandleLocator = HandleLocator()) {
        self.session = session
        self.host = host
        self.root = root
        self.handles = handles
    }

    /// A browser over `session`; with `root`, paths are confined to that directory.
    ///
    /// - Throws: ``RemoteFilesError`` when the root does not exist or is not a directory.
    public static func open(session: SSHSession, host: String, root: RemotePath? = nil) async throws
        -> RemoteFileBrowser
    {
        try await open(session: session, host: host, root: root, handles: HandleLocator())
    }

    /// ``open(session:host:root:)`` with the locator of handles to use (tests pass one that
    /// never asks the server's `/proc`, to exercise the checks by name).
    static func open(session: SSHSession, host: String, root: RemotePath?, handles: HandleLocator) async throws
        -> RemoteFileBrowser
    {
        guard let root else { return RemoteFileBrowser(session: session, host: host, root: nil, handles: handles) }
        let unconfined = RemoteFileBrowser(session: session, host: host, root: nil)
        let canonical: RemotePath
        do {
            canonical = try await session.realpath(root)
            let attributes = try await session.stat(canonical)
            guard attributes.type == .directory else {
                throw RemoteFilesError(
                    .notADirectory,
                    "\(host): the workspace root \(root.escaped) is not a directory; pass a directory to --root")
            }
        } catch {
            throw await unconfined.explain(error, operation: "use as workspace root", path: root, remote: root)
        }
        return RemoteFileBrowser(session: session, host: host, root: canonical, handles: handles)
    }

    // MARK: - Path resolution

    /// A path as the user addressed it and as the server should be asked for it.
    struct Resolved: Sendable {
        /// The path as shown in output (the user's spelling).
        var display: RemotePath
        /// The path sent to the server (canonical under a root).
        var remote: RemotePath
    }

    /// Resolves a user path; under a root, refuses anything that lands outside it.
    ///
    /// - Parameter followFinalLink: whether a symbolic link as the last component is followed
    ///   (cat, ls of a directory) or described itself (stat).
    func resolve(_ path: RemotePath, followFinalLink: Bool) async throws -> Resolved {
        let display = path.bytes.isEmpty ? RemotePath(".") : path
        guard let root else { return Resolved(display: display, remote: display) }

        // A lexical check first, for a message that names the `..` that escapes; the server's
        // realpath below is what actually decides.
        if !path.isAbsolute {
            var depth = 0
            for component in path.components {
                if component == Array("..".utf8) {
                    depth -= 1
                    if depth < 0 { throw outsideRoot(display, resolved: nil) }
                } else if component != Array(".".utf8) {
                    depth += 1
                }
            }
        }
        let candidate = path.isAbsolute ? path : root.appending(path.bytes)
        let last = candidate.lastComponent
        // The root itself (an empty path, `.`) and a path ending in `..` name a directory, not a
        // link to describe: they are resolved whole.
        let followed =
            followFinalLink || path.components.isEmpty || last == Array("..".utf8) || last == Array(".".utf8)
        do {
            if followed {
                let real = try await session.realpath(candidate)
                guard real.isWithin(root) else { throw outsideRoot(display, resolved: real) }
                // realpath leaves a dangling final link or a loop unresolved on some servers; stat
                // of the result tells, and its error is explained below.
                return Resolved(display: display, remote: real)
            }
            let parent = try await session.realpath(candidate.parent)
            guard parent.isWithin(root) else { throw outsideRoot(display, resolved: parent) }
            return Resolved(display: display, remote: parent.appending(last))
        } catch {
            throw await explain(error, operation: "resolve", path: display, remote: candidate)
        }
    }

    func outsideRoot(_ path: RemotePath, resolved: RemotePath?) -> RemoteFilesError {
        let root = root?.escaped ?? "/"
        let target = resolved.map { " (it resolves to \($0.escaped))" } ?? ""
        return RemoteFilesError(
            .outsideRoot,
            "\(host): \(path.escaped) is outside the workspace \(root)\(target); use a path inside --root \(root)")
    }

    // MARK: - Errors

    /// Turns a failure on `remote` into a ``RemoteFilesError``; a "no such file" on a path that
    /// is a symbolic link is examined to tell a loop from a link to nowhere.
    func explain(_ error: any Error, operation: String, path: RemotePath, remote: RemotePath) async -> any Error {
        if error is RemoteFilesError || error is CancellationError { return error }
        if let ssh = error as? SSHError, ssh.code == .sftp,
            ssh.sftpStatus == SFTPStatus.noSuchFile || ssh.sftpStatus == SFTPStatus.failure,
            let diagnosis = await diagnoseLink(remote, shown: path)
        {
            return diagnosis
        }
        return RemoteFilesError.from(error, host: host, operation: operation, path: path)
    }

    /// Follows the chain of links at `path` (at most 40, as Linux does) to say whether it loops
    /// or ends nowhere; `nil` when `path` is not a link or the chain ends at a real file.
    func diagnoseLink(_ path: RemotePath, shown: RemotePath) async -> RemoteFilesError? {
        var current = path
        var visited: Set<[UInt8]> = [Self.normalized(current).bytes]
        for _ in 0..<40 {
            guard let attributes = try? await session.stat(current, followSymlinks: false) else {
                if current == path { return nil }
                return RemoteFilesError(
                    .notFound,
                    "\(host): \(shown.escaped) is a symbolic link to \(current.escaped), which does not exist; fix the link or pick another path",
                    sftpStatus: SFTPStatus.noSuchFile)
            }
            guard attributes.type == .symlink else { return nil }
            guard let target = try? await session.readlink(current) else { return nil }
            let next =
                target.bytes.first == UInt8(ascii: "/")
                ? RemotePath(bytes: target.bytes) : current.parent.appending(target.bytes)
            let key = Self.normalized(next).bytes
            if visited.contains(key) { return symlinkLoop(shown) }
            visited.insert(key)
            current = next
        }
        return symlinkLoop(shown)
    }

    func symlinkLoop(_ shown: RemotePath) -> RemoteFilesError {
        RemoteFilesError(
            .symlinkLoop,
            "\(host): \(shown.escaped) is a symbolic link loop (its links point back at each other); fix the links or pick another path",
            sftpStatus: 21)
    }

    /// `.` and `..` removed lexically, for comparing link chains and choosing the root that holds a path.
    public static func normalized(_ path: RemotePath) -> RemotePath {
        var parts: [[UInt8]] = []
        for component in path.components {
            if component == Array(".".utf8) { continue }
            if component == Array("..".utf8) {
                if !parts.isEmpty && parts.last != Array("..".utf8) {
                    parts.removeLast()
                } else if !path.isAbsolute {
                    parts.append(component)
                }
                continue
            }
            parts.append(component)
        }
        var bytes: [UInt8] = path.isAbsolute ? [UInt8(ascii: "/")] : []
        bytes += Array(parts.joined(separator: [UInt8(ascii: "/")]))
        return RemotePath(bytes: bytes.isEmpty ? [UInt8(ascii: ".")] : bytes)
    }

    // MARK: - Spans

    /// Runs `body` in a span named `files.<operation>` carrying the path, the bytes moved, the
    /// duration and, on failure, the SFTP status.
    func traced<T>(
        _ operation: String, _ path: RemotePath, _ body: (SpanRecorder) async throws -> T
    ) async throws -> T {
        try await withSpan("files." + operation, ofKind: .client) { span in
            let recorder = SpanRecorder()
            let start = ContinuousClock.now
            span.attributes["files.operation"] = operation
            span.attributes["file.path"] = path.escaped
            span.attributes["server.address"] = host
            defer {
                let elapsed = start.duration(to: .now)
                span.attributes["files.bytes"] = Int(truncatingIfNeeded: recorder.bytes)
                if let entries = recorder.entries { span.attributes["files.entries"] = entries }
                span.attributes["files.duration_ms"] =
                    elapsed.inMilliseconds
            }
            do {
                return try await body(recorder)
            } catch {
                if let status = (error as? RemoteFilesError)?.sftpStatus ?? (error as? SSHError)?.sftpStatus {
                    span.attributes["sftp.status"] = Int(status)
                    span.attributes["sftp.status_text"] = SFTPStatus.describe(status)
                }
                // Stopped (Ctrl-C ending `cat --follow`) is no failure; a failure carries the sentence the user sees.
                if error is CancellationError || (error as? RemoteFilesError)?.code == .interrupted {
                    span.attributes["files.stopped"] = true
                } else {
                    let sentence = (error as? RemoteFilesError)?.message ?? (error as? SSHError)?.message ?? "\(error)"
                    span.attributes["error.type"] =
                        (error as? RemoteFilesError)?.code.description ?? "\(type(of: error))"
                    span.setStatus(SpanStatus(code: .error, message: sentence))
                }
                throw error
            }
        }
    }
}

/// Counts what an operation moved, for its span.
// @unchecked Sendable: written only by the task running the operation, read after it ends.
final class SpanRecorder: @unchecked Sendable {
    /// File bytes read.
    var bytes: UInt64 = 0
    /// Entries listed or found, for operations that produce entries.
    var entries: Int?
}
