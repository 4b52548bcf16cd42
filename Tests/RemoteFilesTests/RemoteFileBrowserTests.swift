import Foundation
import OrderedJSON
import RemoteFiles
import SSHTransport
import TestSupport
import Testing
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// The browser against the real loopback sshd and real files in /tmp.
@Suite(.serialized) struct RemoteFileBrowserTests {
    let tree: FilesTestTree

    init() throws {
        tree = try SharedTree.tree.get()
    }

    /// Names in a local directory, sorted by bytes, dotfiles left out unless `all`.
    private func localNames(_ path: String, all: Bool = false) -> [[UInt8]] {
        let prefix = Array(path.utf8) + [0x2F]
        return tree.allPaths()
            .filter { $0.count > prefix.count && Array($0.prefix(prefix.count)) == prefix }
            .map { Array($0.dropFirst(prefix.count)) }
            .filter { !$0.contains(0x2F) && (all || $0.first != 0x2E) }
            .sorted { $0.lexicographicallyPrecedes($1) }
    }

    // MARK: ls and stat

    @Test func aListingIsSortedByBytesWithDotfilesOnlyOnRequest() async throws {
        try await withBrowser { browser, _ in
            let entries = try await browser.list(RemotePath(tree.root))
            #expect(entries.map(\.name) == localNames(tree.root))
            let names = entries.map(\.escapedName)
            #expect(names.firstIndex(of: "Zed.txt")! < names.firstIndex(of: "caf\\xe9.txt")!)
            #expect(!names.contains(".env"))
            let all = try await browser.list(RemotePath(tree.root), options: ListOptions(includeHidden: true))
            #expect(all.map(\.name) == localNames(tree.root, all: true))
            #expect(!all.contains { $0.name == [0x2E] || $0.name == [0x2E, 0x2E] })

            let hello = try #require(entries.first { $0.escapedName == "hello.txt" })
            #expect(hello.type == .file)
            #expect(hello.size == 12)
            #expect(hello.modeText == "0644")
            #expect(hello.path == RemotePath(tree.root + "/hello.txt"))
            #expect(hello.owner == "root")
            let link = try #require(entries.first { $0.escapedName == "link" })
            #expect(link.type == .symlink)
            #expect(link.linkTarget == Array("hello.txt".utf8))
            #expect(entries.first { $0.escapedName == "src" }?.type == .dir)
        }
    }

    @Test func listingAFileShowsTheFileItself() async throws {
        try await withBrowser { browser, _ in
            let entries = try await browser.list(RemotePath(tree.root + "/hello.txt"))
            #expect(entries.count == 1)
            #expect(entries.first?.escapedName == "hello.txt")
        }
    }

