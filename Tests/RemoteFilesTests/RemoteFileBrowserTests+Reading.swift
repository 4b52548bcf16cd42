import Foundation
import RemoteFiles
import SSHTransport
import TestSupport
import Testing
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

extension RemoteFileBrowserTests {
    private var numbered: RemotePath { RemotePath(tree.root + "/numbered.log") }

    @Test func headTailAndByteRangesReturnTheirPart() async throws {
        let text = Array(FilesTestTree.numberedText.utf8)
        try await withBrowser { browser, _ in
            let head = try await browser.read(numbered, options: ReadOptions(range: .head(lines: 3)))
            #expect(head.bytes == Array("line 1\nline 2\nline 3\n".utf8))
            #expect(head.offset == 0)
            #expect(!head.truncated)
            #expect(head.fileSize == UInt64(text.count))

            let tail = try await browser.read(numbered, options: ReadOptions(range: .tail(lines: 2)))
            #expect(tail.bytes == Array("line 999\nline 1000\n".utf8))
            #expect(tail.offset == UInt64(text.count - tail.bytes.count))
            #expect(!tail.truncated, "the two lines asked for were shown whole")

            let many = try await browser.read(numbered, options: ReadOptions(range: .tail(lines: 5000)))
            #expect(many.bytes == text)
            #expect(!many.truncated)

            let bytes = try await browser.read(
                numbered, options: ReadOptions(range: .bytes(ByteRange(parsing: "7-13")!)))
            #expect(bytes.bytes == Array(text[7...13]))
            #expect(bytes.offset == 7)
            let suffix = try await browser.read(
                numbered, options: ReadOptions(range: .bytes(ByteRange(parsing: "-5")!)))
            #expect(suffix.bytes == Array(text.suffix(5)))
            let open = try await browser.read(
                numbered, options: ReadOptions(range: .bytes(ByteRange(parsing: "8000-")!)))
            #expect(open.bytes == Array(text[8000...]))
            let past = await remoteFilesError {
                _ = try await browser.read(
                    self.numbered, options: ReadOptions(range: .bytes(ByteRange(parsing: "999999-")!)))
            }
            #expect(past?.code == .invalidArgument)
        }
    }

    @Test func theByteCapCutsAndSaysSo() async throws {
        let text = Array(FilesTestTree.numberedText.utf8)
        try await withBrowser { browser, _ in
            let whole = try await browser.read(numbered, options: ReadOptions(maxBytes: 100))
            #expect(whole.bytes == Array(text.prefix(100)))
            #expect(whole.truncated)
            let full = try await browser.read(numbered)
            #expect(full.bytes == text)
            #expect(!full.truncated)
            let tail = try await browser.read(numbered, options: ReadOptions(range: .tail(lines: 500), maxBytes: 50))
            #expect(tail.bytes == Array(text.suffix(50)))
            #expect(tail.truncated)
            let head = try await browser.read(numbered, options: ReadOptions(range: .head(lines: 500), maxBytes: 50))
            #expect(head.bytes == Array(text.prefix(50)))
            #expect(head.truncated)
        }
    }

