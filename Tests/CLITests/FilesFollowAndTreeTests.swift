import Foundation
import OrderedJSON
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `files cat --follow` against a file this test writes to on the host, `files get -r` of a tree holding links
/// that lead in and out of it, and the line an interrupted download leaves; all through the real sshd.
@Suite(.serialized) struct FilesFollowAndTreeTests {
    let server: SSHTestServer
    let directory: String

    init() throws {
        server = try SSHTestServer.shared()
        directory = NSTemporaryDirectory() + "hostscope-follow-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, 0o755)
        FilesTestTree.removeAtExit(directory)
    }

    private var connection: [String] {
        ["-p", String(server.port)] + CLI.harnessArguments(server)
    }

    private func remote(_ path: String) -> String { "\(server.user)@\(server.host):\(path)" }

    private func write(_ text: String, _ path: String, append: Bool = false) throws {
        let handle = open(path, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0o644)
        guard handle >= 0 else { throw HarnessError(description: "cannot write \(path)") }
        defer { close(handle) }
        _ = text.withCString { Glibc.write(handle, $0, strlen($0)) }
        fchmod(handle, 0o644)
    }

    private func contents(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    /// Starts `files cat --follow` on `file`, its output and errors in files of the test's directory.
    private func follow(_ file: String, _ extra: [String] = []) throws -> (RunningCLI, out: String, err: String) {
        let out = directory + "/out-\(UUID().uuidString)"
        let err = directory + "/err-\(UUID().uuidString)"
        let running = try RunningCLI(
            ["files", "cat", "--follow"] + extra + [remote(file)] + connection, stdout: out, stderr: err)
        return (running, out, err)
    }

    @Test func followShowsTheLastLinesThenWhatIsAppendedAndEndsWhenTheFileIsTruncated() async throws {
        let log = directory + "/app.log"
        try write((1...30).map { "old \($0)\n" }.joined(), log)
        let (running, out, err) = try follow(log)
        defer { running.signal(SIGKILL) }
        try await waitUntil("the last 10 lines") { contents(out) == (21...30).map { "old \($0)\n" }.joined() }
        try write("new 1\n", log, append: true)
        try await waitUntil("the first appended line") { contents(out).hasSuffix("old 30\nnew 1\n") }
        // A line written in two pieces arrives whole, in order.
        try write("new 2 (first half", log, append: true)
        try await waitUntil("the first half") { contents(out).hasSuffix("new 2 (first half") }
        try write(", second half)\n", log, append: true)
        try await waitUntil("the second half") { contents(out).hasSuffix("new 2 (first half, second half)\n") }
        #expect(!running.hasExited)
        truncate(log, 0)
        try await waitUntil("the end of the run") { running.hasExited }
        #expect(running.wait() == 0)
        #expect(contents(err).contains("hostscope: note: "))
        #expect(contents(err).contains("\(log) was truncated"), "\(contents(err))")
        #expect(contents(err).contains("stopped following it"))
    }

    @Test func followEndsSayingSoWhenTheFileIsReplacedAsALogRotationDoes() async throws {
        let log = directory + "/rotated.log"
        try write("first\n", log)
        let (running, out, err) = try follow(log, ["--tail", "5"])
        defer { running.signal(SIGKILL) }
        try await waitUntil("the file's line") { contents(out) == "first\n" }
        try write("appended before the rotation\n", log, append: true)
        try await waitUntil("the appended line") { contents(out).hasSuffix("appended before the rotation\n") }
        // A rotation: the file keeps living under another name while a new, bigger file takes its name at once.
        try write(String(repeating: "a new file's line\n", count: 50), log + ".new")
        link(log, log + ".1")
        rename(log + ".new", log)
        try await waitUntil("the end of the run") { running.hasExited }
        #expect(running.wait() == 0)
        #expect(contents(err).contains("\(log) was replaced by another file"), "\(contents(err))")
        #expect(!contents(out).contains("a new file's line"), "nothing of the new file is shown as the old one's")
    }

    @Test func followEndsQuietlyOnCtrlCAndWhenTheFileIsRemoved() async throws {
        let log = directory + "/interrupted.log"
        try write("one\n", log)
        let (running, out, err) = try follow(log)
        defer { running.signal(SIGKILL) }
        try await waitUntil("the file's line") { contents(out) == "one\n" }
        running.signal(SIGINT)
        try await waitUntil("the end of the run") { running.hasExited }
        #expect(running.wait() == 0)
        #expect(contents(err).isEmpty, "\(contents(err))")

        let (removed, removedOut, removedErr) = try follow(log)
        defer { removed.signal(SIGKILL) }
        try await waitUntil("the file's line") { contents(removedOut) == "one\n" }
        unlink(log)
        try await waitUntil("the end of the run") { removed.hasExited }
        #expect(removed.wait() == 0)
        #expect(contents(removedErr).contains("\(log) was removed"), "\(contents(removedErr))")
    }

    @Test func followRefusesWhatItCannotFollow() throws {
        let head = try CLI.run(["files", "cat", "--follow", "--head", "3", remote(directory + "/x")] + connection)
        #expect(head.status == 64)
        #expect(head.stderr.contains("--follow starts at the end of the file"))
        let missing = try CLI.run(["files", "cat", "--follow", remote(directory + "/missing.log")] + connection)
        #expect(missing.status == 8)
        #expect(missing.stderr.contains("no such file"))
        let outside = try CLI.run(
            ["files", "cat", "--follow", "--root", directory, remote("/etc/hostname")] + connection)
        #expect(outside.status == 8)
        #expect(outside.stderr.contains("outside the workspace"))
    }

    // MARK: - get -r

    /// top/ with files, a hidden file, an empty directory, a nested tree, a link inside the tree, a link to a
    /// directory inside it, a link that climbs out, one to /etc, one to nowhere, and a FIFO.
    private func makeTree() throws -> String {
        let top = directory + "/top"
        let manager = FileManager.default
        try manager.createDirectory(atPath: top + "/src/deep", withIntermediateDirectories: true)
        try manager.createDirectory(atPath: top + "/empty", withIntermediateDirectories: true)
        try write("hello\n", top + "/hello.txt")
        try write("hidden\n", top + "/.env")
        try write("print('deep')\n", top + "/src/deep/app.py")
        let big = [UInt8]((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })
        try Data(big).write(to: URL(fileURLWithPath: top + "/src/big.bin"))
        chmod(top + "/src/big.bin", 0o640)
        try manager.createSymbolicLink(atPath: top + "/src/readme", withDestinationPath: "../hello.txt")
        try manager.createSymbolicLink(atPath: top + "/deep-link", withDestinationPath: top + "/src/deep")
        try manager.createSymbolicLink(atPath: top + "/climb", withDestinationPath: "../outside-secret.txt")
        try manager.createSymbolicLink(atPath: top + "/etc", withDestinationPath: "/etc")
        try manager.createSymbolicLink(atPath: top + "/nowhere", withDestinationPath: "missing")
        try write("outside the tree\n", directory + "/outside-secret.txt")
        mkfifo(top + "/pipe", 0o644)
        _ = system("chmod -R a+rX \(CLI.shellQuoted(top))")
        chmod(top + "/src/big.bin", 0o644)
        return top
    }

    @Test func getDashRCopiesATreeMakesLinksInsideItAgainAndSkipsThoseThatLeadOut() throws {
        let top = try makeTree()
        // As rsync -r places it: under the tree's name in the destination, which is created.
        let local = directory + "/copy/top"
        let result = try CLI.run(["files", "get", "-r", remote(top), directory + "/copy"] + connection)
        #expect(result.status == 0, "\(result.stderr)")
        let manager = FileManager.default
        #expect(contents(local + "/hello.txt") == "hello\n")
        #expect(contents(local + "/.env") == "hidden\n")
        #expect(contents(local + "/src/deep/app.py") == "print('deep')\n")
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: local + "/src/big.bin"))
                == Data(contentsOf: URL(fileURLWithPath: top + "/src/big.bin")))
        var isDirectory: ObjCBool = false
        #expect(manager.fileExists(atPath: local + "/empty", isDirectory: &isDirectory) && isDirectory.boolValue)
        // Links inside the tree are relative links to the same place in the copy.
        #expect(try manager.destinationOfSymbolicLink(atPath: local + "/src/readme") == "../hello.txt")
        #expect(try manager.destinationOfSymbolicLink(atPath: local + "/deep-link") == "src/deep")
        #expect(contents(local + "/deep-link/app.py") == "print('deep')\n")
        // Links out of the tree, to nowhere, and the FIFO are not copied, and each is named on stderr.
        for name in ["climb", "etc", "nowhere", "pipe"] {
            #expect((try? manager.attributesOfItem(atPath: local + "/" + name)) == nil, "\(name)")
        }
        #expect(!result.stdout.contains("outside the tree") && !result.stderr.contains("outside the tree\n"))
        #expect(
            result.stderr.contains(
                "warning: skipped \(top)/climb: a symbolic link to ../outside-secret.txt, which leads out of the tree"))
        #expect(
            result.stderr.contains("warning: skipped \(top)/etc: a symbolic link to /etc, which leads out of the tree"))
        #expect(
            result.stderr.contains("warning: skipped \(top)/nowhere: a symbolic link to missing, which leads nowhere"))
        #expect(result.stderr.contains("warning: skipped \(top)/pipe: a fifo, not a regular file"))
        #expect(result.stdout.contains("\(local)/src/big.bin: 3145728 bytes, sha256 "))
        #expect(
            result.stdout.hasSuffix("\(local): 4 file(s) downloaded (3.0 MiB), 4 directories, 2 link(s), 4 skipped\n"),
            "\(result.stdout)")
        // Modes as sftp gives them, and the remote modification times.
        let attributes = try manager.attributesOfItem(atPath: local + "/src/big.bin")
        let remoteAttributes = try manager.attributesOfItem(atPath: top + "/src/big.bin")
        #expect(
            (attributes[.modificationDate] as? Date)
                == (remoteAttributes[.modificationDate] as? Date).map {
                    Date(timeIntervalSince1970: $0.timeIntervalSince1970.rounded(.down))
                })

        // Run again: nothing is downloaded twice.
        let again = try CLI.run(["files", "get", "-r", "--json", remote(top), directory + "/copy"] + connection)
        #expect(again.status == 0, "\(again.stderr)")
        let summary = try JSONParser.parse(again.stdout)
        #expect(summary["downloaded"] == 0)
        #expect(summary["unchanged"] == 4)
        #expect(summary["links"] == 2)
        #expect(summary["local_root"]?.stringValue == local)

        // With a slash after the tree, its contents go into the destination itself; a link that left the
        // copied tree (src/readme -> ../hello.txt) is skipped there.
        let into = directory + "/into"
        let contentsOnly = try CLI.run(["files", "get", "-r", "-q", remote(top + "/src/"), into] + connection)
        #expect(contentsOnly.status == 0, "\(contentsOnly.stderr)")
        #expect(contents(into + "/deep/app.py") == "print('deep')\n")
        #expect(contentsOnly.stderr.contains("readme: a symbolic link to ../hello.txt, which leads out of the tree"))
    }

    @Test func getDashRUnderARootRefusesWhatLeadsOutOfTheRootAndNeverWritesThroughALocalLink() throws {
        let top = try makeTree()
        let outside = try CLI.run(
            ["files", "get", "-r", "--root", top + "/src", remote(top), directory + "/x"] + connection)
        #expect(outside.status == 8)
        #expect(outside.stderr.contains("outside the workspace"))
        // Within the root, the link to the root's parent leads out of the root and is skipped.
        let confined = try CLI.run(
            ["files", "get", "-r", "--root", top + "/src", remote("."), directory + "/confined"] + connection)
        #expect(confined.status == 0, "\(confined.stderr)")
        #expect(
            confined.stderr.contains("skipped readme: a symbolic link to ../hello.txt, which leads out of the tree"))
        #expect(contents(directory + "/confined/src/deep/app.py") == "print('deep')\n")
        // A link left where the copy puts a directory is never written through.
        let trap = directory + "/trap"
        let victim = directory + "/victim"
        // An earlier copy's directory, where someone put a link in place of src/.
        try FileManager.default.createDirectory(atPath: trap + "/top", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: victim, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: trap + "/top/src", withDestinationPath: victim)
        let trapped = try CLI.run(["files", "get", "-r", remote(top), trap] + connection)
        #expect(trapped.status == 8)
        #expect(trapped.stderr.contains("\(trap)/top/src: something that is not a directory is there"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: victim).isEmpty)
        #expect(contents(trap + "/top/hello.txt") == "hello\n", "the rest of the tree is still copied")
    }

    @Test func getDashRToStandardOutputIsRefused() throws {
        let result = try CLI.run(["files", "get", "-r", remote(directory), "-"] + connection)
        #expect(result.status == 64)
        #expect(result.stderr.contains("get -r writes a directory tree"))
    }

    // MARK: - Interrupted downloads

    @Test func anInterruptedDownloadSaysWhatWasKeptAndTheSameCommandResumesIt() async throws {
        // A sparse gibibyte: seconds to download over loopback, so the interruption comes well before the end.
        let source = directory + "/large.bin"
        let size = 1 << 30
        let descriptor = open(source, O_CREAT | O_WRONLY | O_TRUNC, 0o644)
        ftruncate(descriptor, off_t(size))
        close(descriptor)
        let local = directory + "/large-copy.bin"
        let partial = directory + "/.large-copy.bin.hostscope-partial"
        let err = directory + "/get-err"
        let running = try RunningCLI(["files", "get", remote(source), local] + connection, stderr: err)
        defer { running.signal(SIGKILL) }
        try await waitUntil("part of the download") {
            ((try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int) ?? 0) > 1 << 20
        }
        running.signal(SIGINT)
        try await waitUntil("the end of the run") { running.hasExited }
        #expect(running.wait() == 130)
        let kept = try #require(try FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int)
        #expect(kept > 0 && kept < size)
        #expect(!FileManager.default.fileExists(atPath: local))
        let lines = contents(err).split(separator: "\n")
        #expect(lines == ["partial kept: \(partial) (\(kept) of \(size) bytes); run the same command again to resume"])

        let resumed = try CLI.run(["files", "get", "--json", remote(source), local] + connection)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(try JSONParser.parse(resumed.stdout)["resumed_from"]?.int64Value == Int64(kept))
        #expect(try FileManager.default.attributesOfItem(atPath: local)[.size] as? Int == size)
        #expect(!FileManager.default.fileExists(atPath: partial))
        unlink(source)
        unlink(local)
    }
}
