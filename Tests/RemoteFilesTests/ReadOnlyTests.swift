import Foundation
import RemoteFiles
import SSHTransport
import TestSupport
import Testing
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// The browser changes nothing on the host: sizes, modification and change times of every
/// path in a tree are the same before and after a session that uses every operation.
@Suite struct ReadOnlyTests {
    @Test func aFullSessionLeavesEverySizeMtimeAndCtimeUnchanged() async throws {
        let tree = try FilesTestTree(prefix: "hostscope-readonly")
        let markers = FilesTestTree.pwnedMarkers(home: try SSHTestServer.shared().home)
        for marker in markers { unlink(marker) }
        let local = NSTemporaryDirectory() + "hostscope-readonly-get-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: local, withIntermediateDirectories: true)
        FilesTestTree.removeAtExit(local)
        // ctime has nanosecond resolution but moves in clock ticks: a pause makes any change show.
        try await Task.sleep(for: .milliseconds(20))
        let paths = tree.allPaths()
        let before = FileStamp.record(paths)
        #expect(before.count == paths.count)

        for root in [nil, tree.root] {
            try await withBrowser(root: root) { browser, _ in
                let top = RemotePath(root == nil ? tree.root : "")
                func at(_ relative: String) -> RemotePath {
                    root == nil ? RemotePath(tree.root + "/" + relative) : RemotePath(relative)
                }
                _ = try await browser.list(top, options: ListOptions(includeHidden: true))
                _ = try await browser.list(at("src"), options: ListOptions(includeHidden: true, sorted: false))
                _ = try await browser.tree(top, options: WalkOptions(includeHidden: true, followLinks: true))
                for name in ["hello.txt", "link", "outside", "loop-a", "dangling", "src"] {
                    _ = try? await browser.stat(at(name))
                }
                _ = try await browser.read(at("numbered.log"))
                _ = try await browser.read(at("numbered.log"), options: ReadOptions(range: .head(lines: 5)))
                _ = try await browser.read(at("numbered.log"), options: ReadOptions(range: .tail(lines: 5)))
                _ = try await browser.read(
                    at("numbered.log"), options: ReadOptions(range: .bytes(ByteRange(parsing: "10-20")!)))
                _ = try await browser.read(at("image.png"))
                for name in ["forbidden.txt", "loop-a", "dangling", "locked/secret.txt"] {
                    _ = try? await browser.read(at(name))
                }
                try await browser.grep("needle", in: top, options: GrepOptions(recursive: true, ignoreCase: true)) {
                    _ in
                }
                try await browser.grep(
                    "$(touch /tmp/hostscope-pwned)", in: at("odd"), options: GrepOptions(recursive: true)
                ) { _ in }
                try await browser.find(
                    top, options: FindOptions(name: GlobPattern("*.py"), walk: WalkOptions(followLinks: true))
                ) { _ in }
                _ = try await browser.download(at("numbered.log"), to: local + "/")
                _ = try await browser.download(at("image.png"), to: local + "/")
                for name in FilesTestTree.hostileNames {
                    let path = RemotePath(bytes: Array(at("odd/").bytes) + name)
                    _ = try await browser.read(path)
                    _ = try await browser.download(path, to: local + "/")
                }
            }
        }

        #expect(tree.allPaths() == paths, "no path was created or removed")
        let after = FileStamp.record(paths)
        for path in paths {
            #expect(
                before[path] == after[path],
                "\(EscapedText.encode(path)): \(String(describing: before[path])) → \(String(describing: after[path]))")
        }
        for marker in markers { #expect(access(marker, F_OK) != 0, "\(marker)") }
        tree.remove()
    }

    /// The SSH layer's calls that RemoteFiles may make: all of them read. A new call (a command,
    /// or anything else) has to be added here on purpose, with a reason.
    @Test func theModuleCallsOnlyReadingOperationsOfTheSSHLayer() throws {
        let allowed: Set<String> = [
            "stat", "realpath", "readlink", "openDirectory", "openFile", "next", "read", "seek", "attributes", "close",
            // Reads a file opened for reading, ahead of its consumer.
            "stream",
        ]
        let sources = Repository.root.appendingPathComponent("Sources/RemoteFiles")
        let enumerator = try #require(FileManager.default.enumerator(atPath: sources.path))
        var calls: Set<String> = []
        var files = 0
        while let relative = enumerator.nextObject() as? String {
            guard relative.hasSuffix(".swift") else { continue }
            files += 1
            let text = try String(contentsOf: sources.appendingPathComponent(relative), encoding: .utf8)
            // Calls on the session, a directory handle or a file handle: `session.x(`, `file.x(`, `handle.x(`.
            let pattern = try Regex("(?:session|file|handle|directory)\\.([a-zA-Z]+)\\(")
            for match in text.matches(of: pattern) {
                if let name = match.output[1].substring { calls.insert(String(name)) }
            }
            #expect(!text.contains(".exec("), "\(relative) runs a command on the host")
        }
        #expect(files > 5)
        #expect(calls.isSubset(of: allowed), "unexpected calls: \(calls.subtracting(allowed).sorted())")
        #expect(calls.contains("openFile") && calls.contains("read"))
    }
}
