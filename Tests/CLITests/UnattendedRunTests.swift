import Foundation
import OrderedJSON
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs nobody attends never wait for a person: no prompt in a watch or a multi-host snapshot, a closed
/// standard output ends a watch, and a chat that cannot work says so before it sends anything.
@Suite(.serialized, .timeLimit(.minutes(5))) struct UnattendedRunTests {
    static func temporaryDatabase() -> String {
        NSTemporaryDirectory() + "hostscope-unattended-\(UUID().uuidString).sqlite"
    }

    static func remove(_ database: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
    }

    @Test func aWatchWithALockedKeyOnATerminalWritesAuthErrorRecordsInsteadOfPrompting() throws {
        let server = try SSHTestServer.shared()
        let database = Self.temporaryDatabase()
        defer { Self.remove(database) }
        let output = NSTemporaryDirectory() + "hostscope-unattended-\(UUID().uuidString).ndjson"
        defer { unlink(output) }
        // The passphrase-protected key with no variable to read the passphrase from: an attended run would ask.
        let line =
            ([
                CLI.binary, "watch", server.target, "-i", server.encryptedKeyPath, "--known-hosts",
                server.knownHostsPath, "--every", "300ms", "--count", "3", "--output", output, "--db", database,
            ])
            .map(CLI.shellQuoted).joined(separator: " ")
        let script = NSTemporaryDirectory() + "hostscope-tty-\(UUID().uuidString).sh"
        try ("timeout 30 " + line + "; echo \"status $?\"\n").write(toFile: script, atomically: true, encoding: .utf8)
        defer { unlink(script) }
        let result = try CLI.runShell("script -qec 'sh \(script)' /dev/null </dev/null")
        #expect(!result.stdout.contains("passphrase"), "\(result.stdout)")
        #expect(result.stdout.contains("status 0"), "\(result.stdout)")
        let records = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n")
            .map { try JSONParser.parse(String($0)) }
        #expect(records.count == 3)
        #expect(records.allSatisfy { $0["error"]?["kind"]?.stringValue == "auth" })
    }

    @Test func aWatchWhoseReaderClosesEndsCleanlyAndKeepsWhatItCollected() throws {
        let database = Self.temporaryDatabase()
        defer { Self.remove(database) }
        let watch = [CLI.binary, "watch", "local", "--every", "200ms", "--format", "ndjson", "--db", database]
            .map(CLI.shellQuoted).joined(separator: " ")
        let result = try CLI.runShell("(timeout 30 \(watch); echo \"status $?\" >&2) | head -2")
        #expect(result.stdout.split(separator: "\n").count == 2)
        #expect(result.stderr.contains("status 0"), "\(result.stderr)")
        #expect(!result.stderr.contains("standard output was closed"), "\(result.stderr)")
        let history = try CLI.run(["history", "local", "--db", database, "--format", "ndjson"])
        #expect(history.status == 0, "\(history.stderr)")
        #expect(history.stdout.split(separator: "\n").count >= 2)
    }

    @Test func aChatWithAHostThatDoesNotResolveFailsBeforeAnyRequest() async throws {
        try await withPythonServer("llm_mock_server.py") { mock in
            let result = try CLI.run(
                [
                    "chat", "--host", "nosuch.invalid", "--base-url", mock.baseURL + "/v1", "--message", "hello",
                    "--no-history",
                ], environment: ["OPENAI_API_KEY": "sk-test"])
            #expect(result.status == 64)
            #expect(result.stderr.contains("host nosuch.invalid does not resolve"), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1)
            let requests = try CLI.runShell("curl -s \(mock.baseURL)/requests")
            let received = try JSONParser.parse(requests.stdout)["requests"]?.arrayValue ?? []
            #expect(received.isEmpty)
        }
    }

    @Test func aMisspeltAliasIsAnsweredWithTheAliasItWasMeantToBe() throws {
        let config = NSTemporaryDirectory() + "hostscope-unattended-\(UUID().uuidString).config"
        defer { unlink(config) }
        try "Host webserver1\n    HostName 127.0.0.1\n".write(toFile: config, atomically: true, encoding: .utf8)
        let result = try CLI.run(
            ["chat", "--host", "webservr1", "-F", config, "--message", "hello", "--no-history"],
            environment: ["OPENAI_API_KEY": "sk-test"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("Did you mean webserver1?"), "\(result.stderr)")
    }

    @Test func aChatWithoutAnAPIKeyFailsBeforeAnyRequest() throws {
        let result = try CLI.run(
            ["chat", "--host", "local", "--message", "hello", "--no-history"],
            environment: ["OPENAI_API_KEY": ""])
        #expect(result.status == 64)
        #expect(result.stderr.contains("no API key for OpenAI: set OPENAI_API_KEY"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
    }
}
