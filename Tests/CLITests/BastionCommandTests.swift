import Foundation
import OrderedJSON
import TestSupport
import Testing

/// The command line through jump hosts (`-J`, `ProxyJump`), against sshds in network namespaces that only
/// the lab's bastion reaches (see ``BastionLab``).
@Suite(
    .serialized,
    .disabled(
        if: BastionLab.unavailableReason != nil,
        "the bastion lab needs root and ip netns (iproute2) to build network namespaces"))
struct BastionCommandTests {
    let lab: BastionLab

    init() throws {
        lab = try BastionLab.shared()
    }

    private var keys: [String] { ["-i", lab.keyPath, "--known-hosts", lab.knownHostsPath] }

    @Test func dashJTakesASnapshotOfAHostOnlyTheJumpHostReaches() throws {
        let target = "\(lab.user)@\(lab.inner):2222"
        let result = try CLI.run(["snapshot", "-J", "\(lab.user)@\(lab.bastion)", target, "-o", "json"] + keys)
        #expect(result.status == 0, "\(result.stderr)")
        let json = try JSONParser.parse(result.stdout)
        #expect(json["host"]?.stringValue == target)
        #expect(json["error"] == nil)
        #expect(json["memory"]?["total_bytes"] != nil)
    }

    @Test func aJumpHostWhoseKeyIsRevokedExitsFiveNamingTheHopAndTheFile() throws {
        let bastionKey = try String(
            contentsOfFile: lab.server("b1").directory + "/ssh_host_ed25519_key.pub", encoding: .utf8)
        let revoked = lab.directory + "/revoked-\(UUID().uuidString)"
        try bastionKey.write(toFile: revoked, atomically: true, encoding: .utf8)
        let config = try lab.config(
            """
            Host web1
                HostName \(lab.inner)
                ProxyJump bastion
            Host bastion
                HostName \(lab.bastion)
                RevokedHostKeys \(revoked)
            """)
        let result = try CLI.run(["snapshot", "-F", config, "web1", "-o", "json"])
        #expect(result.status == 5, "\(result.stderr)")
        #expect(
            result.stderr.contains(
                "web1: jump host bastion (\(lab.bastion):22): the host key "),
            "\(result.stderr)")
        #expect(result.stderr.contains("is revoked by \(revoked) line 1 (RevokedHostKeys)"), "\(result.stderr)")
    }

    @Test func filesGrepTakesDashJToo() throws {
        let directory = NSTemporaryDirectory() + "hostscope-bastion-grep-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "first line\nthe needle\n".write(toFile: directory + "/notes.txt", atomically: true, encoding: .utf8)
        let result = try CLI.run(
            [
                "files", "grep", "-J", "\(lab.user)@\(lab.bastion)", "needle",
                "\(lab.user)@\(lab.inner):\(directory)/notes.txt", "--identity", lab.keyPath, "--known-hosts",
                lab.knownHostsPath,
            ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "\(directory)/notes.txt:2:the needle\n")
    }

    @Test func aFleetBehindOneBastionIsCollectedAndItsUnreachableHostIsAnErrorRecordNamingTheHop() throws {
        let config = try lab.config(
            """
            Host web1
                HostName \(lab.inner)
            Host web2
                HostName \(lab.inner)
                Port 2222
            Host gone
                HostName \(lab.inner)
                Port 2200
            Host web* gone
                ProxyJump bastion
            Host bastion
                HostName \(lab.bastion)
            """)
        let result = try CLI.run(["snapshot", "-F", config, "web1", "web2", "gone", "-o", "ndjson"])
        #expect(result.status == 3, "\(result.stderr)")
        let records = try result.stdout.split(separator: "\n").map { try JSONParser.parse(String($0)) }
        #expect(records.map { $0["host"]?.stringValue } == ["web1", "web2", "gone"])
        #expect(records[0]["error"] == nil && records[1]["error"] == nil)
        #expect(records[2]["error"]?["kind"] == "connect")
        #expect(
            records[2]["error"]?["message"]?.stringValue
                == "gone: jump host bastion (\(lab.bastion):22) could not connect to \(lab.inner) port 2200 (connect "
                + "failed); is sshd running there, and can the jump host reach it?")
    }
}
