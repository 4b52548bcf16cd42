import Dispatch
public import Foundation
import GRDB

#if canImport(Glibc)
    import Glibc
#endif

/// hostscope's SQLite database: snapshot history, finished spans and counters in one file.
///
/// The file is in WAL mode with `synchronous=NORMAL`, so a `watch` writing and a `history` or
/// `trace` reading in other processes do not block each other, and a crash (even `kill -9`)
/// loses at most the transaction in flight. A busy timeout covers the short moments when two
/// writers meet. All access goes through GRDB's connection queues; the async methods suspend
/// the caller instead of blocking a thread of Swift's cooperative pool.
///
/// The file holds chat tool outputs (file contents from hosts), so only its owner may read it: a new
/// database and its `-wal` and `-shm` files are created with mode 0600 and missing directories with 0700;
/// an existing file others can read, or hostscope's own data directory when others can enter it, is
/// tightened on open and ``accessNotes`` says so.
public final class StorageDatabase: Sendable {
    /// How the database is opened.
    public struct Options: Sendable {
        /// How long a write waits for another process's lock before failing with ``StorageError/Code/busy``.
        public var busyTimeout: Duration
        /// A cap on the file's size: writes beyond it fail with ``StorageError/Code/diskFull`` as
        /// a full disk would. `nil` means no cap.
        public var maximumSizeBytes: Int64?
        /// Concurrent reader connections (each reader sees a consistent snapshot of the file).
        public var maximumReaderCount: Int
        /// hostscope's own data directory (``DatabaseLocation/dataDirectory(environment:homeDirectory:)``):
        /// when it holds the database and others can enter it, it is tightened to 0700. Any other directory
        /// (one named with `--db`) is the user's and left as it is.
        public var dataDirectory: String?

        /// The defaults suit `watch` and `history`: a 5 s busy timeout, no size cap, two readers, the data
        /// directory of the process's environment.
        public init(
            busyTimeout: Duration = .seconds(5), maximumSizeBytes: Int64? = nil, maximumReaderCount: Int = 2,
            dataDirectory: String? = DatabaseLocation.dataDirectory(environment: ProcessInfo.processInfo.environment)
        ) {
            self.busyTimeout = busyTimeout
            self.maximumSizeBytes = maximumSizeBytes
            self.maximumReaderCount = maximumReaderCount
            self.dataDirectory = dataDirectory
        }
    }

    /// Whether opening may create the file.
    public enum OpenMode: Sendable {
        /// Create the file, and its parent directories, when missing (what `watch` does).
        case createIfMissing
        /// Fail with ``StorageError/Code/notFound`` when the file is missing (what `history` does).
        case existingOnly
    }

    /// The database file.
    public let path: String
    /// What opening changed about who may read the files, one sentence each (`… was readable by other
    /// users (mode 0644); it is now 0600`), for the caller to show once.
    public let accessNotes: [String]
    let pool: DatabasePool

    private init(path: String, pool: DatabasePool, accessNotes: [String]) {
        self.path = path
        self.pool = pool
        self.accessNotes = accessNotes
    }

    /// Snapshot records.
    public var history: HistoryStore { HistoryStore(database: self) }

    /// Finished spans.
    public var spans: SpanStore { SpanStore(database: self) }

    /// Key-value pairs and counters.
    public var meta: MetaStore { MetaStore(database: self) }

    /// The alerts' states and transitions.
    public var alerts: AlertStore { AlertStore(database: self) }

    /// Opens (or creates) the database at `path` and brings its schema up to date.
    public static func open(
        at path: String, mode: OpenMode = .createIfMissing, options: Options = Options()
    ) async throws(StorageError) -> StorageDatabase {
        do {
            // Opening waits on locks and runs migrations: keep that off the cooperative pool.
            return try await BlockingQueue.run { try openNow(path: path, mode: mode, options: options) }
        } catch {
            throw StorageError(error, path: path, operation: .open)
        }
    }

