public import RemoteFiles
import SSHTransport
import Synchronization
public import ValueFormats

/// `serve`'s files: read-only browsing of its hosts' files through ``RemoteFileBrowser``, confined to the roots the
/// operator allowed (`--files-root`, none by default), bounded in sessions per host and in time.
///
/// A request names an absolute path; the longest root that holds it (by its components, after `.` and `..`)
/// becomes the browser's workspace root, so the server's `realpath` decides what the path really is, and a link
/// or `..` that leads out of the root is refused as `hostscope files --root` refuses it. Each request leases an
/// SSH session of its host: an idle one when there is one, else a new one up to
/// ``Limits/sessionsPerHost`` at once. A session whose request was refused by the server (a missing file, a
/// path outside the root) is kept; one whose request failed otherwise, timed out or was cancelled is closed, since
/// its SFTP server may still be answering a request given up on.
public final class ServedFiles: Sendable {
    /// Bounds on what the served files cost a host and `serve`.
    public struct Limits: Sendable, Equatable {
        /// Requests under way at once per host (each on its own SSH session).
        public var sessionsPerHost: Int
        /// The longest a request that answers at once (list, stat, preview, grep, find) may take.
        public var timeLimit: Duration
        /// The most bytes of one preview.
        public var previewBytes: Int
        /// The largest file a download may have.
        public var downloadBytes: UInt64
        /// The longest a live tail runs; the page starts another after it.
        public var followTime: Duration
        /// The most entries of one listing page, grep or find.
        public var entries: Int

        public init(
            sessionsPerHost: Int = 4, timeLimit: Duration = .seconds(30), previewBytes: Int = 256 * 1024,
            downloadBytes: UInt64 = 1 << 30, followTime: Duration = .seconds(3600), entries: Int = 1000
        ) {
            self.sessionsPerHost = sessionsPerHost
            self.timeLimit = timeLimit
            self.previewBytes = previewBytes
            self.downloadBytes = downloadBytes
            self.followTime = followTime
            self.entries = entries
        }
    }

    /// The directories files may be read under, as the operator gave them.
    public let roots: [RemotePath]
    public let limits: Limits
    private let pool = Lock(Pool())

    private struct Pool {
        var idle: [String: [HostConnection]] = [:]
        var leased: [String: Int] = [:]
        var closed = false
    }

    /// Files under `roots` (escaped text, as `--root` takes it); none means every request is refused.
    public init(roots: [String], limits: Limits = Limits()) {
        self.roots = roots.map { RemotePath(escaped: $0) }
        self.limits = limits
    }

    /// Runs `body` with a browser of `host` confined to the root that holds `path`, and the path as the browser
    /// takes it.
    ///
    /// - Throws: `CoreError` (`notAllowed`: no root; `busy`; `invalidRequest`: a local host), `RemoteFilesError` (`outsideRoot`, and
    ///   whatever the browser reports), `CollectionError` when the host cannot be reached; and what `body` throws.
    public func with<T>(
        _ host: ResolvedHost, path: String, _ body: (RemoteFileBrowser, RemotePath) async throws -> T
    ) async throws -> T {
        let wanted = RemotePath(escaped: path)
        let root = try root(of: wanted, host: host.displayName)
        guard case .ssh(let options) = host else {
            throw CoreError(
                .invalidRequest,
                "\(host.displayName) is this machine itself; files are read over SFTP from remote hosts only")
        }
        let connection = try lease(options)
        var reusable = false
        defer { release(connection, host: options.displayName, reusable: reusable) }
        let session = try await connection.connectedSession()
        do {
            let browser = try await RemoteFileBrowser.open(session: session, host: options.displayName, root: root)
            let result = try await body(browser, wanted)
            reusable = !Task.isCancelled
            return result
        } catch let error as RemoteFilesError where Self.answered(error) {
            reusable = !Task.isCancelled
            throw error
        }
    }

    /// Whether a failure came from an answer of the server (a missing file, a path outside the root), which
    /// leaves no request pending on the session: it is kept for the next request.
    static func answered(_ error: RemoteFilesError) -> Bool {
        switch error.code {
        case .notFound, .permissionDenied, .symlinkLoop, .outsideRoot, .notADirectory, .isADirectory, .notAFile,
            .invalidArgument:
            true
        default: false
        }
    }

    /// Runs `body`, giving up on it after ``Limits/timeLimit``: it is cancelled (its SFTP handles closed) and a
    /// `timeout` error says what to ask for instead.
    public func withTimeLimit<T: Sendable>(
        _ what: String, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let limit = limits.timeLimit
        return try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: limit)
                throw RemoteFilesError(
                    .timeout,
                    "\(what) did not finish within \(DurationText.format(limit)) and was stopped; ask for less (a "
                        + "narrower path or pattern, fewer entries) or use hostscope files on the command line")
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw CancellationError() }
            return first
        }
    }

    /// The root that holds `path` (the longest, when roots nest).
    func root(of path: RemotePath, host: String) throws -> RemotePath {
        guard !roots.isEmpty else {
            throw CoreError(
                .notAllowed,
                "this serve allows no files root, so no file can be read; restart it with --files-root PATH "
                    + "(repeatable) naming the directories the dashboard may browse")
        }
        guard path.isAbsolute else {
            throw RemoteFilesError(
                .invalidArgument,
                "\(host): \(path.escaped) is not an absolute path; give a path under one of the roots ("
                    + roots.map(\.escaped).joined(separator: ", ") + ")")
        }
        let plain = RemoteFileBrowser.normalized(path)
        let holding = roots.filter { plain.isWithin(RemoteFileBrowser.normalized($0)) }
        guard let root = holding.max(by: { $0.components.count < $1.components.count }) else {
            throw RemoteFilesError(
                .outsideRoot,
                "\(host): \(path.escaped) is outside the files roots of this serve ("
                    + roots.map(\.escaped).joined(separator: ", ") + "); use a path under one of them")
        }
        return root
    }

    private func lease(_ options: SSHConnectionOptions) throws -> HostConnection {
        let host = options.displayName
        let maximum = limits.sessionsPerHost
        let taken: HostConnection?? = pool.withLock { pool in
            guard !pool.closed, pool.leased[host, default: 0] < maximum else { return nil }
            pool.leased[host, default: 0] += 1
            return .some(pool.idle[host]?.popLast())
        }
        guard let taken else {
            throw CoreError(
                .busy,
                "\(host) has \(maximum) file requests under way already; wait for one to end (a live tail ends when "
                    + "its page stops following) and try again")
        }
        return taken ?? HostConnection(options: options, maxChannels: 2)
    }

    private func release(_ connection: HostConnection, host: String, reusable: Bool) {
        let kept = pool.withLock { pool in
            pool.leased[host, default: 1] -= 1
            guard reusable, !pool.closed, pool.idle[host, default: []].count < 2 else { return false }
            pool.idle[host, default: []].append(connection)
            return true
        }
        if !kept { Task { await connection.close() } }
    }

    /// Whether ``close()`` was called: live tails end.
    var isClosed: Bool { pool.withLock { $0.closed } }

    /// Closes the idle sessions and keeps no more; requests under way close theirs as they end.
    public func close() async {
        let idle = pool.withLock { pool in
            pool.closed = true
            defer { pool.idle = [:] }
            return pool.idle.values.flatMap { $0 }
        }
        for connection in idle { await connection.close() }
    }
}