    @Test func tailReadsOnlyTheEndOfAHugeFile() async throws {
        // 64 GiB of sparse zeros and two lines: reading it whole would take minutes.
        let path = NSTemporaryDirectory() + "hostscope-sparse-\(UUID().uuidString).log"
        let descriptor = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o644)
        let size: off_t = 64 << 30
        ftruncate(descriptor, size)
        let ending = Array("\nfirst\nsecond\n".utf8)
        _ = ending.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, size) }
        close(descriptor)
        chmod(path, 0o644)
        defer { unlink(path) }
        try await withBrowser { browser, _ in
            let start = ContinuousClock.now
            let tail = try await browser.read(RemotePath(path), options: ReadOptions(range: .tail(lines: 2)))
            #expect(tail.bytes == Array("first\nsecond\n".utf8))
            #expect(tail.fileSize == UInt64(size) + UInt64(ending.count))
            #expect(start.duration(to: .now) < .seconds(5))
        }
    }

    @Test func binaryContentIsDetectedAndItsTypeGuessed() async throws {
        try await withBrowser { browser, _ in
            let png = try await browser.read(RemotePath(tree.root + "/image.png"))
            #expect(png.isBinary)
            #expect(png.typeGuess == "PNG image")
            let tail = try await browser.read(
                RemotePath(tree.root + "/image.png"), options: ReadOptions(range: .tail(lines: 1)))
            #expect(tail.typeGuess == "PNG image")
            let text = try await browser.read(RemotePath(tree.root + "/hello.txt"))
            #expect(!text.isBinary)
            #expect(text.typeGuess == nil)
        }
    }

    @Test func directoriesAndVanishedFilesAreRefusedWithOneSentence() async throws {
        try await withBrowser { browser, _ in
            let directory = await remoteFilesError { _ = try await browser.read(RemotePath(tree.root + "/src")) }
            #expect(directory?.code == .isADirectory)
            let path = tree.root + "/vanishing.txt"
            try "soon gone\n".write(toFile: path, atomically: false, encoding: .utf8)
            chmod(path, 0o644)
            #expect(try await browser.stat(RemotePath(path)).size == 10)
            unlink(path)
            let vanished = await remoteFilesError { _ = try await browser.read(RemotePath(path)) }
            #expect(vanished?.code == .notFound)
            #expect(vanished?.message.contains("vanishing.txt") == true)
        }
    }

    // MARK: grep and find

    @Test func grepFindsMatchesRecursivelyInWalkOrder() async throws {
        try await withBrowser { browser, _ in
            var matches: [String] = []
            let summary = try await browser.grep(
                "needle", in: RemotePath(tree.root + "/src"), options: GrepOptions(recursive: true)
            ) { match in
                matches.append(
                    "\(match.path.escaped):\(match.lineNumber):\(String(decoding: match.line, as: UTF8.self))")
            }
            let base = tree.root + "/src"
            #expect(
                matches == [
                    "\(base)/app.js:1:needle in js", "\(base)/app.py:1:print('needle')",
                    "\(base)/deep/deeper/x.py:1:deep needle", "\(base)/deep/notes.md:1:# needle",
                ])
            #expect(summary.matches == 4)
            #expect(summary.filesMatched == 4)
            #expect(summary.problems.isEmpty)
        }
    }

    @Test func grepOptionsIgnoreCaseGlobMaxCountAndRegexWork() async throws {
        try await withBrowser { browser, _ in
            let src = RemotePath(tree.root + "/src")
            var lines: [Int] = []
            try await browser.grep(
                "NEEDLE", in: RemotePath(tree.root + "/src/app.py"), options: GrepOptions(ignoreCase: true)
            ) {
                lines.append($0.lineNumber)
            }
            #expect(lines == [1, 2])
            lines = []
            try await browser.grep(
                "needle", in: RemotePath(tree.root + "/src/app.py"), options: GrepOptions(ignoreCase: true, maxCount: 1)
            ) { lines.append($0.lineNumber) }
            #expect(lines == [1])

            var paths: [String] = []
            try await browser.grep("needle", in: src, options: GrepOptions(recursive: true, glob: GlobPattern("*.py")))
            {
                paths.append($0.path.escaped)
            }
            #expect(paths == [tree.root + "/src/app.py", tree.root + "/src/deep/deeper/x.py"])

            lines = []
            try await browser.grep("^line 99[0-9]$", in: numbered) { lines.append($0.lineNumber) }
            #expect(lines == Array(990...999))
            lines = []
            try await browser.grep("line 1.", in: numbered, options: GrepOptions(fixedString: true)) {
                lines.append($0.lineNumber)
            }
            #expect(lines.isEmpty)

            let invalid = await remoteFilesError { try await browser.grep("(unclosed", in: src) { _ in } }
            #expect(invalid?.code == .invalidArgument)
            let directory = await remoteFilesError { try await browser.grep("needle", in: src) { _ in } }
            #expect(directory?.code == .isADirectory)
            #expect(directory?.message.contains("-r") == true)
        }
    }

    @Test func grepReadsHostileNamesAsDataAndCreatesNothing() async throws {
        let markers = FilesTestTree.pwnedMarkers(home: try SSHTestServer.shared().home)
        for marker in markers { unlink(marker) }
        try await withBrowser { browser, _ in
            var found: [[UInt8]] = []
            let summary = try await browser.grep(
                "needle", in: RemotePath(tree.root), options: GrepOptions(recursive: true)
            ) { match in
                found.append(match.path.bytes)
            }
            for name in FilesTestTree.hostileNames {
                #expect(found.contains(Array((tree.root + "/odd/").utf8) + name), "\(EscapedText.encode(name))")
            }
            #expect(found.contains(Array((tree.root + "/" + FilesTestTree.hostilePath).utf8)))
            #expect(found.contains(Array((tree.root + "/").utf8) + FilesTestTree.latin1Name))
            #expect(found.contains(Array((tree.root + "/.env").utf8)))
            #expect(summary.binaryFilesSkipped >= 1)
            // The unreadable file and directory are reported; the search went on.
            #expect(summary.problems.count == 2)
            #expect(summary.problems.allSatisfy { $0.code == .permissionDenied })

            // Patterns that look like options or shell are data too.
            for pattern in ["-rf", "--", "$(touch /tmp/hostscope-pwned)", "; rm -rf ~", "`touch hostscope-pwned`"] {
                try await browser.grep(
                    pattern, in: RemotePath(tree.root + "/odd"), options: GrepOptions(recursive: true)
                ) { _ in }
            }
            // A hostile name addressed directly.
            for name in FilesTestTree.hostileNames {
                let path = RemotePath(bytes: Array((tree.root + "/odd/").utf8) + name)
                var count = 0
                try await browser.grep("needle", in: path) { _ in count += 1 }
                #expect(count == 1)
                #expect(try await browser.read(path).bytes == Array("needle\n".utf8))
            }
        }
        for marker in markers { #expect(access(marker, F_OK) != 0, "\(marker)") }
    }

    @Test func findSelectsByNameAgeAndType() async throws {
        let old = tree.root + "/src/deep/notes.md"
        var times = [timespec(tv_sec: 946_684_800, tv_nsec: 0), timespec(tv_sec: 946_684_800, tv_nsec: 0)]
        utimensat(AT_FDCWD, old, &times, 0)
        try await withBrowser { browser, _ in
            var found: [String] = []
            try await browser.find(RemotePath(tree.root + "/src"), options: FindOptions(name: GlobPattern("*.py"))) {
                found.append($0.path.escaped)
            }
            #expect(found == [tree.root + "/src/app.py", tree.root + "/src/deep/deeper/x.py"])

            found = []
            let hourAgo = UInt32(Date().timeIntervalSince1970 - 3600)
            try await browser.find(
                RemotePath(tree.root + "/src"), options: FindOptions(modifiedSince: hourAgo, type: .file)
            ) {
                found.append($0.path.escaped)
            }
            #expect(found.contains(tree.root + "/src/app.py"))
            #expect(!found.contains(old))

            found = []
            try await browser.find(RemotePath(tree.root), options: FindOptions(type: .dir)) {
                found.append($0.path.escaped)
            }
            #expect(found.contains(tree.root + "/src/deep/deeper"))
            #expect(!found.contains(tree.root + "/srclink"))
            let problems = try await browser.find(
                RemotePath(tree.root), options: FindOptions(name: GlobPattern("nothing"))
            ) { _ in }
            #expect(problems.map(\.code) == [.permissionDenied])
        }
    }
}
