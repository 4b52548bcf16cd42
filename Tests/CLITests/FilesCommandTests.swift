import Foundation
import OrderedJSON
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `hostscope files` run as a program against the real sshd and real files.
@Suite(.serialized) struct FilesCommandTests {
    let server: SSHTestServer
    let tree: FilesTestTree

    private static let sharedTree = Result { try FilesTestTree(prefix: "hostscope-cli-files").removeAtExit() }

    init() throws {
        server = try SSHTestServer.shared()
        tree = try Self.sharedTree.get()
    }

    /// `user@127.0.0.1:PATH`.
    private func remote(_ path: String) -> String { "\(server.user)@\(server.host):\(path)" }

    /// Connection arguments; `files grep` spells the identity `--identity` (its `-i` is grep's).
    private func connection(_ arguments: [String]) -> [String] {
        let harness = CLI.harnessArguments(server).map { $0 == "-i" && arguments.first == "grep" ? "--identity" : $0 }
        return ["-p", String(server.port)] + harness
    }

    private func files(_ arguments: [String]) throws -> CLIResult {
        try CLI.run(["files"] + arguments + connection(arguments))
    }

    @Test func lsDashLIsTheLongListingAsInLs() throws {
        let short = try files(["ls", "-l", remote(tree.root)])
        #expect(short.status == 0, "\(short.stderr)")
        let long = try files(["ls", "--long", remote(tree.root)])
        #expect(short.stdout == long.stdout)
        #expect(short.stdout.split(separator: "\n").contains { $0.hasSuffix("link -> hello.txt") })
    }

    @Test func getToADashWritesTheFileToStandardOutputAndNoFileNamedDash() throws {
        let directory = NSTemporaryDirectory() + "hostscope-get-dash-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try CLI.runShell(
            "cd \(CLI.shellQuoted(directory)) && "
                + (["hostscope", "files", "get", remote(tree.root + "/hello.txt"), "-"] + connection(["get"]))
                .map(CLI.shellQuoted).joined(separator: " ").replacingOccurrences(
                    of: "'hostscope'", with: CLI.shellQuoted(CLI.binary)))
        #expect(result.status == 0, "\(result.stderr)")
        let expected = try String(contentsOfFile: tree.root + "/hello.txt", encoding: .utf8)
        #expect(result.stdout == expected)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    }