    private static func openNow(path: String, mode: OpenMode, options: Options) throws -> StorageDatabase {
        let exists = FileManager.default.fileExists(atPath: path)
        if !exists {
            switch mode {
            case .existingOnly:
                throw StorageError(
                    code: .notFound,
                    message: "no database at \(path): run `hostscope watch` first, or "
                        + StorageError.otherFileAdvice, path: path)
            case .createIfMissing:
                try createDirectories(for: path)
                try createPrivateFile(path)
            }
        }
        let accessNotes = tightenAccess(path, dataDirectory: options.dataDirectory)
        var configuration = Configuration()
        configuration.label = "hostscope.storage"
        configuration.busyMode = .timeout(TimeInterval(options.busyTimeout / .milliseconds(1)) / 1000)
        configuration.maximumReaderCount = max(1, options.maximumReaderCount)
        let maximumSize = options.maximumSizeBytes
        configuration.prepareDatabase { db in
            guard !db.configuration.readonly else { return }
            // GRDB's pool sets these too; they are stated here because the crash-safety promise rests on them.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // A long watch checkpoints often; cap what a truncated WAL file keeps on disk.
            try db.execute(sql: "PRAGMA journal_size_limit = 67108864")
            if let maximumSize {
                let pageSize = try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
                try db.execute(sql: "PRAGMA max_page_count = \(max(1, maximumSize / pageSize))")
            }
        }
        let pool = try openPool(path: path, configuration: configuration, busyTimeout: options.busyTimeout)
        let migrator = StorageSchema.migrator
        let (superseded, complete) = try pool.read { db in
            (try migrator.hasBeenSuperseded(db), try migrator.hasCompletedMigrations(db))
        }
        if superseded {
            let applied = (try? pool.read { try migrator.appliedIdentifiers($0) }) ?? []
            let unknown = applied.subtracting(migrator.migrations).sorted().joined(separator: ", ")
            throw StorageError(
                code: .newerSchema,
                message: "\(path) was written by a newer hostscope (schema \(unknown)); upgrade hostscope, or "
                    + StorageError.otherFileAdvice, path: path)
        }
        // Readers of an up-to-date file never take the write lock for a migration check.
        if !complete { try migrate(pool, with: migrator) }
        return StorageDatabase(path: path, pool: pool, accessNotes: accessNotes)
    }

    /// Turning a new file to WAL takes an exclusive lock, and SQLite answers SQLITE_BUSY at once
    /// instead of calling the busy handler when two connections do that together; so wait and
    /// retry here, within the busy timeout. This runs on ``BlockingQueue``, where sleeping is fine.
    private static func openPool(path: String, configuration: Configuration, busyTimeout: Duration) throws
        -> DatabasePool
    {
        let deadline = ContinuousClock.now + busyTimeout
        var pause = Duration.milliseconds(2)
        while true {
            do {
                return try DatabasePool(path: path, configuration: configuration)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
                guard ContinuousClock.now + pause < deadline else { throw error }
                usleep(UInt32(pause / .microseconds(1)))
                pause = min(pause * 2, .milliseconds(100))
            }
        }
    }

    /// GRDB reads the applied migrations before the transaction of each one, so two processes
    /// migrating a new file at once can both try the same migration; the loser's fails ("table
    /// … already exists") after the winner's commit. Reading the applied list again and going on
    /// from there settles it.
    private static func migrate(_ pool: DatabasePool, with migrator: DatabaseMigrator) throws {
        var attempt = 0
        while true {
            do {
                try migrator.migrate(pool)
                return
            } catch {
                attempt += 1
                if try pool.read({ try migrator.hasCompletedMigrations($0) }) { return }
                if attempt >= migrator.migrations.count + 1 { throw error }
            }
        }
    }

    /// `mkdir -p` with the failing directory and errno in the error.
    private static func createDirectories(for path: String) throws(StorageError) {
        let directory = (path as NSString).deletingLastPathComponent
        guard !directory.isEmpty else { return }
        var missing: [String] = []
        var current = directory
        var status = stat()
        while !current.isEmpty, current != "/", stat(current, &status) != 0 {
            missing.append(current)
            current = (current as NSString).deletingLastPathComponent
        }
        for component in missing.reversed() where mkdir(component, 0o700) != 0 && errno != EEXIST {
            throw StorageError(
                code: errno == EACCES || errno == EROFS || errno == EPERM ? .permissionDenied : .cannotOpen,
                message: "cannot create directory \(component) for \(path): \(StorageError.errnoText(errno)); "
                    + StorageError.otherFileAdvice, path: path)
        }
    }

    /// Creates an empty database file that only its owner can read, before SQLite opens it: SQLite would
    /// create it 0644, and gives the `-wal` and `-shm` files the database's own mode.
    private static func createPrivateFile(_ path: String) throws(StorageError) {
        if !createExclusively(path, mode: 0o600), errno != EEXIST {
            throw StorageError(
                code: errno == EACCES || errno == EROFS || errno == EPERM ? .permissionDenied : .cannotOpen,
                message: "cannot create \(path): \(StorageError.errnoText(errno)); " + StorageError.otherFileAdvice,
                path: path)
        }
    }

