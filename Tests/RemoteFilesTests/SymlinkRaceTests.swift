import Foundation
import SSHTransport
import TestSupport
import Testing
import ValueFormats

@testable import RemoteFiles

/// A user on the host swaps names in the workspace while hostscope reads it (the harness host is this
/// machine, so the swapping thread works in the same tree the SFTP server serves): nothing from outside
/// `--root` may come out, however the swaps fall.
@Suite(.serialized) struct SymlinkRaceTests {
    /// What a run of attempts under a swapper saw.
    struct Tally: CustomStringConvertible {
        var swaps = 0
        var escapes = 0
        var clean = 0
        var refused: [String: Int] = [:]
        /// One message of each kind refused, to say why.
        var examples: [String: String] = [:]
        /// Failures that were not a ``RemoteFilesError`` (each is a bug: every refusal is one sentence).
        var unexplained = 0

        var description: String {
            "\(swaps) swaps, \(escapes) escapes, \(clean) clean, refused \(refused) as in \(examples)"
        }
    }

    /// Runs `attempt` `count` times while `swapper` swaps; `attempt` says whether outside content came out.
    static func race(
        _ swapper: PathSwapper, attempts count: Int, _ attempt: () async throws -> Bool
    ) async throws -> Tally {
        var tally = Tally()
        try swapper.start()
        for _ in 0..<count {
            do {
                if try await attempt() { tally.escapes += 1 } else { tally.clean += 1 }
            } catch let error as RemoteFilesError {
                tally.refused[error.code.description, default: 0] += 1
                tally.examples[error.code.description] = error.message
            } catch {
                tally.unexplained += 1
                tally.examples["\(type(of: error))"] = "\(error)"
            }
        }
        tally.swaps = try swapper.stop()
        return tally
    }

    /// A browser confined to the race tree's workspace; `confirmingHandles: false` makes it check by
    /// name only, as it must on a server without `/proc/self/fd`.
    static func withRaceBrowser<T: Sendable>(
        _ race: RaceTree, confirmingHandles: Bool, _ body: (RemoteFileBrowser) async throws -> T
    ) async throws -> T {
        let server = try SSHTestServer.shared()
        return try await withSSHSession(filesHarnessOptions(server)) { session in
            let browser = try await RemoteFileBrowser.open(
                session: session, host: "harness", root: RemotePath(race.workspace),
                handles: HandleLocator(enabled: confirmingHandles))
            return try await body(browser)
        }
    }

    static func check(_ tally: Tally, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(tally.swaps >= 200, "\(tally)", sourceLocation: sourceLocation)
        #expect(tally.escapes == 0, "\(tally)", sourceLocation: sourceLocation)
        #expect(tally.unexplained == 0, "\(tally)", sourceLocation: sourceLocation)
    }

    static func grepOutside(_ browser: RemoteFileBrowser) async throws -> Bool {
        var escaped = false
        try await browser.grep("LINE", in: RemotePath(""), options: GrepOptions(recursive: true)) { match in
            if String(decoding: match.line, as: UTF8.self).contains("TOP-SECRET") { escaped = true }
        }
        return escaped
    }

    @Test(arguments: [true, false])
    func catOfAFileSwappedWithALinkOutOfTheRootNeverReturnsTheOutsideFile(confirmingHandles: Bool) async throws {
        // Checking by name can only tell the files apart by their attributes: the swapping user owns the decoy.
        let race = try RaceTree(decoyOwner: confirmingHandles ? nil : 65534)
        defer { race.remove() }
        try await Self.withRaceBrowser(race, confirmingHandles: confirmingHandles) { browser in
            #expect(try await browser.read(RemotePath("race")).bytes == Array(race.decoy.utf8))
            let tally = try await Self.race(race.fileSwapper(), attempts: 300) {
                try await browser.read(RemotePath("race")).bytes == Array(race.secret.utf8)
            }
            Self.check(tally)
            #expect(try await browser.read(RemotePath("race")).bytes == Array(race.decoy.utf8))
        }
    }

    @Test func downloadOfAFileSwappedWithALinkOutOfTheRootNeverWritesTheOutsideFile() async throws {
        let race = try RaceTree()
        defer { race.remove() }
        let destination = race.base + "/downloaded"
        try await Self.withRaceBrowser(race, confirmingHandles: true) { browser in
            let tally = try await Self.race(race.fileSwapper(), attempts: 100) {
                _ = try await browser.download(
                    RemotePath("race"), to: destination, options: DownloadOptions(resume: false))
                return try String(contentsOfFile: destination, encoding: .utf8) == race.secret
            }
            Self.check(tally)
        }
    }

    @Test(arguments: [true, false])
    func recursiveGrepWhileAFileIsSwappedWithALinkOutOfTheRootNeverMatchesOutside(confirmingHandles: Bool)
        async throws
    {
        let race = try RaceTree(decoyOwner: confirmingHandles ? nil : 65534)
        defer { race.remove() }
        try await Self.withRaceBrowser(race, confirmingHandles: confirmingHandles) { browser in
            let tally = try await Self.race(race.fileSwapper(), attempts: 100) {
                try await Self.grepOutside(browser)
            }
            Self.check(tally)
        }
    }

    @Test func recursiveGrepWhileADirectoryIsSwappedWithALinkOutOfTheRootNeverMatchesOutside() async throws {
        let race = try RaceTree()
        defer { race.remove() }
        try await Self.withRaceBrowser(race, confirmingHandles: true) { browser in
            let tally = try await Self.race(race.directorySwapper(), attempts: 100) {
                try await Self.grepOutside(browser)
            }
            Self.check(tally)
        }
    }

    @Test func aTreeWhileADirectoryIsSwappedWithALinkOutOfTheRootListsNothingOutside() async throws {
        let race = try RaceTree()
        defer { race.remove() }
        try await Self.withRaceBrowser(race, confirmingHandles: true) { browser in
            var inline: [RemoteFilesError] = []
            let tally = try await Self.race(race.directorySwapper(), attempts: 150) {
                let tree = try await browser.tree(RemotePath(""), options: WalkOptions(includeHidden: true))
                let sub = tree.children?.first { $0.entry.escapedName == "sub" }
                if let error = sub?.error { inline.append(error) }
                return (sub?.children ?? []).contains { $0.entry.escapedName == "secret.txt" }
            }
            Self.check(tally)
            // The swapped directory is reported inline, and the walk goes on.
            #expect(inline.allSatisfy { $0.code == .changedWhileReading }, "\(inline)")
        }
    }
}