    @Test func filesJSONHasTheDocumentedKeysAndFlagsNamesThatAreNotUTF8() async throws {
        try await withBrowser { browser, _ in
            let entries = try await browser.list(RemotePath(tree.root))
            let hello = try #require(entries.first { $0.escapedName == "hello.txt" })
            #expect(
                hello.jsonObject.keys == ["name", "path", "type", "size", "mode", "uid", "gid", "mtime", "link_target"])
            #expect(hello.jsonObject["mode"] == "0644")
            #expect(hello.jsonObject["link_target"] == .null)
            let mtime = try #require(hello.jsonObject["mtime"]?.stringValue)
            #expect(mtime.count == 20 && mtime.hasSuffix("Z") && mtime.contains("T"))
            var status = stat()
            lstat(tree.root + "/hello.txt", &status)
            let formatter = ISO8601DateFormatter()
            #expect(formatter.date(from: mtime).map { Int($0.timeIntervalSince1970) } == status.st_mtim.tv_sec)

            let latin = try #require(entries.first { $0.name == FilesTestTree.latin1Name })
            let object = latin.jsonObject
            #expect(object["name"] == "caf\\xe9.txt")
            #expect(
                object["name_bytes_base64"]?.stringValue.flatMap { Data(base64Encoded: $0) }.map(Array.init)
                    == FilesTestTree.latin1Name)
            #expect(object["name_is_utf8"] == .bool(false))
            #expect(object["path_is_utf8"] == .bool(false))
            // The JSON text parses back to the same value.
            #expect(try JSONParser.parse(latin.jsonValue.jsonString).jsonString == latin.jsonValue.jsonString)
        }
    }

    @Test func aNameThatIsNotUTF8IsListedThenReadByItsEscapedName() async throws {
        try await withBrowser { browser, _ in
            let entries = try await browser.list(RemotePath(tree.root))
            let latin = try #require(entries.first { !RemotePath(bytes: $0.name).isUTF8 })
            let addressed = RemotePath(escaped: tree.root + "/" + latin.escapedName)
            let preview = try await browser.read(addressed)
            #expect(preview.bytes == Array("latin-1 needle\n".utf8))
            #expect(try await browser.stat(addressed).size == 15)
        }
    }

    @Test func aHugeDirectoryStreamsInSortedBatchesWithBoundedMemory() async throws {
        let huge = try SharedTree.hugeDirectory.get()
        try await withBrowser { browser, _ in
            var options = ListOptions()
            options.batchSize = 250
            options.sortMemoryLimit = 1000
            var previous: [UInt8]? = nil
            var count = 0
            var largestBatch = 0
            let summary = try await browser.list(RemotePath(huge), options: options) { batch in
                largestBatch = max(largestBatch, batch.count)
                for entry in batch {
                    if let previous { #expect(previous.lexicographicallyPrecedes(entry.name)) }
                    previous = entry.name
                    count += 1
                }
            }
            #expect(count == 10_000)
            #expect(summary.count == 10_000)
            #expect(largestBatch <= 250)
            #expect(summary.spilledRuns >= 9)
            #expect(summary.peakBufferedEntries <= 1000)
            #expect(previous == Array("f09999".utf8))

            var unsorted = ListOptions(sorted: false)
            unsorted.batchSize = 300
            var seen = Set<[UInt8]>()
            try await browser.list(RemotePath(huge), options: unsorted) { batch in
                #expect(batch.count <= 300)
                for entry in batch { seen.insert(entry.name) }
            }
            #expect(seen.count == 10_000)
        }
    }

    @Test func statDescribesALinkItselfAndReportsLoopsAndDanglingLinksClearly() async throws {
        try await withBrowser { browser, _ in
            let link = try await browser.stat(RemotePath(tree.root + "/outside"))
            #expect(link.type == .symlink)
            #expect(link.linkTarget == Array("/etc".utf8))
            #expect(try await browser.stat(RemotePath(tree.root + "/loop-a")).type == .symlink)

            let loop = await remoteFilesError { _ = try await browser.read(RemotePath(tree.root + "/loop-a")) }
            #expect(loop?.code == .symlinkLoop)
            #expect(loop?.message.contains("harness") == true)
            #expect(loop?.message.contains("loop-a") == true)
            let dangling = await remoteFilesError { _ = try await browser.read(RemotePath(tree.root + "/dangling")) }
            #expect(dangling?.code == .notFound)
            #expect(dangling?.message.contains("does not exist") == true)
            let missing = await remoteFilesError { _ = try await browser.stat(RemotePath(tree.root + "/nope")) }
            #expect(missing?.code == .notFound)
            #expect(missing?.message.contains(tree.root + "/nope") == true)
        }
    }

    @Test func permissionDeniedIsOneClearError() async throws {
        try await withBrowser { browser, _ in
            let file = await remoteFilesError { _ = try await browser.read(RemotePath(tree.root + "/forbidden.txt")) }
            #expect(file?.code == .permissionDenied)
            #expect(file?.message.contains("permission denied") == true)
            #expect(file?.sftpStatus == SFTPStatus.permissionDenied)
            let directory = await remoteFilesError { _ = try await browser.list(RemotePath(tree.root + "/locked")) }
            #expect(directory?.code == .permissionDenied)
        }
    }

    // MARK: tree

    @Test func aTreeStopsAtItsDepthAndReportsUnreadableDirectoriesInline() async throws {
        try await withBrowser { browser, _ in
            let top = try await browser.tree(
                RemotePath(tree.root), options: WalkOptions(maxDepth: 2, includeHidden: false))
            let children = try #require(top.children)
            #expect(children.map(\.entry.name) == localNames(tree.root))
            let src = try #require(children.first { $0.entry.escapedName == "src" })
            #expect(src.children?.map(\.entry.escapedName) == ["app.js", "app.py", "deep"])
            let deep = try #require(src.children?.first { $0.entry.escapedName == "deep" })
            #expect(deep.children == nil)
            #expect(deep.error == nil)
            let locked = try #require(children.first { $0.entry.escapedName == "locked" })
            #expect(locked.error?.code == .permissionDenied)
            #expect(locked.children == nil)
            // Links are not entered unless asked.
            #expect(children.first { $0.entry.escapedName == "srclink" }?.children == nil)

            let json = top.jsonValue
            #expect(json["children"]?.arrayValue?.count == children.count)
            let jsonLocked = json["children"]?.arrayValue?.first { $0["name"] == "locked" }
            #expect(jsonLocked?["error"]?.stringValue?.contains("permission denied") == true)
        }
    }

    @Test func followingLinksEntersThemAndStopsAtLoops() async throws {
        try await withBrowser { browser, _ in
            let top = try await browser.tree(
                RemotePath(tree.root), options: WalkOptions(maxDepth: 6, includeHidden: false, followLinks: true))
            let children = try #require(top.children)
            let srclink = try #require(children.first { $0.entry.escapedName == "srclink" })
            #expect(srclink.entry.type == .symlink)
            #expect(srclink.children?.map(\.entry.escapedName) == ["app.js", "app.py", "deep"])
            // src/deep/up -> ../.. is the tree's own top: a loop, reported and not entered.
            let deep = try #require(
                children.first { $0.entry.escapedName == "src" }?.children?.first { $0.entry.escapedName == "deep" })
            let up = try #require(deep.children?.first { $0.entry.escapedName == "up" })
            #expect(up.error?.code == .symlinkLoop)
            #expect(up.children == nil)
            let loop = try #require(children.first { $0.entry.escapedName == "loop-a" })
            #expect(loop.error?.code == .symlinkLoop)
        }
    }
}
