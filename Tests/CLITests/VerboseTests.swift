import Foundation
import OrderedJSON
import TestSupport
import Testing

/// `-v` on the commands that connect, against the harness sshd: one line per step on stderr, as `ssh -v`, in the
/// order the steps happen, never a secret, and nothing on stdout but the data.
@Suite(.serialized) struct VerboseTests {
    /// A config naming the harness server `web1` (and `bastion`, the same server as a jump host).
    struct Config {
        let path: String
        let server: SSHTestServer

        init(identity: String? = nil) throws {
            server = try SSHTestServer.shared()
            path = NSTemporaryDirectory() + "hostscope-verbose-\(UUID().uuidString)"
            try (server.configBlock("web1 bastion", identity: identity) + "\nHost *\n    ConnectTimeout 9\n")
                .write(toFile: path, atomically: true, encoding: .utf8)
        }

        func remove() {
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    static func debugLines(_ stderr: String) -> [String] {
        stderr.split(separator: "\n").map(String.init).filter { $0.hasPrefix("hostscope: debug: ") }
            .map { String($0.dropFirst("hostscope: debug: ".count)) }
    }

    /// The index of the first line containing all of `parts`, recorded as an issue when there is none.
    static func index(of parts: [String], in lines: [String], sourceLocation: SourceLocation = #_sourceLocation)
        -> Int
    {
        guard let found = lines.firstIndex(where: { line in parts.allSatisfy { line.contains($0) } }) else {
            Issue.record(
                "no line holds \(parts); the lines:\n\(lines.joined(separator: "\n"))", sourceLocation: sourceLocation)
            return -1
        }
        return found
    }

    @Test func snapshotSaysEachStepInOrderAndKeepsStdoutForTheData() throws {
        let config = try Config()
        defer { config.remove() }
        let server = config.server
        let result = try CLI.run(["snapshot", "web1", "-F", config.path, "-v", "--format", "json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try JSONParser.parse(result.stdout)["host"] == "web1")
        let lines = Self.debugLines(result.stderr)
        let steps = [
            ["read ssh_config \(config.path)"],
            ["web1: ssh_config Host web1 bastion (\(config.path) line 1), Host * (\(config.path) line 9)"],
            ["web1: user \(server.user), host \(server.host) port \(server.port)", "keys: \(server.keyPath)"],
            ["web1: connecting to \(server.host) port \(server.port)"],
            ["web1: connected to \(server.host) port \(server.port) in "],
            ["web1: server SSH-2.0-OpenSSH_", "handshake in "],
            ["web1: host key ssh-ed25519 SHA256:", "found in \(server.knownHostsPath)"],
            ["web1: authenticated as \(server.user) with publickey (\(server.keyPath)) in "],
            ["web1: ran `", " ms, exit 0, "],
        ]
        let positions = steps.map { Self.index(of: $0, in: lines) }
        #expect(positions == positions.sorted(), "the steps are out of order:\n\(lines.joined(separator: "\n"))")
        // The key worked when first offered: the server was never asked which methods it takes.
        #expect(!lines.contains { $0.contains("the server accepts") })
        // Every line on stderr is a step: -v adds no other noise.
        #expect(result.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("hostscope: debug: ") })
        let quiet = try CLI.run(["snapshot", "web1", "-F", config.path, "--format", "json"])
        #expect(!quiet.stderr.contains("debug:"))
    }

    @Test func aJumpHostSaysItsOwnStepsUnderItsOwnName() throws {
        let config = try Config()
        defer { config.remove() }
        let result = try CLI.run(["snapshot", "web1", "-F", config.path, "-J", "bastion", "-v", "--format", "json"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = Self.debugLines(result.stderr)
        let through = Self.index(of: ["web1: going through jump host bastion"], in: lines)
        let hop = Self.index(of: ["bastion: authenticated as "], in: lines)
        let reached = Self.index(of: ["web1: reached ", " through bastion"], in: lines)
        let target = Self.index(of: ["web1: authenticated as "], in: lines)
        #expect(through < hop && hop < reached && reached < target)
    }

    @Test func aFailedAuthenticationSaysWhatWasTriedAndNoPassphraseAppears() throws {
        let server = try SSHTestServer.shared()
        let config = try Config(identity: server.encryptedKeyPath)
        defer { config.remove() }
        let missing = NSTemporaryDirectory() + "hostscope-no-such-key-\(UUID().uuidString)"
        let wrong = "not-the-passphrase-\(UUID().uuidString)"
        let result = try CLI.run(
            ["snapshot", "web1", "-F", config.path, "-i", missing, "--passphrase-env", "WRONG_PASSPHRASE", "-v"],
            environment: ["WRONG_PASSPHRASE": wrong], stdin: "")
        #expect(result.status == 4, "\(result.stderr)")
        let lines = Self.debugLines(result.stderr)
        _ = Self.index(of: ["web1: no key in \(missing), skipped"], in: lines)
        _ = Self.index(of: ["web1: tried \(server.encryptedKeyPath): wrong passphrase or unreadable key"], in: lines)
        #expect(!lines.contains { $0.contains("authenticated as") })
        #expect(!(result.stdout + result.stderr).contains(wrong))
        #expect(!(result.stdout + result.stderr).contains(server.passphrase))
    }

    @Test func filesSaysItsStepsAndGrepTakesVerboseByItsLongName() throws {
        let config = try Config()
        defer { config.remove() }
        let files = try CLI.run(["files", "ls", "web1:/", "-F", config.path, "-v"])
        #expect(files.status == 0, "\(files.stderr)")
        _ = Self.index(of: ["web1: authenticated as "], in: Self.debugLines(files.stderr))
        // files grep keeps -v for grep's own use; --verbose is there.
        let grep = try CLI.run(["files", "grep", "root", "web1:/etc/passwd", "--ssh-config", config.path, "--verbose"])
        _ = Self.index(of: ["web1: authenticated as "], in: Self.debugLines(grep.stderr))
        #expect(!grep.stdout.contains("debug:"))
    }

    @Test func serveWritesTheStepsAsInfoLinesOfItsLog() async throws {
        let config = try Config()
        defer { config.remove() }
        let directory = NSTemporaryDirectory() + "hostscope-verbose-serve-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let serve = try RunningServe(
            ["web1", "-F", config.path, "-v", "--every", "1s", "--listen", "127.0.0.1:0", "--no-history"],
            directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        try await waitUntil("serve's log says web1 was authenticated") {
            serve.logLines().contains { $0["message"]?.stringValue?.hasPrefix("web1: authenticated as ") == true }
        }
        let steps = serve.logLines().filter { $0["message"]?.stringValue?.hasPrefix("web1: ") == true }
        #expect(steps.allSatisfy { $0["level"]?.stringValue == "info" })
        #expect(steps.contains { $0["message"]?.stringValue?.contains("host key ssh-ed25519") == true })
    }
}
