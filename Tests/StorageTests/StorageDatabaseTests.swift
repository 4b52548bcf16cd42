import Foundation
import GRDB
import HostStats
import HostscopeCore
import OrderedJSON
import Testing

@testable import Storage

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct StorageDatabaseTests {
    static let allMigrations = ["1-snapshot-records", "2-spans", "3-meta", "4-chat", "5-span-otlp", "6-alerts"]

    /// Runs `body` and returns the StorageError it threw (failing the test when it threw none).
    static func storageError(_ body: () async throws -> Void) async -> StorageError? {
        do {
            try await body()
            Issue.record("expected a StorageError")
            return nil
        } catch let error as StorageError {
            return error
        } catch {
            Issue.record("expected a StorageError, got \(error)")
            return nil
        }
    }

    @Test func openingCreatesMissingDirectoriesAndMigratesANewFile() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("a/b/c/hostscope.sqlite")
        let database = try await StorageDatabase.open(at: path)
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(try await database.appliedMigrations() == Self.allMigrations)
        let tables = try await database.pool.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        }
        #expect(tables.contains("snapshot_record") && tables.contains("span") && tables.contains("meta"))
        #expect(try await database.integrityCheck().isOK)
    }

    @Test func anEmptyFileIsMigratedToTheCurrentSchema() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("empty.sqlite")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let database = try await StorageDatabase.open(at: path, mode: .existingOnly)
        #expect(try await database.appliedMigrations() == Self.allMigrations)
        try await database.history.append([Records.snapshot("web1", at: 0)])
        #expect(try await database.history.count() == 1)
    }

    /// The races are narrow; sixty rounds reproduce them reliably when the retries in `open` are removed.
    @Test func manyConnectionsOpeningOneNewFileAtOnceAllSucceed() async throws {
        for round in 0..<60 {
            let directory = try TemporaryDirectory()
            let path = directory.file("race-\(round).sqlite")
            // Each open is its own connection set, contending for the new file's schema as processes would.
            let databases = try await withThrowingTaskGroup(of: StorageDatabase.self) { group in
                for _ in 0..<6 { group.addTask { try await StorageDatabase.open(at: path) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(databases.count == 6)
            for database in databases {
                #expect(try await database.appliedMigrations() == Self.allMigrations)
            }
            try await databases[0].history.append([Records.snapshot("web1", at: 0)])
            #expect(try await databases[5].history.count() == 1)
        }
    }

    @Test func theFileIsInWALModeWithNormalSynchronousAndABusyTimeout() async throws {
        let directory = try TemporaryDirectory()
        let database = try await StorageDatabase.fresh(
            in: directory, options: .init(busyTimeout: .milliseconds(2500)))
        let (journal, synchronous, timeout) = try await database.pool.writeWithoutTransaction { db in
            (
                try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"),
                try Int.fetchOne(db, sql: "PRAGMA busy_timeout")
            )
        }
        #expect(journal == "wal")
        #expect(synchronous == 1, "1 is NORMAL")
        #expect(timeout == 2500)
        #expect(FileManager.default.fileExists(atPath: directory.file("hostscope.sqlite-wal")))
        let readerJournal = try await database.pool.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        #expect(readerJournal == "wal")
    }

    @Test func reopeningAnExistingDatabaseKeepsItsData() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("hostscope.sqlite")
        let records = [Records.snapshot("web1", at: 0), Records.failure("web2", at: 1)]
        do {
            let database = try await StorageDatabase.open(at: path)
            try await database.history.append(records)
            try await database.spans.insert([SpanStoreTests.span("00000000000000a1", start: 5)])
            try await database.meta.set("dropped_spans", 3)
            try await database.close()
        }
        let reopened = try await StorageDatabase.open(at: path, mode: .existingOnly)
        let stored = try await reopened.history.page(HistoryQuery(), limit: 10).records
        #expect(try stored.map { try $0.record() } == records)
        #expect(try await reopened.spans.span(id: "00000000000000a1")?.name == "exec")
        #expect(try await reopened.meta.integer("dropped_spans") == 3)
        #expect(try await reopened.appliedMigrations() == Self.allMigrations)
    }

    @Test func closingLeavesAFileThatCanBeCopiedAlone() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("hostscope.sqlite")
        let database = try await StorageDatabase.open(at: path)
        try await database.history.append((0..<100).map { Records.snapshot("web\($0)", at: 1) })
        try await database.close()
        let walSize = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int
        #expect(walSize == 0, "the WAL was checkpointed into the main file")
        // The main file alone, as `cp hostscope.sqlite` would take it, holds every row.
        let copy = directory.file("copy/hostscope.sqlite")
        try FileManager.default.createDirectory(atPath: directory.file("copy"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        #expect(try await StorageDatabase.open(at: copy, mode: .existingOnly).history.count() == 100)
        do {
            _ = try await database.history.count()
            Issue.record("a closed database answered")
        } catch {
            #expect(error.path == path)
        }
    }

    @Test func aDatabaseOfAnOlderSchemaIsMigratedKeepingItsRows() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("old.sqlite")
        let record = Records.snapshot("web1", at: 7)
        do {
            // What an earlier hostscope, which knew only the first migration, left behind.
            let pool = try DatabasePool(path: path)
            try StorageSchema.migrator.migrate(pool, upTo: "1-snapshot-records")
            try await pool.write { db in
                try db.execute(
                    sql: "INSERT INTO snapshot_record (host, collected_at, kind, json) VALUES (?, ?, 'snapshot', ?)",
                    arguments: ["web1", HistoryStore.milliseconds(record.collectedAt), record.jsonValue.jsonString])
            }
            try pool.close()
        }
        let database = try await StorageDatabase.open(at: path, mode: .existingOnly)
        #expect(try await database.appliedMigrations() == Self.allMigrations)
        let stored = try await database.history.page(HistoryQuery(hosts: .exact(["web1"])), limit: 10).records
        #expect(try stored.map { try $0.record() } == [record])
        #expect(try await database.spans.insert([SpanStoreTests.span("00000000000000b1", start: 1)]) == 1)
    }

    @Test func aFileFromANewerHostscopeIsLeftAlone() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("newer.sqlite")
        do {
            let database = try await StorageDatabase.open(at: path)
            try await database.pool.write { db in
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('9-something-new')")
            }
            try await database.close()
        }
        let error = await Self.storageError { _ = try await StorageDatabase.open(at: path) }
        #expect(error?.code == .newerSchema)
        #expect(error?.message.contains(path) == true)
        #expect(error?.message.contains("9-something-new") == true)
    }

    @Test func existingOnlyReportsAMissingFileAndCreatesNothing() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("sub/none.sqlite")
        let error = await Self.storageError { _ = try await StorageDatabase.open(at: path, mode: .existingOnly) }
        #expect(error?.code == .notFound)
        #expect(error?.path == path)
        #expect(error?.message.hasPrefix("no database at \(path)") == true)
        #expect(!FileManager.default.fileExists(atPath: directory.file("sub")))
    }

    @Test func aDirectoryThatCannotBeCreatedNamesTheDirectoryAndTheWayOut() async throws {
        let directory = try TemporaryDirectory()
        #expect(FileManager.default.createFile(atPath: directory.file("blocker"), contents: Data("x".utf8)))
        let path = directory.file("blocker/sub/hostscope.sqlite")
        let error = await Self.storageError { _ = try await StorageDatabase.open(at: path) }
        #expect(error?.code == .cannotOpen)
        #expect(
            error?.message == "cannot create directory \(directory.file("blocker/sub")) for \(path): not a directory; "
                + "pass another file with --db or HOSTSCOPE_DB")
    }

    @Test func aReadOnlyDirectoryGivesAPermissionError() async throws {
        let directory = try TemporaryDirectory()
        let path: String
        if geteuid() == 0 {
            // Permission bits do not stop root; sysfs refuses new entries to everyone.
            path = "/sys/hostscope-test-\(UUID().uuidString)/hostscope.sqlite"
        } else {
            try FileManager.default.createDirectory(atPath: directory.file("locked"), withIntermediateDirectories: true)
            chmod(directory.file("locked"), 0o555)
            path = directory.file("locked/hostscope.sqlite")
        }
        defer { chmod(directory.file("locked"), 0o755) }
        let error = await Self.storageError { _ = try await StorageDatabase.open(at: path) }
        #expect(error?.code == .permissionDenied)
        #expect(error?.message.hasPrefix("cannot") == true)
        #expect(error?.message.contains(path) == true)
        #expect(error?.message.hasSuffix("pass another file with --db or HOSTSCOPE_DB") == true)
        #expect(
            error?.message.contains("permission denied") == true
                || error?.message.contains("operation not permitted") == true)
    }

    @Test func aDirectoryInPlaceOfTheFileIsNamedAsSuch() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("adir")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let error = await Self.storageError { _ = try await StorageDatabase.open(at: path) }
        #expect(error?.code == .cannotOpen)
        #expect(error?.message.hasPrefix("cannot open \(path): it is a directory") == true)
        #expect(error?.sqliteCode != nil)
    }

    @Test func aFileThatIsNotADatabaseIsRefusedWithItsName() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("notes.txt")
        try String(repeating: "these are notes, not a database\n", count: 200).write(
            toFile: path, atomically: true, encoding: .utf8)
        let error = await Self.storageError { _ = try await StorageDatabase.open(at: path) }
        #expect(error?.code == .corrupt)
        #expect(error?.sqliteCode == 26, "SQLITE_NOTADB")
        #expect(error?.message.hasPrefix("cannot open \(path): it is not an SQLite database") == true)
        // The file is left as it was.
        #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("these are notes"))
    }

    @Test func integrityCheckFindsDamageInTheFile() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("damaged.sqlite")
        do {
            let database = try await StorageDatabase.open(at: path)
            for batch in 0..<10 {
                try await database.history.append(
                    (0..<50).map { Records.snapshot("web\($0)", at: Double(batch), processes: 10) })
            }
            #expect(try await database.integrityCheck() == IntegrityReport(lines: ["ok"]))
            try await database.close()
        }
        // Closing checkpointed the WAL into the file; scribble over a page in its middle.
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        let size = try handle.seekToEnd()
        #expect(size > 40_000)
        try handle.seek(toOffset: size / 2 / 4096 * 4096)
        try handle.write(contentsOf: Data(repeating: 0x5A, count: 4096))
        try handle.close()
        // Depending on the page hit, SQLite notices at open or only when checking.
        let outcome: Result<IntegrityReport, StorageError>
        do throws(StorageError) {
            outcome = .success(try await StorageDatabase.open(at: path).integrityCheck())
        } catch {
            outcome = .failure(error)
        }
        switch outcome {
        case .success(let report):
            #expect(!report.isOK)
            #expect(!report.lines.isEmpty)
        case .failure(let error):
            #expect(error.code == .corrupt)
        }
    }

    @Test func aFullDiskFailsOneBatchWholeAndTheStoreKeepsWorking() async throws {
        let directory = try TemporaryDirectory()
        let database = try await StorageDatabase.fresh(in: directory, options: .init(maximumSizeBytes: 1024 * 1024))
        let batchSize = 20
        var failure: StorageError?
        var batch = 0
        while batch < 1_000 {
            do {
                try await database.history.append(
                    (0..<batchSize).map { Records.snapshot("web\($0)", at: Double(batch), processes: 10) })
            } catch {
                failure = error
                break
            }
            batch += 1
        }
        let error = try #require(failure, "the size cap was never reached")
        #expect(error.code == .diskFull)
        #expect(error.sqliteCode == 13, "SQLITE_FULL")
        #expect(error.message.hasPrefix("cannot write to \(directory.file("hostscope.sqlite")): the disk is full"))
        // The failed batch left nothing behind; every earlier batch is whole and readable.
        #expect(batch > 2)
        #expect(try await database.history.count() == batch * batchSize)
        #expect(try await database.integrityCheck().isOK)
        // Making room lets the same store write again.
        #expect(try await database.history.prune(olderThan: Records.at(Double(batch / 2))) == batch / 2 * batchSize)
        try await database.history.append([Records.snapshot("web0", at: Double(batch))])
        #expect(try await database.history.count() == (batch - batch / 2) * batchSize + 1)
    }
}
