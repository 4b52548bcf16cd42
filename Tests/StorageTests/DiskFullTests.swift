import Foundation
import HostscopeCore
import TestSupport
import Testing

@testable import Storage

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct DiskFullTests {
    @Test(.enabled(if: SmallFileSystem.available, "needs the right to mount a tmpfs"))
    func aFullFileSystemFailsOneBatchWholeAndWritingResumesOnceThereIsRoom() async throws {
        let volume = try SmallFileSystem(kilobytes: 1024)
        defer { volume.unmount() }
        // Space to give back later, as a user deleting files would.
        let ballast = volume.file("ballast")
        #expect(FileManager.default.createFile(atPath: ballast, contents: Data(count: 256 * 1024)))

        let database = try await StorageDatabase.open(at: volume.file("hostscope.sqlite"))
        let batchSize = 10
        var batch = 0
        var failure: StorageError?
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
        let error = try #require(failure, "the file system never filled up")
        #expect(error.code == .diskFull)
        #expect(error.sqliteCode.map { $0 & 0xFF } == 13, "SQLITE_FULL")
        #expect(error.message.hasPrefix("cannot write to \(volume.file("hostscope.sqlite")): the disk is full"))
        #expect(batch > 0)

        // Reads still work and show only whole batches.
        #expect(try await database.history.count() == batch * batchSize)
        #expect(try await database.integrityCheck().isOK)

        // Once there is room again, the same store takes the next batch.
        try FileManager.default.removeItem(atPath: ballast)
        try await database.history.append(
            (0..<batchSize).map { Records.snapshot("web\($0)", at: Double(batch), processes: 10) })
        #expect(try await database.history.count() == (batch + 1) * batchSize)
        try await database.close()
    }
}
