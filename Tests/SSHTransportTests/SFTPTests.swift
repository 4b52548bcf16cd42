import Foundation
import SSHTransport
import TestSupport
import Testing
import ValueFormats

/// A directory tree in /tmp that the harness user can read.
struct SFTPTree {
    let root: String
    let large: [UInt8]

    init() throws {
        root = NSTemporaryDirectory() + "hostscope-sftp-\(UUID().uuidString)"
        let manager = FileManager.default
        try manager.createDirectory(atPath: root + "/sub/deeper", withIntermediateDirectories: true)
        try "hello\nworld\n".write(toFile: root + "/hello.txt", atomically: true, encoding: .utf8)
        // One read of /dev/urandom: per-byte random calls would hold a cooperative thread for
        // seconds and starve other tests.
        let random = FileHandle(forReadingAtPath: "/dev/urandom")
        large = Array(random?.readData(ofLength: 3_000_123) ?? Data())
        try random?.close()
        try Data(large).write(to: URL(fileURLWithPath: root + "/large.bin"))
        try manager.createSymbolicLink(atPath: root + "/link", withDestinationPath: "hello.txt")
        try "inner".write(toFile: root + "/sub/deeper/inner.txt", atomically: true, encoding: .utf8)
        // A name that is not valid UTF-8 (Latin-1 "é").
        let oddPath = Array((root + "/caf").utf8) + [0xE9]
        let fd = oddPath.withUnsafeBufferPointer { buffer -> Int32 in
            let terminated = Array(buffer) + [0]
            return terminated.withUnsafeBufferPointer {
                open(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), O_CREAT | O_WRONLY, 0o644)
            }
        }
        close(fd)
        try "secret".write(toFile: root + "/private.txt", atomically: true, encoding: .utf8)
        chmod(root + "/private.txt", 0o000)
        for path in [root, root + "/sub", root + "/sub/deeper"] { chmod(path, 0o755) }
        for path in [root + "/hello.txt", root + "/large.bin", root + "/sub/deeper/inner.txt"] { chmod(path, 0o644) }
    }
}

@Suite(.serialized) struct SFTPTests {
    let server: SSHTestServer
    let tree: SFTPTree

    /// Built once: Swift Testing makes a suite instance per test.
    private static let sharedTree = Result { try SFTPTree() }

    init() throws {
        server = try SSHTestServer.shared()
        tree = try Self.sharedTree.get()
    }

    @Test func statDescribesFilesDirectoriesAndLinks() async throws {
        try await withSSHSession(harnessOptions(server)) { session in
            let file = try await session.stat(RemotePath(tree.root + "/hello.txt"))
            #expect(file.type == .file)
            #expect(file.size == 12)
            #expect(file.mode == 0o644)
            #expect(file.modificationTime != nil)
            let directory = try await session.stat(RemotePath(tree.root + "/sub"))
            #expect(directory.type == .directory)
            let link = try await session.stat(RemotePath(tree.root + "/link"), followSymlinks: false)
            #expect(link.type == .symlink)
            let target = try await session.stat(RemotePath(tree.root + "/link"))
            #expect(target.type == .file)
            #expect(try await session.readlink(RemotePath(tree.root + "/link")) == "hello.txt")
            let resolved = try await session.realpath(RemotePath(tree.root + "/sub/deeper/../../link"))
            #expect(resolved.description == tree.root + "/hello.txt")
        }
    }

    @Test func listingReturnsEveryNameAsBytes() async throws {
        try await withSSHSession(harnessOptions(server)) { session in
            let directory = try await session.openDirectory(RemotePath(tree.root))
            var names: [[UInt8]] = []
            while true {
                let batch = try await directory.next(maxEntries: 2)
                if batch.isEmpty { break }
                #expect(batch.count <= 2)
                names += batch.map(\.name)
            }
            await directory.close()
            let expected: Set<[UInt8]> = [
                Array(".".utf8), Array("..".utf8), Array("hello.txt".utf8), Array("large.bin".utf8),
                Array("link".utf8), Array("sub".utf8), Array("private.txt".utf8), Array("caf".utf8) + [0xE9],
            ]
            #expect(Set(names) == expected)
        }
    }

