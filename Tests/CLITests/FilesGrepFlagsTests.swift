import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `files grep`'s -v -c -l -A -B -C -m (with -r, -i, -F) and `files ls -h --classify`, each against what GNU grep
/// and GNU ls print for the same files, read here directly and by hostscope through the real sshd.
@Suite(.serialized) struct FilesGrepFlagsTests {
    let server: SSHTestServer
    let root: String

    private static let sharedRoot = Result { () throws -> String in
        let root = NSTemporaryDirectory() + "hostscope-grep-flags-\(UUID().uuidString)"
        let files: [(String, String)] = [
            ("t.log", "a\na\nb\nc\na\nd\ne\nf\na\n"),
            ("mixed.txt", "ERROR one\nok\nWarn two\n\nerror (three)\nlast a+b line\nerror.4"),
            ("sub/deep.txt", "nothing here\nan a here\n"),
            ("sub/.hidden", "a hidden a\n"),
            ("sub/none.txt", "zzz\n"),
            ("empty.txt", ""),
            ("sub/more/long.txt", (1...40).map { $0 % 9 == 0 ? "match \($0)\n" : "line \($0)\n" }.joined()),
        ]
        for (path, text) in files {
            let full = root + "/" + path
            try FileManager.default.createDirectory(
                atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: full, atomically: false, encoding: .utf8)
        }
        try Data([0x61, 0x00, 0x62, 0x0A, 0x61, 0x0A]).write(to: URL(fileURLWithPath: root + "/sub/binary.bin"))
        // Sizes across ls -h's boundaries, sparse.
        for size in [0, 1023, 1024, 1025, 10_240, 10_241, 1_048_576, 5_000_000_000] {
            let descriptor = open(root + "/size-\(size)", O_CREAT | O_WRONLY, 0o644)
            ftruncate(descriptor, off_t(size))
            close(descriptor)
        }
        try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: "t.log")
        mkfifo(root + "/fifo", 0o644)
        try "#!/bin/sh\n".write(toFile: root + "/run.sh", atomically: false, encoding: .utf8)
        _ = system("chmod -R a+rX \(CLI.shellQuoted(root)) && chmod 755 \(CLI.shellQuoted(root + "/run.sh"))")
        FilesTestTree.removeAtExit(root)
        return root
    }

    init() throws {
        server = try SSHTestServer.shared()
        root = try Self.sharedRoot.get()
    }

    private func hostscope(_ arguments: [String]) throws -> CLIResult {
        try CLI.run(
            ["files"] + arguments + [
                "-p", String(server.port), "--identity", server.keyPath, "--known-hosts",
                server.knownHostsPath,
            ])
    }

    /// GNU's own output for the same files, in the C locale.
    private func gnu(_ words: [String]) throws -> CLIResult {
        try CLI.runShell("LC_ALL=C " + words.map(CLI.shellQuoted).joined(separator: " "))
    }

    private func remote(_ path: String) -> String { "\(server.user)@\(server.host):\(path)" }

    static let flagSets: [[String]] = [
        [], ["-v"], ["-c"], ["-l"], ["-c", "-v"], ["-l", "-v"], ["-A", "1"], ["-B", "2"], ["-A", "0"], ["-C", "1"],
        ["-m", "2", "-A", "3"], ["-m", "1", "-B", "3", "-A", "1"], ["-v", "-B", "1"], ["-v", "-m", "3", "-A", "1"],
        ["-i", "-c"], ["-i", "-A", "1", "-B", "1"], ["-m", "1", "-c"], ["-l", "-c"],
    ]

    @Test(arguments: flagSets)
    func aFileSearchedWithTheseFlagsPrintsWhatGNUGrepPrints(_ flags: [String]) throws {
        for (pattern, file) in [("a", "t.log"), ("error", "mixed.txt"), ("match", "sub/more/long.txt")] {
            let path = root + "/" + file
            let ours = try hostscope(["grep"] + flags + [pattern, remote(path)])
            let theirs = try gnu(["grep", "-H", "-n", "-I"] + flags + [pattern, path])
            #expect(ours.stdout == theirs.stdout, "grep \(flags) \(pattern) \(file)")
            #expect(ours.status == theirs.status, "grep \(flags) \(pattern) \(file): \(ours.stderr)")
        }
    }

    @Test(arguments: [["-F"], ["-F", "-v", "-c"], ["-F", "-A", "1"], ["-F", "-i", "-l"]])
    func fixedStringsCombineWithTheOtherFlagsAsInGNUGrep(_ flags: [String]) throws {
        let path = root + "/mixed.txt"
        for pattern in ["(three)", "a+b", "error.4", "ERROR"] {
            let ours = try hostscope(["grep"] + flags + [pattern, remote(path)])
            let theirs = try gnu(["grep", "-H", "-n", "-I"] + flags + [pattern, path])
            #expect(ours.stdout == theirs.stdout, "grep \(flags) \(pattern)")
            #expect(ours.status == theirs.status)
        }
    }

    /// GNU grep -r visits a directory in the order readdir gives, hostscope by name: the lines of -c, -l and -v
    /// are compared as sets, and context output file by file.
    @Test(arguments: [["-c"], ["-l"], ["-v"], ["-c", "-v"], ["-l", "-v"], ["-i", "-c"], ["-m", "1"]])
    func aRecursiveSearchSelectsWhatGNUGrepSelects(_ flags: [String]) throws {
        let ours = try hostscope(["grep", "-r"] + flags + ["a", remote(root)])
        let theirs = try gnu(["grep", "-r", "-H", "-n", "-I"] + flags + ["a", root])
        // GNU grep -r leaves the FIFO alone too, but names it on stderr; neither lists it.
        #expect(Set(ours.stdout.split(separator: "\n")) == Set(theirs.stdout.split(separator: "\n")), "\(flags)")
        #expect(ours.stdout.split(separator: "\n").count == theirs.stdout.split(separator: "\n").count)
        #expect(ours.status == 0)
    }

    @Test func recursiveContextIsGroupedAndSeparatedAsGNUGrepDoesFileByFile() throws {
        let ours = try hostscope(["grep", "-r", "-A", "1", "-B", "1", "a", remote(root + "/sub")])
        // GNU's output per file, in hostscope's order, with the separator GNU prints between files.
        var expected: [String] = []
        for file in [".hidden", "deep.txt", "more/long.txt", "none.txt"] {
            let one = try gnu(["grep", "-H", "-n", "-I", "-A", "1", "-B", "1", "a", root + "/sub/" + file])
            if !one.stdout.isEmpty { expected.append(one.stdout) }
        }
        #expect(ours.stdout == expected.joined(separator: "--\n"))
    }

    @Test func contextAndCountsAreRefusedWhenNegativeAndLWithoutAMatchExitsOne() throws {
        let negative = try hostscope(["grep", "--after-context=-1", "a", remote(root + "/t.log")])
        #expect(negative.status == 64)
        #expect(negative.stderr.contains("-A must be 0 or more"))
        let nothing = try hostscope(["grep", "-l", "zzzz", remote(root + "/t.log")])
        #expect(nothing.status == 1)
        #expect(nothing.stdout.isEmpty)
        let user = try hostscope(["grep", "-c", "--user", server.user, "a", "\(server.host):\(root)/t.log"])
        #expect(user.stdout == "\(root)/t.log:4\n", "\(user.stderr)")
    }

    @Test func lsDashLHShowsSizesAsGNULsDashLHDoes() throws {
        let ours = try hostscope(["ls", "-l", "-h", remote(root)])
        #expect(ours.status == 0, "\(ours.stderr)")
        let theirs = try gnu(["ls", "-l", "-h", "-n", root])
        func sizes(_ text: String, sizeField: Int, nameField: Int) -> [String: String] {
            var result: [String: String] = [:]
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > nameField, fields[nameField].hasPrefix("size-") else { continue }
                result[String(fields[nameField])] = String(fields[sizeField])
            }
            return result
        }
        // Ours: mode owner group size time name; GNU -n: mode links uid gid size month day time name.
        let mine = sizes(ours.stdout, sizeField: 3, nameField: 5)
        #expect(mine.count == 8)
        #expect(mine == sizes(theirs.stdout, sizeField: 4, nameField: 8))
        #expect(mine["size-1025"] == "1.1K" && mine["size-5000000000"] == "4.7G")
        // The long form run together, as ls users type it.
        #expect(try hostscope(["ls", "-lh", remote(root)]).stdout == ours.stdout)
        // -h is no longer help here; --help still is.
        #expect(try hostscope(["ls", "--help"]).stdout.contains("--human-readable"))
    }

    @Test func classifyMarksNamesAsGNULsDashFDoes() throws {
        let ours = try hostscope(["ls", "--classify", remote(root)])
        #expect(ours.status == 0, "\(ours.stderr)")
        let theirs = try gnu(["ls", "-F", root])
        #expect(ours.stdout == theirs.stdout)
        #expect(ours.stdout.contains("sub/\n") && ours.stdout.contains("link@\n") && ours.stdout.contains("fifo|\n"))
        #expect(ours.stdout.contains("run.sh*\n"))
        let long = try hostscope(["ls", "-l", "--classify", remote(root)])
        let lines = long.stdout.split(separator: "\n")
        #expect(lines.contains { $0.hasSuffix(" sub/") })
        #expect(lines.contains { $0.hasSuffix(" link -> t.log") }, "a link shows its target, as ls -lF")
        #expect(lines.contains { $0.hasSuffix(" run.sh*") })
    }
}
