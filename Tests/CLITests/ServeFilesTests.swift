import Foundation
import OrderedJSON
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `/api/v1/files…` of a real `serve` watching the harness sshd: the files under `--files-root` listed, previewed,
/// searched and downloaded over SFTP, and every bad input answered with its status and one sentence.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ServeFilesTests {
    let server: SSHTestServer
    let directory: String
    let config: String
    /// The root allowed: files made here are on the harness host (the sshd runs on this machine).
    let root: String

    init() throws {
        server = try SSHTestServer.shared()
        directory = NSTemporaryDirectory() + "hostscope-serve-files-\(UUID().uuidString)"
        root = directory + "/workspace"
        try FileManager.default.createDirectory(atPath: root + "/logs", withIntermediateDirectories: true)
        config = directory + "/ssh_config"
        try server.configBlock("h1").write(toFile: config, atomically: true, encoding: .utf8)
        let lines = (1...300).map { $0 == 120 ? "the needle is here" : "line \($0)" }.joined(separator: "\n") + "\n"
        try lines.write(toFile: root + "/logs/app.log", atomically: true, encoding: .utf8)
        try "<script>window.x=1</script>\u{1b}[31mred\u{1b}[0m\n".write(
            toFile: root + "/hostile.txt", atomically: true, encoding: .utf8)
        try "inert\n".write(toFile: root + "/<img src=x onerror=alert(1)>", atomically: true, encoding: .utf8)
        try Data([0x7F, 0x45, 0x4C, 0x46, 0, 1, 2, 3] + [UInt8](repeating: 0, count: 600)).write(
            to: URL(fileURLWithPath: root + "/tool.bin"))
        try FileManager.default.createSymbolicLink(atPath: root + "/passwd-link", withDestinationPath: "/etc/passwd")
    }

    private func serve(roots: [String]) throws -> RunningServe {
        let serve = try RunningServe(
            ["h1", "--ssh-config", config, "--every", "30s", "--listen", "127.0.0.1:0"]
                + roots.flatMap { ["--files-root", $0] },
            directory: directory)
        try serve.waitUntilListening()
        return serve
    }

    private func query(_ values: [(String, String)]) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+?/")
        return values.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed)!)" }
            .joined(separator: "&")
    }

    private func get(_ serve: RunningServe, _ operation: String, _ values: [(String, String)]) throws -> (
        status: Int, json: JSONValue
    ) {
        let response = try serve.get("/api/v1/files/h1/\(operation)?" + query(values))
        return (response.status, try JSONParser.parse(response.body))
    }

    /// The status, code and sentence of a refusal.
    private func refusal(_ answer: (status: Int, json: JSONValue)) -> (Int, String, String) {
        let error = answer.json["error"]
        return (answer.status, error?["code"]?.stringValue ?? "", error?["message"]?.stringValue ?? "")
    }

    @Test func withoutAFilesRootEveryPathIsRefusedSayingHowToAllowOne() throws {
        let serve = try serve(roots: [])
        defer { _ = serve.stop() }
        let (status, code, message) = refusal(try get(serve, "list", [("path", root)]))
        #expect(status == 403 && code == "files_not_allowed")
        #expect(message.contains("--files-root"), "\(message)")
        let roots = try JSONParser.parse(try serve.get("/api/v1/files").body)
        #expect(roots["roots"]?.arrayValue?.isEmpty == true)
        #expect(roots["hosts"]?.arrayValue?.first?.stringValue == "h1")
    }

    @Test func aRelativeFilesRootIsRefusedAtStartAndAFleetFilesRootIsUsed() throws {
        let relative = try CLI.run(["serve", "h1", "--ssh-config", config, "--files-root", "logs", "--no-history"])
        #expect(relative.status != 0 && relative.stderr.contains("--files-root logs is not an absolute path"))
        let fleet = directory + "/fleet.yaml"
        try "groups: {all: {hosts: [h1]}}\nserve: {files_root: [\(root)/logs]}\n".write(
            toFile: fleet, atomically: true, encoding: .utf8)
        let serve = try RunningServe(
            ["--fleet", fleet, "--ssh-config", config, "--every", "30s", "--listen", "127.0.0.1:0"],
            directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        let roots = try JSONParser.parse(try serve.get("/api/v1/files").body)
        #expect(roots["roots"]?.arrayValue?.compactMap(\.stringValue) == [root + "/logs"])
        #expect(try get(serve, "stat", [("path", root + "/logs/app.log")]).status == 200)
    }

    @Test func aRootIsListedPreviewedSearchedAndDownloaded() throws {
        let serve = try serve(roots: [root])
        defer { _ = serve.stop() }
        let listing = try get(serve, "list", [("path", root)])
        #expect(listing.status == 200, "\(listing.json)")
        let names = listing.json["entries"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
        #expect(names.contains("<img src=x onerror=alert(1)>") && names.contains("logs") && names.contains("tool.bin"))
        #expect(listing.json["is_directory"]?.boolValue == true)

        let stat = try get(serve, "stat", [("path", root + "/logs/app.log")])
        #expect(stat.json["entry"]?["type"]?.stringValue == "file")

        let text = try get(serve, "preview", [("path", root + "/logs/app.log")])
        #expect(text.json["first_line"]?.doubleValue == 1 && text.json["binary"]?.boolValue == false)
        #expect(text.json["text"]?.stringValue?.hasPrefix("line 1\nline 2\n") == true)

        let hostile = try get(serve, "preview", [("path", root + "/hostile.txt")])
        #expect(hostile.json["text"]?.stringValue == "<script>window.x=1</script>\u{1b}[31mred\u{1b}[0m\n")

        let binary = try get(serve, "preview", [("path", root + "/tool.bin")])
        #expect(binary.json["binary"]?.boolValue == true && binary.json["text"] == .null)
        let hex = binary.json["hex"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(hex.first?.hasPrefix("00000000  7f 45 4c 46") == true && hex.count == 32, "\(hex.prefix(2))")

        let grep = try get(serve, "grep", [("path", root), ("pattern", "needle")])
        #expect(grep.status == 200 && grep.json["complete"]?.boolValue == true)
        let match = grep.json["matches"]?.arrayValue?.first
        #expect(match?["path"]?.stringValue == root + "/logs/app.log" && match?["line"]?.doubleValue == 120)
        #expect(match?["text"]?.stringValue == "the needle is here")

        // The line a match links to, with the lines around it and their numbers.
        let around = try get(serve, "preview", [("path", root + "/logs/app.log"), ("line", "120")])
        let first = around.json["first_line"]?.doubleValue ?? 0
        let shown = around.json["text"]?.stringValue?.split(separator: "\n") ?? []
        #expect(first == 20 && shown.count >= 120 - 20 + 1 && shown[120 - 20] == "the needle is here")

        let find = try get(serve, "find", [("path", root), ("name", "*.log")])
        #expect(find.json["entries"]?.arrayValue?.compactMap { $0["path"]?.stringValue } == [root + "/logs/app.log"])

        let download = try serve.get("/api/v1/files/h1/download?" + query([("path", root + "/logs/app.log")]))
        #expect(download.status == 200)
        #expect(download.headers["content-disposition"] == "attachment; filename=\"app.log\"; filename*=UTF-8''app.log")
        #expect(download.body == (try String(contentsOfFile: root + "/logs/app.log", encoding: .utf8)))
        let odd = try serve.get(
            "/api/v1/files/h1/download?" + query([("path", root + "/<img src=x onerror=alert(1)>")]))
        #expect(odd.status == 200 && odd.body == "inert\n")
        #expect(
            odd.headers["content-disposition"]?.hasPrefix("attachment; filename=\"<img src=x onerror=alert(1)>\"")
                == true)
    }

    @Test func pathsOutsideTheRootsAndNonRegularFilesAreRefusedWithASentence() throws {
        let serve = try serve(roots: [root + "/logs"])
        defer { _ = serve.stop() }
        for path in ["/etc/passwd", root + "/logs/../hostile.txt", root + "/logs/../../"] {
            let (status, code, message) = refusal(try get(serve, "preview", [("path", path)]))
            #expect(status == 403 && code == "outside_root", "\(path): \(code) \(message)")
            #expect(message.contains("outside"), "\(message)")
        }
        // A link inside the root that leads out of it: the server's realpath decides.
        try FileManager.default.createSymbolicLink(atPath: root + "/logs/escape", withDestinationPath: "/etc/passwd")
        let escaped = refusal(try get(serve, "preview", [("path", root + "/logs/escape")]))
        #expect(escaped.0 == 403 && escaped.1 == "outside_root", "\(escaped)")
        #expect(refusal(try get(serve, "list", [("path", "logs")])).1 == "invalid_argument")

        // A FIFO is refused before anything opens it, so nothing waits on it.
        #expect(mkfifo(root + "/logs/pipe", 0o644) == 0)
        let started = Date()
        let fifo = refusal(try get(serve, "preview", [("path", root + "/logs/pipe")]))
        #expect(fifo.0 == 400 && fifo.1 == "not_a_file" && fifo.2.contains("pipe"), "\(fifo)")
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(refusal(try get(serve, "download", [("path", root + "/logs/pipe")])).1 == "not_a_file")
        #expect(refusal(try get(serve, "follow", [("path", root + "/logs/pipe")])).1 == "not_a_file")

        // A file that vanished; and one that became a FIFO under the same name.
        let vanishing = root + "/logs/vanishing.txt"
        try "here\n".write(toFile: vanishing, atomically: true, encoding: .utf8)
        #expect(try get(serve, "preview", [("path", vanishing)]).status == 200)
        try FileManager.default.removeItem(atPath: vanishing)
        let gone = refusal(try get(serve, "preview", [("path", vanishing)]))
        #expect(gone.0 == 404 && gone.1 == "not_found" && gone.2.contains("vanishing.txt"), "\(gone)")
        #expect(mkfifo(vanishing, 0o644) == 0)
        #expect(refusal(try get(serve, "preview", [("path", vanishing)])).1 == "not_a_file")

        #expect(refusal(try get(serve, "preview", [("path", root + "/logs"), ("tail", "0")])).0 == 400)
        #expect(refusal(try get(serve, "grep", [("path", root + "/logs")])).2.contains("pattern"))
        #expect(try serve.get("/api/v1/files/nohost/list?path=/").status == 404)
    }

    @Test func aGigabyteFileIsTailedFastAndBoundedAndATenThousandEntryDirectoryIsPaged() throws {
        let big = root + "/logs/big.log"
        #expect(FileManager.default.createFile(atPath: big, contents: nil))
        let handle = try FileHandle(forWritingAtPath: big).unwrap()
        try handle.truncate(atOffset: 1 << 30)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("last but one\nthe last line\n".utf8))
        try handle.close()
        let many = root + "/many"
        try FileManager.default.createDirectory(atPath: many, withIntermediateDirectories: true)
        for index in 0..<10_000 { FileManager.default.createFile(atPath: many + "/f\(index)", contents: nil) }
        let serve = try serve(roots: [root])
        defer { _ = serve.stop() }

        let started = Date()
        let whole = try get(serve, "preview", [("path", big)])
        #expect(whole.status == 200 && whole.json["size"]?.doubleValue == Double((1 << 30) + 27))
        #expect((whole.json["length"]?.doubleValue ?? .infinity) <= 256 * 1024)
        let tail = try get(serve, "preview", [("path", big), ("tail", "1")])
        #expect(tail.json["offset"]?.doubleValue == Double((1 << 30) + 13))
        #expect(tail.json["length"]?.doubleValue == 14)
        #expect(Date().timeIntervalSince(started) < 10, "the previews of a 1 GiB file took too long")

        let page = try get(serve, "list", [("path", many)])
        #expect(page.json["total"]?.doubleValue == 10_000 && page.json["entries"]?.arrayValue?.count == 500)
        #expect(page.json["next_offset"]?.doubleValue == 500)
        let last = try get(serve, "list", [("path", many), ("offset", "9900"), ("limit", "1000")])
        #expect(last.json["entries"]?.arrayValue?.count == 100 && last.json["next_offset"] == .null)
        #expect(refusal(try get(serve, "list", [("path", many), ("limit", "5000")])).0 == 400)
    }

    @Test func aLineFarBeyondTheFirstMebibyteOpensWithItsNeighboursAndTheirNumbers() throws {
        // 50,000 lines of 64 bytes: 3.2 MB, so line 49,000 starts about 3 MB in.
        let long = root + "/logs/long.log"
        let text = (1...50_000).map { String(format: "line %06d ", $0) + String(repeating: "x", count: 51) + "\n" }
        try text.joined().write(toFile: long, atomically: true, encoding: .utf8)
        let serve = try serve(roots: [root])
        defer { _ = serve.stop() }

        let around = try get(serve, "preview", [("path", long), ("line", "49000")])
        #expect(around.status == 200)
        #expect(around.json["first_line"]?.doubleValue == 48_900)
        #expect(around.json["offset"]?.doubleValue == Double(48_899 * 64))
        #expect(around.json["truncated"] == .bool(false))
        let shown = around.json["text"]?.stringValue?.split(separator: "\n") ?? []
        #expect(shown.count == 201)
        #expect(shown.count > 100 && shown[100].hasPrefix("line 049000 "))
        #expect(shown.last?.hasPrefix("line 049100 ") == true)

        // The last line, and a line past the end: what there is, and nothing made up.
        let last = try get(serve, "preview", [("path", long), ("line", "50000")])
        #expect(last.json["text"]?.stringValue?.split(separator: "\n").last?.hasPrefix("line 050000 ") == true)
        let past = try get(serve, "preview", [("path", long), ("line", "60000")])
        #expect(past.status == 200 && past.json["text"]?.stringValue == "" && past.json["length"]?.doubleValue == 0)
    }

    @Test func aLiveTailSendsWhatIsAppendedEndsWhenTheFileGoesAndFreesItsSessionWhenTheClientLeaves() async throws {
        let log = root + "/logs/live.log"
        try "first\n".write(toFile: log, atomically: true, encoding: .utf8)
        let serve = try serve(roots: [root])
        defer { _ = serve.stop() }
        let output = directory + "/follow.out"
        let url = serve.url("/api/v1/files/h1/follow?" + query([("path", log)]))
        let curl = try Self.curl(url, to: output)
        defer { Self.stop(curl) }
        let read = { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
        try await waitUntil("the tail's first line") { read().contains("{\"text\":\"first\\n\"}") }
        let appending = try FileHandle(forWritingAtPath: log).unwrap()
        try appending.seekToEnd()
        try appending.write(contentsOf: Data("<b>appended</b>\n".utf8))
        try appending.close()
        try await waitUntil("the appended line") { read().contains("<b>appended</b>") }
        try FileManager.default.removeItem(atPath: log)
        try await waitUntil("the end of the tail") { read().contains("\"end\"") }
        #expect(read().contains("was removed"), "\(read())")

        // Four tails hold the host's four sessions: a fifth request waits its turn, and once the clients leave the
        // sessions are free again.
        try "again\n".write(toFile: log, atomically: true, encoding: .utf8)
        let tails = try (0..<4).map { try Self.curl(url, to: directory + "/tail\($0).out") }
        defer { tails.forEach(Self.stop) }
        try await waitUntil("four tails") {
            (0..<4).allSatisfy {
                ((try? String(contentsOfFile: directory + "/tail\($0).out", encoding: .utf8)) ?? "").contains("again")
            }
        }
        let busy = refusal(try get(serve, "stat", [("path", log)]))
        #expect(busy.0 == 429 && busy.1 == "files_busy", "\(busy)")
        tails.forEach(Self.stop)
        var last = ""
        try await waitUntil(timeout: .seconds(30), "the sessions freed (last: \(last))") {
            let answer = try get(serve, "stat", [("path", log)])
            last = "\(answer.status) \(answer.json)"
            return answer.status == 200
        }
    }

    /// SIGKILL: a child of the test process may inherit SIGTERM ignored.
    static func stop(_ process: Process) {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    static func curl(_ url: String, to path: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-sN", "--max-time", "120", "-o", path, url]
        try process.run()
        return process
    }
}

extension Optional {
    fileprivate func unwrap() throws -> Wrapped {
        guard let value = self else { throw HarnessError(description: "a file could not be opened") }
        return value
    }
}
