import Foundation
import RemoteFiles
import SSHTransport
import TestSupport
import Testing
import ValueFormats

extension RemoteFileBrowserTests {
    @Test func pathsInsideTheRootResolveRelativeToIt() async throws {
        try await withBrowser(root: tree.root) { browser, _ in
            #expect(browser.root == RemotePath(tree.root))
            let top = try await browser.list(RemotePath(""))
            #expect(top.contains { $0.escapedName == "hello.txt" && $0.path == "hello.txt" })
            #expect(try await browser.list(RemotePath("src")).map(\.path) == ["src/app.js", "src/app.py", "src/deep"])
            #expect(try await browser.read(RemotePath("src/../hello.txt")).bytes == Array("hello\nworld\n".utf8))
            #expect(try await browser.read(RemotePath(tree.root + "/hello.txt")).bytes == Array("hello\nworld\n".utf8))
            #expect(try await browser.read(RemotePath("link")).bytes == Array("hello\nworld\n".utf8))
            // A link that stays inside is fine, even through `..`.
            #expect(try await browser.read(RemotePath("src/deep/up/hello.txt")).bytes == Array("hello\nworld\n".utf8))
            // The root itself, described.
            let itself = try await browser.stat(RemotePath(""))
            #expect(itself.type == .dir)
            #expect(itself.path == ".")
            #expect(try await browser.stat(RemotePath(".")).type == .dir)
            // A link that leads outside may be described, not followed.
            #expect(try await browser.stat(RemotePath("outside")).linkTarget == Array("/etc".utf8))
        }
    }

    @Test func dotDotAbsolutePathsAndLinksOutOfTheRootAreRefused() async throws {
        try await withBrowser(root: tree.root + "/src") { browser, _ in
            let attempts: [(String, () async throws -> Void)] = [
                ("..", { _ = try await browser.list(RemotePath("..")) }),
                ("../hello.txt", { _ = try await browser.read(RemotePath("../hello.txt")) }),
                ("deep/../../hello.txt", { _ = try await browser.read(RemotePath("deep/../../hello.txt")) }),
                ("/etc/passwd", { _ = try await browser.read(RemotePath("/etc/passwd")) }),
                ("/", { _ = try await browser.list(RemotePath("/")) }),
                ("deep/up", { _ = try await browser.list(RemotePath("deep/up")) }),
                ("deep/up/hello.txt", { _ = try await browser.read(RemotePath("deep/up/hello.txt")) }),
                ("stat deep/up/hello.txt", { _ = try await browser.stat(RemotePath("deep/up/hello.txt")) }),
                ("tree ..", { _ = try await browser.tree(RemotePath("..")) }),
                ("grep /etc", { try await browser.grep("root", in: RemotePath("/etc/passwd")) { _ in } }),
                ("find ..", { try await browser.find(RemotePath("..")) { _ in } }),
                (
                    "get ../hello.txt",
                    {
                        _ = try await browser.download(
                            RemotePath("../hello.txt"), to: NSTemporaryDirectory() + "hostscope-never")
                    }
                ),
            ]
            for (label, attempt) in attempts {
                let error = await remoteFilesError(attempt)
                #expect(error?.code == .outsideRoot, "\(label)")
                #expect(error?.message.contains("outside the workspace \(tree.root)/src") == true, "\(label)")
            }
            #expect(!FileManager.default.fileExists(atPath: NSTemporaryDirectory() + "hostscope-never"))
        }
        try await withBrowser(root: tree.root) { browser, _ in
            for path in ["outside/passwd", "outside-file", "outside/"] {
                let error = await remoteFilesError { _ = try await browser.read(RemotePath(path)) }
                #expect(error?.code == .outsideRoot, "\(path)")
                #expect(error?.message.contains("resolves to /etc") == true, "\(path)")
            }
            // Walking with links followed lists the escaping link with an inline error.
            let walked = try await browser.tree(RemotePath(""), options: WalkOptions(maxDepth: 2, followLinks: true))
            let outside = try #require(walked.children?.first { $0.entry.escapedName == "outside" })
            #expect(outside.error?.code == .outsideRoot)
            #expect(outside.children == nil)
        }
    }

    @Test func aMissingOrFileRootIsRefused() async throws {
        let server = try SSHTestServer.shared()
        try await withSSHSession(filesHarnessOptions(server)) { session in
            let missing = await remoteFilesError {
                _ = try await RemoteFileBrowser.open(
                    session: session, host: "harness", root: RemotePath(tree.root + "/nope"))
            }
            #expect(missing?.code == .notFound)
            let file = await remoteFilesError {
                _ = try await RemoteFileBrowser.open(
                    session: session, host: "harness", root: RemotePath(tree.root + "/hello.txt"))
            }
            #expect(file?.code == .notADirectory)
        }
    }
}