    /// Makes the database, its `-wal` and `-shm` files 0600 and hostscope's own data directory 0700 where
    /// others could read or enter them; one note per change (or per failed change).
    private static func tightenAccess(_ path: String, dataDirectory: String?) -> [String] {
        var notes: [String] = []
        func tighten(_ file: String, to mode: mode_t, what: String) {
            var status = stat()
            guard stat(file, &status) == 0 else { return }
            let current = status.st_mode & 0o777
            guard current & 0o077 != 0 else { return }
            let tightened = current & ~mode_t(0o077)
            let old = octal(current)
            if chmod(file, tightened) == 0 {
                notes.append("\(what) \(file) was open to other users (mode \(old)); it is now \(octal(tightened))")
            } else {
                notes.append(
                    "\(what) \(file) is open to other users (mode \(old)) and could not be changed: "
                        + "\(StorageError.errnoText(errno)); run: chmod \(octal(mode)) \(file)")
            }
        }
        let directory = (path as NSString).deletingLastPathComponent
        if let dataDirectory, !directory.isEmpty,
            (directory as NSString).standardizingPath == (dataDirectory as NSString).standardizingPath
        {
            tighten(directory, to: 0o700, what: "the data directory")
        }
        tighten(path, to: 0o600, what: "the database")
        for suffix in ["-wal", "-shm"] {
            tighten(path + suffix, to: 0o600, what: "the database's \(suffix.dropFirst()) file")
        }
        return notes
    }

    private static func octal(_ mode: mode_t) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// The applied schema migrations, oldest first.
    public func appliedMigrations() async throws(StorageError) -> [String] {
        try await read { db in try StorageSchema.migrator.appliedMigrations(db) }
    }

    /// Runs `PRAGMA integrity_check`: a report whose only line is `ok` when the file is sound.
    public func integrityCheck() async throws(StorageError) -> IntegrityReport {
        try await read { db in IntegrityReport(lines: try String.fetchAll(db, sql: "PRAGMA integrity_check")) }
    }

    /// Checkpoints the WAL into the main file (unless another process is reading) and closes the
    /// connections; pending writes finish first. Later calls fail.
    public func close() async throws(StorageError) {
        let pool = self.pool
        do {
            try await BlockingQueue.run {
                // GRDB closes its writer before its read-only readers, so SQLite's own checkpoint
                // on the last close never runs: do it here, leaving a self-contained file. With no
                // busy timeout it never waits for a reader in another process (a long `history`
                // export); the WAL then stays, and the next writer carries on from it.
                _ = try? pool.writeWithoutTransaction { db in
                    try db.execute(sql: "PRAGMA busy_timeout = 0")
                    try db.checkpoint(.truncate)
                }
                try pool.close()
            }
        } catch {
            throw StorageError(error, path: path, operation: .write)
        }
    }

    // MARK: - Access for the stores

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StorageError) -> T {
        do {
            return try await pool.read(body)
        } catch {
            throw StorageError(error, path: path, operation: .read)
        }
    }

    /// One `BEGIN IMMEDIATE` transaction: taking the write lock up front means the busy timeout
    /// applies, where a deferred transaction upgraded mid-way would fail at once under contention.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StorageError) -> T {
        do {
            return try await pool.writeWithoutTransaction { db in
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(db)
                    return .commit
                }
                return result!
            }
        } catch {
            throw StorageError(error, path: path, operation: .write)
        }
    }
}

/// Creates an empty file with `open(2)` and `O_EXCL`; false with `errno` set when it could not. Outside the
/// class, whose own `open` and `close` would shadow the C functions.
private func createExclusively(_ path: String, mode: mode_t) -> Bool {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
    guard descriptor >= 0 else { return false }
    close(descriptor)
    return true
}

/// What `PRAGMA integrity_check` printed.
public struct IntegrityReport: Sendable, Equatable {
    /// SQLite's lines: `["ok"]` for a sound file, else one line per problem.
    public var lines: [String]

    /// A report of SQLite's `integrity_check` lines.
    public init(lines: [String]) {
        self.lines = lines
    }

    /// Whether SQLite found no problem.
    public var isOK: Bool { lines == ["ok"] }
}
