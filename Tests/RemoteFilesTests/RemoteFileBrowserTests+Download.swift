import Digests
import Foundation
import RemoteFiles
import SSHTransport
import Synchronization
import TestSupport
import Testing

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
            let killed = Mutex(false)
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
        #expect(failure?.message.contains("run the same command again to resume") == true)
        #expect(!FileManager.default.fileExists(atPath: final))
        let kept = try #require(try FileManager.default.attributesOfItem(atPath: partial)[.size] as? UInt64)
        #expect(kept > 0 && kept < 24 << 20)

        let result = try await withBrowser { browser, _ in try await browser.download(RemotePath(path), to: final) }
        #expect(result.resumedFrom == kept)
        #expect(result.bytes == 24 << 20)
        #expect(result.sha256Hex == expected)
        #expect(try sha256(ofFile: final) == expected)
        #expect(!FileManager.default.fileExists(atPath: partial))
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
            let truncated = Mutex(false)
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
