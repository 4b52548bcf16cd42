import Foundation
import HostStats
import HostscopeCore
import Testing

@testable import Storage

#if canImport(Glibc)
    import Glibc
#endif

/// The database holds chat tool outputs (file contents from hosts): only its owner may read it.
@Suite struct DatabaseAccessTests {
    static func mode(_ path: String) -> Int {
        var status = stat()
        guard stat(path, &status) == 0 else { return -1 }
        return Int(status.st_mode & 0o777)
    }

    static func octal(_ mode: Int) -> String { String(mode, radix: 8) }

    /// Writes a record, so the WAL and shared-memory files exist, and keeps the database open.
    static func openWithWAL(_ path: String, options: StorageDatabase.Options) async throws -> StorageDatabase {
        let database = try await StorageDatabase.open(at: path, options: options)
        try await database.history.append([Records.snapshot("web1", at: 0)])
        return database
    }

    @Test func aNewDatabaseItsWALAndSHMFilesAreTheOwnersAloneAndNewDirectoriesAre0700() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("data/hostscope/hostscope.sqlite")
        // A umask that lets others read is what most users have; the modes must not depend on it.
        let previous = umask(0o022)
        defer { umask(previous) }
        let database = try await Self.openWithWAL(path, options: StorageDatabase.Options(dataDirectory: nil))
        for file in [path, path + "-wal", path + "-shm"] {
            #expect(FileManager.default.fileExists(atPath: file), "\(file)")
            #expect(Self.octal(Self.mode(file)) == "600", "\(file)")
        }
        for created in [directory.file("data"), directory.file("data/hostscope")] {
            #expect(Self.octal(Self.mode(created)) == "700", "\(created)")
        }
        #expect(database.accessNotes.isEmpty)
        try await database.close()
    }

    @Test func anExistingDatabaseOthersCanReadIsTightenedWithANoteAndItsRecordsKept() async throws {
        let directory = try TemporaryDirectory()
        let dataDirectory = directory.file("hostscope")
        let path = dataDirectory + "/hostscope.sqlite"
        let options = StorageDatabase.Options(dataDirectory: dataDirectory)
        let first = try await Self.openWithWAL(path, options: options)
        // As an older hostscope left them: the files 0644, the directory 0755; the WAL still holds the record.
        for file in [path, path + "-wal", path + "-shm"] { chmod(file, 0o644) }
        chmod(dataDirectory, 0o755)

        let second = try await StorageDatabase.open(at: path, mode: .existingOnly, options: options)
        for file in [path, path + "-wal", path + "-shm"] {
            #expect(Self.octal(Self.mode(file)) == "600", "\(file)")
        }
        #expect(Self.octal(Self.mode(dataDirectory)) == "700")
        #expect(
            second.accessNotes.sorted()
                == [
                    "the data directory \(dataDirectory) was open to other users (mode 0755); it is now 0700",
                    "the database \(path) was open to other users (mode 0644); it is now 0600",
                    "the database's shm file \(path)-shm was open to other users (mode 0644); it is now 0600",
                    "the database's wal file \(path)-wal was open to other users (mode 0644); it is now 0600",
                ].sorted())
        #expect(try await second.history.count() == 1)
        try await second.close()
        try await first.close()

        // Once tightened there is nothing more to say.
        let third = try await StorageDatabase.open(at: path, mode: .existingOnly, options: options)
        #expect(third.accessNotes.isEmpty)
        try await third.close()
    }

    @Test func aDirectoryNamedWithDbIsTheUsersAndLeftAsItIs() async throws {
        let directory = try TemporaryDirectory()
        let shared = directory.file("shared")
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
        chmod(shared, 0o755)
        let path = shared + "/fleet.sqlite"
        let database = try await StorageDatabase.open(
            at: path, options: StorageDatabase.Options(dataDirectory: directory.file("hostscope")))
        #expect(Self.octal(Self.mode(shared)) == "755")
        #expect(Self.octal(Self.mode(path)) == "600")
        #expect(database.accessNotes.isEmpty)
        try await database.close()
    }

    @Test func theDataDirectoryFollowsXDGAsTheDatabasePathDoes() {
        let environment = ["HOME": "/home/ann", "XDG_DATA_HOME": "/data/ann"]
        #expect(DatabaseLocation.dataDirectory(environment: environment) == "/data/ann/hostscope")
        #expect(
            DatabaseLocation.path(environment: environment)
                == DatabaseLocation.dataDirectory(environment: environment) + "/" + DatabaseLocation.fileName)
        #expect(
            DatabaseLocation.dataDirectory(environment: ["HOME": "/home/ann"]) == "/home/ann/.local/share/hostscope")
    }
}
