import Digests
import Foundation
import RemoteFiles
import SSHTransport
import Synchronization
import TestSupport
import Testing
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

extension RemoteFileBrowserTests {
    private func localDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "hostscope-downloads-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        FilesTestTree.removeAtExit(path)
        return path
    }

    @Test func aDownloadLandsUnderItsFinalNameWithItsSHA256() async throws {
        let local = try localDirectory()
        try await withBrowser { browser, _ in
            let result = try await browser.download(RemotePath(tree.root + "/numbered.log"), to: local + "/copy.log")
            #expect(result.localPath == local + "/copy.log")
            #expect(result.bytes == UInt64(FilesTestTree.numberedText.utf8.count))
            #expect(result.resumedFrom == 0)
            #expect(result.sha256Hex == hex(SHA256.hash(Array(FilesTestTree.numberedText.utf8))))
            #expect(try String(contentsOfFile: local + "/copy.log", encoding: .utf8) == FilesTestTree.numberedText)
            #expect(!FileManager.default.fileExists(atPath: RemoteFileBrowser.partialPath(for: local + "/copy.log")))

            // Into a directory: the remote name is kept (escaped when it is not UTF-8).
            let named = try await browser.download(RemotePath(tree.root + "/hello.txt"), to: local)
            #expect(named.localPath == local + "/hello.txt")
            let latin = RemotePath(bytes: Array((tree.root + "/").utf8) + FilesTestTree.latin1Name)
            #expect(try await browser.download(latin, to: local + "/").localPath == local + "/caf\\xe9.txt")

            let directory = await remoteFilesError {
                _ = try await browser.download(RemotePath(tree.root + "/src"), to: local)
            }
            #expect(directory?.code == .isADirectory)
        }
    }

    @Test func aDownloadKeepsTheRemoteModeLessTheUmaskAsSftpDoes() async throws {
        let server = try SSHTestServer.shared()
        let owner = try #require(getpwnam(server.user)?.pointee.pw_uid)
        let remote = try FilesTestTree(prefix: "hostscope-modes")
        defer { remote.remove() }
        let local = try localDirectory()
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let umaskLine = try #require(status.split(separator: "\n").first { $0.hasPrefix("Umask:") })
        let mask = try #require(UInt16(umaskLine.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8))
        func localMode(_ path: String) -> UInt16 {
            var info = stat()
            return lstat(path, &info) == 0 ? UInt16(info.st_mode & 0o7777) : 0xFFFF
        }
        try await withBrowser { browser, _ in
            // As sftp: the remote permission bits, write for the owner, less the umask; never set-id bits.
            for (name, mode, expected) in [
                ("private.key", 0o600, 0o600), ("script.sh", 0o750, 0o750), ("public.txt", 0o644, 0o644),
                ("readonly.txt", 0o444, 0o644), ("setuid", 0o4755, 0o755),
            ] as [(String, mode_t, UInt16)] {
                try FilesTestTree.createFile(
                    remote.root + "/", Array(name.utf8), contents: Array("x\n".utf8), mode: mode)
                chown(remote.root + "/" + name, owner, gid_t.max)
                chmod(remote.root + "/" + name, mode)
                let result = try await browser.download(RemotePath(remote.root + "/" + name), to: local + "/")
                #expect(localMode(result.localPath) == expected & ~mask, "\(name)")
            }
            // A partial file an earlier attempt left readable by all is narrowed before it is resumed.
            let final = local + "/resumed.key"
            let partial = RemoteFileBrowser.partialPath(for: final)
            try FilesTestTree.createFile(
                remote.root + "/", Array("resumed.key".utf8), contents: Array(repeating: 0x6B, count: 100_000),
                mode: 0o600)
            chown(remote.root + "/resumed.key", owner, gid_t.max)
            FileManager.default.createFile(atPath: partial, contents: Data(repeating: 0x6B, count: 70_000))
            chmod(partial, 0o644)
            let resumed = try await browser.download(RemotePath(remote.root + "/resumed.key"), to: final)
            #expect(resumed.resumedFrom == 70_000)
            #expect(localMode(final) == 0o600 & ~mask)
        }
    }

    @Test func aDroppedSessionLeavesNoFileUnderTheFinalNameAndTheNextRunResumes() async throws {
        let source = try FilesTestTree(prefix: "hostscope-get")
        let path = try source.makeRandomFile("big.bin", size: 24 << 20)
        let expected = try sha256(ofFile: path)
        let local = try localDirectory()
        let final = local + "/big.bin"
        let partial = RemoteFileBrowser.partialPath(for: final)

        let failure = try await withBrowser { browser, session in
            // The shell's parent is the sshd process serving this connection.
            let pid = try await session.exec("echo $PPID", timeout: .seconds(10))
            let sshd = try #require(
                Int32(String(decoding: pid.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
            let killed = Lock(false)
            var options = DownloadOptions()
            options.progress = { done, _ in
                if done > 4 << 20, !killed.withLock({ $0 }) {
                    killed.withLock { $0 = true }
                    kill(sshd, SIGKILL)
                }
            }
            return await remoteFilesError {
                _ = try await browser.download(RemotePath(path), to: final, options: options)
            }
        }
        #expect(failure?.code == .connectionLost)
        #expect(failure?.message.contains("the connection dropped while downloading") == true)
        #expect(!FileManager.default.fileExists(atPath: final))
        let kept = try #require(try FileManager.default.attributesOfItem(atPath: partial)[.size] as? UInt64)
        #expect(kept > 0 && kept < 24 << 20)
        // The error says what was kept, in the line the command line prints.
        #expect(failure?.partial == PartialDownload(path: partial, bytes: kept, size: 24 << 20))
        #expect(
            failure?.partial?.line
                == "partial kept: \(partial) (\(kept) of \(24 << 20) bytes); run the same command again to resume")

        let result = try await withBrowser { browser, _ in try await browser.download(RemotePath(path), to: final) }
        #expect(result.resumedFrom == kept)
        #expect(result.bytes == 24 << 20)
        #expect(result.sha256Hex == expected)
        #expect(try sha256(ofFile: final) == expected)
        #expect(!FileManager.default.fileExists(atPath: partial))
        source.remove()
    }

    @Test func aCancelledDownloadIsInterruptedWithItsPartialBytesKeptForTheNextRun() async throws {
        let source = try FilesTestTree(prefix: "hostscope-get-cancel")
        let path = try source.makeRandomFile("big.bin", size: 24 << 20)
        let local = try localDirectory()
        let final = local + "/big.bin"
        let partial = RemoteFileBrowser.partialPath(for: final)
        let failure = try await withBrowser { browser, _ in
            await remoteFilesError {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    let started = Lock(false)
                    var options = DownloadOptions()
                    // Past 4 MiB the download waits (at most 30 s) for the cancellation, so it cannot finish first.
                    options.progress = { done, _ in
                        guard done > 4 << 20, !started.withLock({ $0 }) else { return }
                        started.withLock { $0 = true }
                        let deadline = ContinuousClock.now + .seconds(30)
                        while !Task.isCancelled, ContinuousClock.now < deadline { usleep(1000) }
                    }
                    group.addTask { _ = try await browser.download(RemotePath(path), to: final, options: options) }
                    try await waitUntil("part of the download") { started.withLock { $0 } }
                    group.cancelAll()
                    try await group.next()
                }
            }
        }
        #expect(failure?.code == .interrupted)
        let kept = try #require(try FileManager.default.attributesOfItem(atPath: partial)[.size] as? UInt64)
        #expect(failure?.partial == PartialDownload(path: partial, bytes: kept, size: 24 << 20))
        #expect(!FileManager.default.fileExists(atPath: final))
        let result = try await withBrowser { browser, _ in try await browser.download(RemotePath(path), to: final) }
        #expect(result.resumedFrom == kept)
        #expect(try sha256(ofFile: final) == (try sha256(ofFile: path)))
        source.remove()
    }

    @Test func aPartialFileThatNoLongerMatchesIsDownloadedAfresh() async throws {
        let local = try localDirectory()
        let final = local + "/numbered.log"
        try Data(repeating: 0x41, count: 3000).write(
            to: URL(fileURLWithPath: RemoteFileBrowser.partialPath(for: final)))
        try await withBrowser { browser, _ in
            let result = try await browser.download(RemotePath(tree.root + "/numbered.log"), to: final)
            #expect(result.resumedFrom == 0)
            #expect(result.sha256Hex == hex(SHA256.hash(Array(FilesTestTree.numberedText.utf8))))
        }
        #expect(try String(contentsOfFile: final, encoding: .utf8) == FilesTestTree.numberedText)
    }

    @Test func aFileThatShrinksMidDownloadIsOneClearErrorAndLeavesNothing() async throws {
        let source = try FilesTestTree(prefix: "hostscope-shrink")
        let path = try source.makeRandomFile("shrinking.bin", size: 64 << 20)
        let local = try localDirectory()
        let final = local + "/shrinking.bin"
        try await withBrowser { browser, _ in
            let truncated = Lock(false)
            var options = DownloadOptions()
            options.progress = { done, _ in
                if !truncated.withLock({ $0 }) {
                    truncated.withLock { $0 = true }
                    truncate(path, 1 << 20)
                }
            }
            let error = await remoteFilesError {
                _ = try await browser.download(RemotePath(path), to: final, options: options)
            }
            #expect(error?.code == .changedWhileReading)
            #expect(error?.message.contains("shrank") == true)
        }
        #expect(!FileManager.default.fileExists(atPath: final))
        #expect(!FileManager.default.fileExists(atPath: RemoteFileBrowser.partialPath(for: final)))
        source.remove()
    }
}
