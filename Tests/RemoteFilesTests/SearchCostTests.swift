import Foundation
import RemoteFiles
import SSHTransport
import TestSupport
import Testing
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// What a search costs the host and the client is bounded by the size of what it reads: long lines,
/// hostile patterns and files that are not files cannot stall it.
@Suite(.serialized) struct SearchCostTests {
    static func seconds(_ start: ContinuousClock.Instant) -> Double {
        start.duration(to: .now).inSeconds
    }

    @Test func aSixtyFourMebibyteSingleLineFileIsSearchedInLinearTime() async throws {
        let tree = try FilesTestTree(prefix: "hostscope-long-line")
        defer { tree.remove() }
        var line = [UInt8](repeating: UInt8(ascii: "x"), count: 64 << 20)
        line.replaceSubrange(line.count - 7..<line.count, with: Array("needle\n".utf8))
        try Data(line).write(to: URL(fileURLWithPath: tree.root + "/one-line.txt"))
        chmod(tree.root + "/one-line.txt", 0o644)
        try await withBrowser(root: tree.root) { browser, _ in
            for pattern in ["needle", "ne+dle$"] {
                var found: [GrepMatch] = []
                let start = ContinuousClock.now
                let summary = try await browser.grep(pattern, in: RemotePath("one-line.txt")) { found.append($0) }
                let elapsed = Self.seconds(start)
                #expect(summary.matches == 1, "\(pattern)")
                #expect(found.first?.line.count == (64 << 20) - 1, "\(pattern)")
                // Rescanning the pending line for each 256 KiB chunk took 11.6 s here.
                #expect(elapsed < 6, "\(pattern) took \(elapsed) s")
            }
        }
    }

    @Test func aBacktrackingBombIsSearchedInLinearTime() async throws {
        let tree = try FilesTestTree(prefix: "hostscope-bomb")
        defer { tree.remove() }
        try tree.write(
            String(repeating: "a", count: 34) + "\n" + String(repeating: "a", count: 1 << 20) + "\nac\n", "bomb.txt")
        try await withBrowser(root: tree.root) { browser, _ in
            var lines: [Int] = []
            let start = ContinuousClock.now
            try await browser.grep("(a|aa)*c", in: RemotePath("bomb.txt")) { lines.append($0.lineNumber) }
            let elapsed = Self.seconds(start)
            #expect(lines == [3])
            // Swift Regex took 15.9 s on the 34 `a`s alone.
            #expect(elapsed < 3, "took \(elapsed) s")
            let refused = await remoteFilesError {
                try await browser.grep("(a+)\\1c", in: RemotePath("bomb.txt")) { _ in }
            }
            #expect(refused?.code == .invalidArgument)
            #expect(refused?.message.contains("back-references") == true)
        }
    }

    @Test func aFileSwappedForAFIFOAfterTheListingIsReportedWithoutBeingOpened() async throws {
        let tree = try FilesTestTree(prefix: "hostscope-fifo")
        defer { tree.remove() }
        let directory = tree.root + "/logs"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, 0o755)
        for name in ["a.log", "b.log", "c.log"] { try tree.write("LINE \(name)\n", "logs/" + name) }
        let fifo = directory + "/b.log"
        defer {
            // A server stuck opening the FIFO for reading is let go by a writer.
            let writer = open(fifo, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
        }
        try await withBrowser(root: tree.root) { browser, _ in
            var lines: [String] = []
            let start = ContinuousClock.now
            let summary = try await browser.grep("LINE", in: RemotePath("logs"), options: GrepOptions(recursive: true))
            {
                match in
                lines.append(String(decoding: match.line, as: UTF8.self))
                // The listing is done: a user on the host replaces the next file with a FIFO.
                if match.path == RemotePath("logs/a.log") {
                    unlink(fifo)
                    mkfifo(fifo, 0o644)
                }
            }
            let elapsed = Self.seconds(start)
            #expect(lines == ["LINE a.log", "LINE c.log"])
            #expect(summary.problems.map(\.code) == [.notAFile], "\(summary.problems)")
            #expect(summary.problems.first?.message.contains("logs/b.log is a fifo, not a regular file") == true)
            // Opening it would have blocked the server until the 30 s timeout.
            #expect(elapsed < 10, "took \(elapsed) s")
            // The session still answers.
            #expect(try await browser.read(RemotePath("logs/c.log")).bytes == Array("LINE c.log\n".utf8))
        }
    }
}