    @Test func aFileReadsWholeAndFromAnOffset() async throws {
        try await withSSHSession(harnessOptions(server)) { session in
            let file = try await session.openFile(RemotePath(tree.root + "/large.bin"))
            #expect(try await file.attributes().size == UInt64(tree.large.count))
            var bytes: [UInt8] = []
            while true {
                let chunk = try await file.read(maxBytes: 256 * 1024)
                if chunk.isEmpty { break }
                bytes += chunk
            }
            #expect(bytes == tree.large)
            try await file.seek(to: UInt64(tree.large.count - 100))
            #expect(try await file.read() == Array(tree.large.suffix(100)))
            await file.close()
        }
    }

    @Test func aStreamDeliversTheWholeFileThroughASlowConsumer() async throws {
        try await withSSHSession(harnessOptions(server)) { session in
            let file = try await session.openFile(RemotePath(tree.root + "/large.bin"))
            try await file.seek(to: 123)
            // Small chunks and one buffered chunk: reading pauses for the consumer again and again.
            let stream = file.stream(readSize: 64 * 1024, chunkBytes: 100_000, bufferedChunks: 1)
            var bytes: [UInt8] = []
            var chunks = 0
            while let chunk = try await stream.next() {
                #expect(chunk.count <= 100_000)
                bytes += chunk.bytes
                chunks += 1
                if chunks % 5 == 0 {
                    // Meanwhile other SFTP requests on the session go through.
                    #expect(try await session.stat(RemotePath(tree.root)).type == .directory)
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            #expect(bytes == Array(tree.large.dropFirst(123)))
            #expect(chunks >= 20)
            #expect(try await stream.next() == nil)
            await file.close()
        }
    }

    @Test func aCancelledOrDroppedStreamLeavesTheSessionUsable() async throws {
        try await withSSHSession(harnessOptions(server)) { session in
            let file = try await session.openFile(RemotePath(tree.root + "/large.bin"))
            let stream = file.stream(readSize: 32 * 1024, chunkBytes: 64 * 1024, bufferedChunks: 2)
            let first = try #require(try await stream.next())
            #expect(first.bytes == Array(tree.large.prefix(first.count)))
            stream.cancel()
            await #expect(throws: CancellationError.self) { _ = try await stream.next() }

            let again = try await session.openFile(RemotePath(tree.root + "/large.bin"))
            do {
                let dropped = again.stream(readSize: 32 * 1024, chunkBytes: 64 * 1024, bufferedChunks: 2)
                _ = try await dropped.next()
            }
            // Both read-aheads ended; the subsystem answers other requests and a fresh read.
            #expect(try await session.stat(RemotePath(tree.root + "/hello.txt")).size == 12)
            let hello = try await session.openFile(RemotePath(tree.root + "/hello.txt"))
            var whole: [UInt8] = []
            let helloStream = hello.stream()
            while let chunk = try await helloStream.next() { whole += chunk.bytes }
            #expect(whole == Array("hello\nworld\n".utf8))
            await hello.close()
            await again.close()
            await file.close()
        }
    }

    @Test func missingAndForbiddenPathsGiveTheirSFTPStatus() async throws {
        try await withSSHSession(harnessOptions(server)) { session in
            do {
                _ = try await session.stat(RemotePath(tree.root + "/nope"))
                Issue.record("stat of a missing file succeeded")
            } catch let error as SSHError {
                #expect(error.code == .sftp)
                #expect(error.sftpStatus == SFTPStatus.noSuchFile)
                #expect(error.message.contains("/nope"))
                #expect(error.message.contains("no such file"))
            }
            do {
                _ = try await session.openFile(RemotePath(tree.root + "/private.txt"))
                Issue.record("opened a file with mode 000")
            } catch let error as SSHError {
                #expect(error.sftpStatus == SFTPStatus.permissionDenied)
            }
            // The session and its SFTP subsystem stay usable after failed requests.
            #expect(try await session.stat(RemotePath(tree.root)).type == .directory)
        }
    }

    @Test func sftpRequestsAndCommandsRunSideBySide() async throws {
        let session = try await SSHSession.connect(harnessOptions(server), maxChannels: 16)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<10 {
                group.addTask {
                    let attributes = try await session.stat(RemotePath(tree.root + "/hello.txt"))
                    #expect(attributes.size == 12)
                    let result = try await session.exec("echo \(index)", timeout: .seconds(20))
                    #expect(result.stdout == Array("\(index)\n".utf8))
                }
            }
            group.addTask {
                let file = try await session.openFile(RemotePath(tree.root + "/large.bin"))
                var count = 0
                while true {
                    let chunk = try await file.read()
                    if chunk.isEmpty { break }
                    count += chunk.count
                }
                await file.close()
                #expect(count == tree.large.count)
            }
            try await group.waitForAll()
        }
        await session.close()
    }
}
