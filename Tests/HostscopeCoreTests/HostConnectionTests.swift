import Foundation
import HostStats
import HostscopeCore
import SSHTransport
import TestSupport
import Testing

@Suite(.serialized) struct HostConnectionTests {
    @Test func aSessionThatBrokeIsReopenedByTheNextCommand() async throws {
        let connection = harnessConnection(try SSHTestServer.shared())
        let first = try await connection.run("echo one", timeout: .seconds(10))
        #expect(first.stdoutText == "one\n")
        // Kill the sshd process serving this connection: the session breaks under the command.
        await #expect(throws: CollectionError.self) {
            _ = try await connection.run("kill -9 $PPID; sleep 5", timeout: .seconds(10))
        }
        let again = try await connection.run("echo two", timeout: .seconds(10))
        #expect(again.stdoutText == "two\n")
        #expect(await connection.reconnects == 1)
        await connection.close()
    }

    @Test func probesRunInOneShellAndANewShellReplacesOneThatEnded() async throws {
        let connection = harnessConnection(try SSHTestServer.shared())
        let first = try await connection.runProbe("echo $$", timeout: .seconds(10))
        let second = try await connection.runProbe("echo $$", timeout: .seconds(10))
        #expect(first.stdoutText == second.stdoutText, "both probes ran in the same shell")
        // A probe that ends its shell gets its own result; the next probe starts another shell.
        let exiting = try await connection.runProbe("exit 4", timeout: .seconds(10))
        #expect(exiting.exitStatus == 4)
        let third = try await connection.runProbe("echo $$", timeout: .seconds(10))
        #expect(third.exitStatus == 0)
        #expect(third.stdoutText != first.stdoutText)
        // Ordinary commands still get a channel each.
        let exec = try await connection.run("echo $$", timeout: .seconds(10))
        #expect(exec.stdoutText != third.stdoutText)
        #expect(await connection.reconnects == 0)
        await connection.close()
    }

    @Test func aHostWhoseLoginShellIsTcshIsSnapshottedAndNothingIsWrittenThere() async throws {
        let server = try SSHTestServer.shared()
        guard let user = server.tcshUser else {
            // The harness creates that user only as root, and only where tcsh is installed.
            try #require(
                getuid() != 0, "the harness created no tcsh user: install tcsh (Scripts/setup.sh --tests does)")
            return
        }
        let home = try #require(getpwnam(user)).pointee.pw_dir.map { String(cString: $0) } ?? ""
        let before = try FileManager.default.contentsOfDirectory(atPath: home).sorted()
        let connection = HostConnection(
            options: SSHConnectionOptions(
                displayName: "tcsh", hostName: server.host, port: server.port, user: user,
                identityFiles: [server.keyPath], identitiesOnly: true, knownHostsFiles: [server.knownHostsPath]))
        let collector = HostCollector(host: "tcsh", runner: connection)
        for record in [await collector.snapshot(), await collector.tick()] {
            guard case .snapshot(let snapshot) = record else {
                Issue.record("collection failed: \(record)")
                continue
            }
            #expect(snapshot.memory?.totalBytes != nil)
            #expect(snapshot.disks.contains { $0.mount == "/" })
            #expect(!snapshot.processes.isEmpty)
        }
        await connection.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: home).sorted() == before)
    }

    @Test func sshFailuresAreClassifiedForErrorRecords() async throws {
        let server = try SSHTestServer.shared()
        let refused = HostConnection(
            options: SSHConnectionOptions(
                displayName: "closed", hostName: "127.0.0.1", port: 1, user: "x", knownHostsFiles: []))
        do {
            _ = try await refused.run("true", timeout: .seconds(5))
            Issue.record("ran a command on a closed port")
        } catch let error as CollectionError {
            #expect(error.kind == .connect)
        }
        let unknownKey = HostConnection(
            options: SSHConnectionOptions(
                displayName: "harness", hostName: server.host, port: server.port, user: server.user,
                identityFiles: [server.keyPath], knownHostsFiles: [NSTemporaryDirectory() + "none-\(UUID())"]))
        do {
            _ = try await unknownKey.run("true", timeout: .seconds(5))
            Issue.record("ran a command on an unknown host")
        } catch let error as CollectionError {
            #expect(error.kind == .hostKey)
        }
    }
}