    @Test func lsPrintsEscapedNamesLongLinesAndJSON() throws {
        let plain = try files(["ls", remote(tree.root)])
        #expect(plain.status == 0, "\(plain.stderr)")
        let names = plain.stdout.split(separator: "\n").map(String.init)
        #expect(names.first == "Zed.txt")
        #expect(names.contains("caf\\xe9.txt"))
        #expect(!names.contains(".env"))
        #expect(try files(["ls", "--all", remote(tree.root)]).stdout.split(separator: "\n").contains(".env"))

        let long = try files(["ls", "--long", remote(tree.root)])
        #expect(long.stdout.contains { $0 == "\n" })
        let linkLine = try #require(long.stdout.split(separator: "\n").first { $0.hasSuffix("link -> hello.txt") })
        #expect(linkLine.hasPrefix("lrwxrwxrwx"))
        let helloLine = try #require(long.stdout.split(separator: "\n").first { $0.hasSuffix(" hello.txt") })
        #expect(helloLine.hasPrefix("-rw-r--r--"))
        #expect(helloLine.contains(" 12 "))

        let json = try files(["ls", "--json", remote(tree.root)])
        #expect(json.status == 0)
        let array = try #require(try JSONParser.parse(json.stdout).arrayValue)
        #expect(array.count == names.count)
        #expect(
            array[0].objectValue?.keys == [
                "name", "path", "type", "size", "mode", "uid", "gid", "mtime", "link_target",
            ])
        let link = try #require(array.first { $0["name"] == "link" })
        #expect(link["type"] == "symlink")
        #expect(link["link_target"] == "hello.txt")
        #expect(link["path"]?.stringValue == tree.root + "/link")
        let empty = try files(["ls", "--json", remote(tree.root + "/src/deep/deeper/x.py")])
        #expect(try JSONParser.parse(empty.stdout).arrayValue?.count == 1)
    }

    @Test func aNameThatIsNotUTF8IsListedInJSONThenCatByItsEscapedName() throws {
        let json = try files(["ls", "--json", remote(tree.root)])
        let array = try #require(try JSONParser.parse(json.stdout).arrayValue)
        let latin = try #require(array.first { $0["name_is_utf8"] == .bool(false) })
        let escaped = try #require(latin["name"]?.stringValue)
        #expect(escaped == "caf\\xe9.txt")
        #expect(
            latin["name_bytes_base64"]?.stringValue.flatMap { Data(base64Encoded: $0) }.map(Array.init)
                == FilesTestTree.latin1Name)
        let cat = try files(["cat", remote(tree.root + "/" + escaped)])
        #expect(cat.status == 0, "\(cat.stderr)")
        #expect(cat.stdout == "latin-1 needle\n")
        let path = try #require(latin["path"]?.stringValue)
        #expect(try files(["stat", "--json", remote(path)]).stdout.contains("\"size\": 15"))
    }

    @Test func treeDrawsTheHierarchyAndNestsJSON() throws {
        let text = try files(["tree", remote(tree.root + "/src")])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(
            text.stdout.hasPrefix(
                tree.root + "/src\n├── app.js\n├── app.py\n└── deep\n    ├── deeper\n    │   └── x.py\n"))
        #expect(text.stdout.contains("    └── up -> ../..\n"))
        #expect(text.stdout.hasSuffix("\n2 directories, 5 files\n"))

        let shallow = try files(["tree", "--depth", "2", "--json", remote(tree.root)])
        let json = try JSONParser.parse(shallow.stdout)
        #expect(json["type"] == "dir")
        let children = try #require(json["children"]?.arrayValue)
        let src = try #require(children.first { $0["name"] == "src" }?["children"]?.arrayValue)
        #expect(src.map { $0["name"] } == ["app.js", "app.py", "deep"])
        #expect(src.last?["children"] == nil)
        #expect(children.first { $0["name"] == "locked" }?["error"]?.stringValue?.contains("permission denied") == true)
    }

    @Test func statDescribesALinkAsTextAndJSON() throws {
        let text = try files(["stat", remote(tree.root + "/link")])
        #expect(text.stdout.contains("type:        symlink"))
        #expect(text.stdout.contains("link_target: hello.txt"))
        let json = try JSONParser.parse(try files(["stat", "--json", remote(tree.root + "/hello.txt")]).stdout)
        #expect(json["size"] == .uint(12) || json["size"] == .int(12))
        #expect(json["mode"] == "0644")
    }

    @Test func catShowsPartsAndSummarisesBinaryUnlessRaw() throws {
        #expect(try files(["cat", "--head", "2", remote(tree.root + "/numbered.log")]).stdout == "line 1\nline 2\n")
        #expect(try files(["cat", "--tail", "1", remote(tree.root + "/numbered.log")]).stdout == "line 1000\n")
        #expect(try files(["cat", "--bytes", "0-3", remote(tree.root + "/numbered.log")]).stdout == "line")

        let capped = try files(["cat", "--max-bytes", "10", remote(tree.root + "/numbered.log")])
        #expect(capped.stdout == "line 1\nlin")
        #expect(capped.stderr.contains("--max-bytes"))
        #expect(capped.stderr.contains("files get"))

        let binary = try files(["cat", remote(tree.root + "/image.png")])
        #expect(binary.status == 0)
        #expect(binary.stdout.contains("binary, 212 bytes, looks like PNG image"))
        #expect(binary.stdout.contains("00000000  89 50 4e 47 0d 0a 1a 0a"))
        let raw = try CLI.runShell(
            "'\(CLI.binary)' files cat --raw '\(remote(tree.root + "/image.png"))' -p \(server.port) -i '\(server.keyPath)' --known-hosts '\(server.knownHostsPath)' | cmp - '\(tree.root)/image.png' && echo same"
        )
        #expect(raw.stdout == "same\n", "\(raw.stderr)")

        let twoOptions = try files(["cat", "--head", "1", "--tail", "1", remote(tree.root + "/numbered.log")])
        #expect(twoOptions.status != 0)
    }

    /// Runs `hostscope files ARGUMENTS` with a real terminal (from `script`) as its standard output.
    private func filesOnTerminal(_ arguments: [String]) throws -> CLIResult {
        try CLI.runOnTerminal(["files"] + arguments + connection(arguments))
    }

    @Test func onATerminalEscapeSequencesAreShownEscaped() throws {
        try "needle \u{1B}[2J\u{1B}]0;title\u{07} end\n".write(
            toFile: tree.root + "/odd/terminal.txt", atomically: false, encoding: .utf8)
        chmod(tree.root + "/odd/terminal.txt", 0o644)
        let content = try filesOnTerminal(["cat", remote(tree.root + "/odd/terminal.txt")])
        #expect(content.stdout.contains("needle \\e[2J\\e]0;title\\x07 end"), "\(content.stdout)")
        #expect(!content.stdout.contains("\u{1B}"))
        let listing = try filesOnTerminal(["ls", remote(tree.root + "/odd")])
        #expect(listing.stdout.contains("esc\\x1b[31mred"))
        #expect(listing.stdout.contains("new\\nline"))
        #expect(!listing.stdout.contains("\u{1B}"))
        let grep = try filesOnTerminal(["grep", "-r", "needle", remote(tree.root + "/odd")])
        #expect(grep.stdout.contains("/odd/esc\\x1b[31mred:1:needle"))
        #expect(!grep.stdout.contains("\u{1B}"))
        // Piped, contents stay as they are (names are always escaped).
        #expect(try files(["cat", remote(tree.root + "/odd/terminal.txt")]).stdout.contains("\u{1B}[2J"))
    }

    @Test func grepPrintsPathLineTextAndExitsLikeGrep() throws {
        let result = try files(["grep", "-r", "-i", "--glob", "*.py", "needle", remote(tree.root + "/src")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout == """
                \(tree.root)/src/app.py:1:print('needle')
                \(tree.root)/src/app.py:2:NEEDLE = 1
                \(tree.root)/src/deep/deeper/x.py:1:deep needle

                """)
        let limited = try files(["grep", "-i", "--max-count", "1", "needle", remote(tree.root + "/src/app.py")])
        #expect(limited.stdout == "\(tree.root)/src/app.py:1:print('needle')\n")
        let fixed = try files(["grep", "-F", "line 1.", remote(tree.root + "/numbered.log")])
        #expect(fixed.status == 1)
        #expect(fixed.stdout.isEmpty)
        let none = try files(["grep", "absent-text", remote(tree.root + "/hello.txt")])
        #expect(none.status == 1)
        let directory = try files(["grep", "needle", remote(tree.root + "/src")])
        #expect(directory.status == 8)
        #expect(directory.stderr.contains("add -r"))
    }

    @Test func hostileNamesAndPatternsAreOnlyData() throws {
        let markers = FilesTestTree.pwnedMarkers(home: server.home)
        for marker in markers { unlink(marker) }
        let result = try files(["grep", "-r", "needle", remote(tree.root + "/odd")])
        #expect(result.status == 0, "\(result.stderr)")
        let escaped = [
            "$(touch hostscope-pwned)", "; rm -rf ~", "-rf", "--", "new\\nline", "quote'\"s", "back\\\\slash",
            "`touch hostscope-pwned`", "esc\\x1b[31mred",
        ]
        #expect(escaped.count == FilesTestTree.hostileNames.count)
        for name in escaped {
            #expect(result.stdout.contains(tree.root + "/odd/" + name + ":1:needle\n"), "\(name)")
        }
        #expect(result.stdout.contains(tree.root + "/" + FilesTestTree.hostilePath + ":1:needle"))
        for pattern in ["-rf", "--", "$(touch /tmp/hostscope-pwned)", "; rm -rf ~", "`touch hostscope-pwned`"] {
            _ = try files(["grep", "-r", "--", pattern, remote(tree.root + "/odd")])
        }
        for name in ["-rf", "--", "; rm -rf ~", "$(touch hostscope-pwned)", "quote'\"s", "back\\\\slash", "new\\nline"]
        {
            let cat = try files(["cat", remote(tree.root + "/odd/" + name)])
            #expect(cat.stdout == "needle\n", "\(name): \(cat.stderr)")
        }
        let nested = try files(["cat", remote(tree.root + "/" + FilesTestTree.hostilePath)])
        #expect(nested.stdout == "needle\n")
        let local = NSTemporaryDirectory() + "hostscope-cli-odd-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: local, withIntermediateDirectories: true)
        FilesTestTree.removeAtExit(local)
        #expect(try files(["get", remote(tree.root + "/odd/; rm -rf ~"), local]).status == 0)
        #expect(FileManager.default.fileExists(atPath: local + "/; rm -rf ~"))
        for marker in markers { #expect(access(marker, F_OK) != 0, "\(marker)") }
    }

    @Test func getShowsAProgressLineOnATerminalOnly() throws {
        let source = try tree.makeRandomFile("progress.bin", size: 24 << 20)
        let local = NSTemporaryDirectory() + "hostscope-cli-progress-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: local, withIntermediateDirectories: true)
        FilesTestTree.removeAtExit(local)
        func quoted(_ words: [String]) -> String { words.map(CLI.shellQuoted).joined(separator: " ") }
        // stderr on a pseudo-terminal (script's), stdout into a file.
        func onTerminal(_ extra: [String], _ name: String) throws -> String {
            let command =
                quoted([CLI.binary, "files", "get", "--no-resume"] + extra + [remote(source), local + "/" + name])
                + " " + quoted(connection(["get"])) + " > " + quoted([local + "/" + name + ".out"])
            let result = try CLI.runShell("script -qec \(quoted([command])) /dev/null")
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            return result.stdout
        }
        let terminal = try onTerminal([], "shown.bin")
        #expect(terminal.contains("progress.bin  100%  24.0 MiB of 24.0 MiB"))
        // The line is redrawn in place and cleared before the result is printed.
        #expect(terminal.contains("\r") && terminal.hasSuffix("\r\u{1B}[K"))
        let result = try String(contentsOfFile: local + "/shown.bin.out", encoding: .utf8)
        #expect(result.hasPrefix(local + "/shown.bin: 25165824 bytes, sha256 "))
        #expect(!(try onTerminal(["--quiet"], "quiet.bin")).contains("%"))
        // A pipe gets no progress line.
        let piped = try files(["get", "--no-resume", remote(source), local + "/piped.bin"])
        #expect(piped.status == 0 && piped.stderr.isEmpty)
    }

    @Test func findSelectsByNameAndAgeAsTextAndJSON() throws {
        let found = try files(["find", remote(tree.root + "/src"), "--name", "*.py"])
        #expect(found.stdout == "\(tree.root)/src/app.py\n\(tree.root)/src/deep/deeper/x.py\n")
        let recent = try files(["find", remote(tree.root + "/src"), "--newer", "1h", "--type", "f"])
        #expect(recent.stdout.contains("app.js"))
        let json = try JSONParser.parse(
            try files(["find", remote(tree.root + "/src"), "--name", "*.md", "--json"]).stdout)
        #expect(json.arrayValue?.map { $0["name"] } == ["notes.md"])
        let problems = try files(["find", remote(tree.root), "--name", "nothing"])
        #expect(problems.status == 8)
        #expect(problems.stderr.contains("permission denied"))
    }

    @Test func getDownloadsReportsTheChecksumAndResumesAfterAKill() throws {
        let source = try FilesTestTree(prefix: "hostscope-cli-get")
        let path = try source.makeRandomFile("big.bin", size: 96 << 20)
        let expected = try Self.sha256(path)
        let local = NSTemporaryDirectory() + "hostscope-cli-get-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: local, withIntermediateDirectories: true)
        FilesTestTree.removeAtExit(local)
        let final = local + "/big.bin"
        let partial = local + "/.big.bin.hostscope-partial"

        // Kill the program once the partial file has grown: nothing may appear under the final name.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments =
            ["files", "get", remote(path), local, "-p", String(server.port)] + CLI.harnessArguments(server)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let size = (try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? UInt64) ?? 0
            if size > 1 << 20 { break }
            usleep(2000)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(!FileManager.default.fileExists(atPath: final))
        let kept = (try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? UInt64) ?? 0
        #expect(kept > 0)

        let resumed = try files(["get", "--json", remote(path), local])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let json = try JSONParser.parse(resumed.stdout)
        #expect(json["sha256"]?.stringValue == expected)
        #expect(json["local_path"]?.stringValue == final)
        #expect((json["resumed_from"]?.int64Value ?? 0) > 0)
        #expect(try Self.sha256(final) == expected)
        #expect(!FileManager.default.fileExists(atPath: partial))

        let text = try files(["get", remote(tree.root + "/hello.txt"), local + "/greeting.txt"])
        #expect(text.stdout.hasPrefix("\(local)/greeting.txt: 12 bytes, sha256 "))
        let unhashed = try files([
            "get", "--json", "--no-checksum", remote(tree.root + "/hello.txt"), local + "/plain.txt",
        ])
        #expect(try JSONParser.parse(unhashed.stdout)["sha256"] == .null)
        #expect(try String(contentsOfFile: local + "/plain.txt", encoding: .utf8) == "hello\nworld\n")
        source.remove()
    }

    @Test func failuresAreOneSentenceWithTheirExitStatus() throws {
        let missing = try files(["cat", remote(tree.root + "/nope.txt")])
        #expect(missing.status == 8)
        #expect(missing.stderr.hasPrefix("hostscope: "))
        #expect(missing.stderr.contains(tree.root + "/nope.txt"))
        #expect(missing.stderr.contains("\(server.user)@\(server.host)"))
        #expect(missing.stderr.split(separator: "\n").count == 1)

        let denied = try files(["cat", remote(tree.root + "/forbidden.txt")])
        #expect(denied.status == 8)
        #expect(denied.stderr.contains("permission denied"))

        let loop = try files(["cat", remote(tree.root + "/loop-a")])
        #expect(loop.status == 8)
        #expect(loop.stderr.contains("symbolic link loop"))

        let escape = try files(["cat", "--root", tree.root + "/src", remote("../hello.txt")])
        #expect(escape.status == 8)
        #expect(escape.stderr.contains("outside the workspace \(tree.root)/src"))
        let linkOut = try files(["ls", "--root", tree.root, remote("outside")])
        #expect(linkOut.status == 8)
        #expect(linkOut.stderr.contains("resolves to /etc"))
        let inside = try files(["cat", "--root", tree.root, remote("src/app.js")])
        #expect(inside.stdout == "needle in js\n")

        let local = try CLI.run(["files", "ls", "/tmp"])
        #expect(local.status == 64)
        #expect(local.stderr.contains("HOST:PATH"))

        let refused = try CLI.run(
            ["files", "ls", "\(server.user)@127.0.0.1:/tmp", "-p", "1"] + CLI.harnessArguments(server))
        #expect(refused.status == 3)
    }

    private static func sha256(_ path: String) throws -> String {
        let result = try CLI.runShell("sha256sum '\(path)'")
        return String(result.stdout.prefix(64))
    }
}
