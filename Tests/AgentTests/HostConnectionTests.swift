import Agent
import Foundation
import HostStats
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
