import Foundation
import OrderedJSON
import TestSupport
import Testing

/// How the command line applies ssh_config and known_hosts where trust is at stake, against the real sshd:
/// `Match` blocks, misspelt keywords, jump host loops, revoked keys and the notice for recorded keys.
@Suite(.serialized) struct SSHTrustCommandTests {
    let server: SSHTestServer
    let directory: String

    init() throws {
        server = try SSHTestServer.shared()
        directory = NSTemporaryDirectory() + "hostscope-cli-trust-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    private func write(_ text: String, _ name: String) throws -> String {
        let path = directory + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func aMatchHostUserBlockSetsThePortHostscopeConnectsTo() throws {
        let config = try write(
            """
            Match host \(server.host) user somebody-else
                Port 1
            Match host \(server.host) user \(server.user)
                Port \(server.port)
            """, "config")
        let target = "\(server.user)@\(server.host)"
        let result = try CLI.run(["snapshot", "-F", config, target, "-o", "json"] + CLI.harnessArguments(server))
        #expect(result.status == 0, "\(result.stderr)")
        let json = try JSONParser.parse(result.stdout)
        #expect(json["host"]?.stringValue == target)
        #expect(json["error"] == nil)
    }

    @Test func aKeyRevokedInTheGlobalFileExitsFiveThoughTheUserFileListsIt() throws {
        let hostKey = try String(contentsOfFile: server.hostPublicKeyPath, encoding: .utf8).split(separator: " ")
        let global = try write("@revoked * \(hostKey[0]) \(hostKey[1])\n", "ssh_known_hosts")
        let config = try write(
            """
            Host *
                UserKnownHostsFile \(server.knownHostsPath)
                GlobalKnownHostsFile \(global)
            """, "config")
        let result = try CLI.run(["snapshot", "-F", config, server.target, "-o", "json", "-i", server.keyPath])
        #expect(result.status == 5, "\(result.stderr)")
        #expect(result.stderr.contains("is marked @revoked in \(global) line 1"))
        #expect(try JSONParser.parse(result.stdout)["error"]?["kind"] == "host_key")
    }

    @Test func aKeyListedInRevokedHostKeysExitsFive() throws {
        let hostKey = try String(contentsOfFile: server.hostPublicKeyPath, encoding: .utf8)
        let revoked = try write(hostKey, "revoked_keys")
        let config = try write("Host *\n    RevokedHostKeys \(revoked)\n", "config")
        let arguments = ["snapshot", "-F", config, server.target, "-o", "json"] + CLI.harnessArguments(server)
        let result = try CLI.run(arguments)
        #expect(result.status == 5, "\(result.stderr)")
        #expect(result.stderr.contains("is revoked by \(revoked) line 1 (RevokedHostKeys)"))
    }

    @Test func aMisspeltKeywordExitsTwoWithOneSentenceSayingWhatToDo() throws {
        let config = try write("Host *\n    Hostnme \(server.host)\n", "config")
        let result = try CLI.run(
            ["snapshot", "-F", config, server.target, "-o", "json"] + CLI.harnessArguments(server))
        #expect(result.status == 64)
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr
                == "hostscope: \(config) line 2: Bad configuration option \"Hostnme\": it is not an ssh_config keyword, "
                + "and ssh stops here too; correct its spelling, or name it in an IgnoreUnknown line before it if "
                + "another program reads it\n")
    }

    @Test func aHostWhoseJumpHostsLoopIsAnErrorRecordWhileOthersAreCollected() throws {
        let listener = try LoopbackListener()
        let config = try write(
            """
            Host web1
                HostName 127.0.0.1
                Port \(listener.port)
                ProxyJump gw1
            Host gw1
                ProxyJump gw2
            Host gw2
                ProxyJump gw1
            """, "config")
        let result = try CLI.run(["snapshot", "-F", config, "web1", "local", "-o", "ndjson", "--connect-timeout", "2s"])
        #expect(result.status == 3, "\(result.stderr)")
        #expect(
            result.stderr.contains(
                "web1: the jump hosts loop: gw1 → gw2 (ProxyJump gw2, \(config) line 6) → gw1 (ProxyJump gw1, "
                    + "\(config) line 8), so no connection can be made"))
        let records = try result.stdout.split(separator: "\n").map { try JSONParser.parse(String($0)) }
        #expect(records.map { $0["host"]?.stringValue } == ["web1", "local"])
        #expect(records.first?["error"]?["kind"] == "connect")
        #expect(records.last?["error"] == nil)
        #expect(!listener.hasPendingConnection)
    }

    @Test func strictHostKeyCheckingNoRecordsTheKeyWithSSHsNotice() throws {
        let knownHosts = directory + "/recorded_hosts"
        let config = try write(
            "Host *\n    StrictHostKeyChecking no\n    UserKnownHostsFile \(knownHosts)\n", "config")
        let notice =
            "Warning: Permanently added '[\(server.host)]:\(server.port)' (ED25519) to the list of known hosts.\n"
        let first = try CLI.run(["snapshot", "-F", config, server.target, "-o", "json", "-i", server.keyPath])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr == notice)
        #expect(try String(contentsOfFile: knownHosts, encoding: .utf8).hasPrefix("[\(server.host)]:\(server.port) "))
        let second = try CLI.run(["snapshot", "-F", config, server.target, "-o", "json", "-i", server.keyPath])
        #expect(second.status == 0)
        #expect(second.stderr.isEmpty)
    }

    @Test func acceptNewHostKeyPrintsTheSameNotice() throws {
        let knownHosts = directory + "/accepted_hosts"
        let config = try write("", "empty_config")
        let result = try CLI.run([
            "snapshot", server.target, "-o", "json", "-i", server.keyPath, "--known-hosts", knownHosts,
            "--accept-new-host-key", "-F", config,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr
                == "Warning: Permanently added '[\(server.host)]:\(server.port)' (ED25519) to the list of known hosts.\n"
        )
    }

    @Test func configWarningsArePrintedOncePerRunWithControlCharactersEscaped() throws {
        let config = try write("RSAAuthentication no\n", "conf\u{1B}[31mig")
        let result = try CLI.run(
            [
                "watch", "local", server.target, "--count", "2", "--every", "200ms", "--no-history", "--format",
                "ndjson", "-F", config,
            ] + CLI.harnessArguments(server))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").count == 4)
        let lines = result.stderr.split(separator: "\n")
        #expect(
            lines == [
                "hostscope: warning: \(directory)/conf\\e[31mig line 1: \"RSAAuthentication\" is no longer supported "
                    + "by ssh, which ignores it too; remove it"
            ])
        #expect(!result.stderr.contains("\u{1B}"))
    }
}
