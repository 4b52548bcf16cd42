import Foundation
import SSHTransport
import TestSupport
import Testing

/// ``SSHShell`` against the harness sshd: scripts one after another in one shell, and every way
/// a script can end the shell.
@Suite(.serialized) struct SSHShellTests {
    let server: SSHTestServer

    init() throws {
        server = try SSHTestServer.shared()
    }

    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func scriptsRunOneAfterAnotherInTheSameShell() async throws {
        let session = try await SSHSession.connect(harnessOptions(server))
        let shell = session.openShell()
        let first = try await shell.run("cd /tmp; marker=kept; echo $$; printf 'no newline'", timeout: .seconds(10))
        #expect(text(first.stdout).hasSuffix("\nno newline"))
        #expect(first.exitStatus == 0)
        let pid = text(first.stdout).split(separator: "\n").first.map(String.init)
        let second = try await shell.run("echo $$; pwd; echo $marker; echo err >&2; false", timeout: .seconds(10))
        #expect(text(second.stdout) == "\(pid ?? "?")\n/tmp\nkept\n")
        #expect(text(second.stderr) == "err\n")
        #expect(second.exitStatus == 1)
        let binary = try await shell.run("printf '\\377\\376a\\000b\\351'", timeout: .seconds(10))
        #expect(binary.stdout == [0xFF, 0xFE, 0x61, 0x00, 0x62, 0xE9])
        #expect(shell.isAlive)
        #expect(shell.didStart)
        shell.close()
        await session.close()
    }

    @Test func aScriptThatReadsStdinGetsNothingAndTheNextScriptStillRuns() async throws {
        let session = try await SSHSession.connect(harnessOptions(server))
        let shell = session.openShell()
        let reader = try await shell.run("cat; echo read-done", timeout: .seconds(10))
        #expect(text(reader.stdout) == "read-done\n")
        let next = try await shell.run("echo next", timeout: .seconds(10))
        #expect(text(next.stdout) == "next\n")
        await session.close()
    }

    @Test func concurrentScriptsEachGetTheirOwnOutput() async throws {
        let session = try await SSHSession.connect(harnessOptions(server))
        let shell = session.openShell()
        let outputs = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for index in 0..<10 {
                group.addTask {
                    let result = try await shell.run("echo \(index); echo e\(index) >&2", timeout: .seconds(20))
                    return (index, self.text(result.stdout) + self.text(result.stderr))
                }
            }
            var collected: [Int: String] = [:]
            for try await (index, output) in group { collected[index] = output }
            return collected
        }
        for index in 0..<10 { #expect(outputs[index] == "\(index)\ne\(index)\n") }
        await session.close()
    }

    @Test func aScriptThatExitsReportsItsStatusAndEndsTheShell() async throws {
        let session = try await SSHSession.connect(harnessOptions(server))
        let shell = session.openShell()
        let result = try await shell.run("echo bye; exit 7", timeout: .seconds(10))
        #expect(text(result.stdout) == "bye\n")
        #expect(result.exitStatus == 7)
        try await waitUntil("the shell to end") { !shell.isAlive }
        await #expect {
            _ = try await shell.run("echo again", timeout: .seconds(10))
        } throws: { error in
            (error as? SSHError)?.code == .shellUnavailable
        }
        // The session itself is untouched.
        let exec = try await session.exec("echo ok", timeout: .seconds(10))
        #expect(exec.stdout == Array("ok\n".utf8))
        await session.close()
    }

    @Test func aScriptPastItsDeadlineIsKilledOnTheHostWithTheShell() async throws {
        let session = try await SSHSession.connect(harnessOptions(server))
        let shell = session.openShell()
        _ = try await shell.run("true", timeout: .seconds(10))
        let start = ContinuousClock.now
        await #expect {
            _ = try await shell.run("sleep 30.5151", timeout: .milliseconds(500))
        } throws: { error in
            (error as? SSHError)?.code == .timeout
        }
        #expect(start.duration(to: .now) < .seconds(5))
        // The kill reaches the host asynchronously: look until the script is gone.
        try await waitUntil("the script to be gone from the host") {
            let leftover = try await session.exec("pgrep -f '[s]leep 30.5151' || echo none", timeout: .seconds(10))
            return leftover.stdout == Array("none\n".utf8)
        }
        #expect(!shell.isAlive)
        await session.close()
    }

    @Test func aRunawayScriptIsCutAtTheOutputLimitAndTheSessionStaysUsable() async throws {
        let session = try await SSHSession.connect(harnessOptions(server))
        let shell = session.openShell()
        let result = try await shell.run("head -c 50000000 /dev/zero", timeout: .seconds(30), outputLimit: 1 << 20)
        #expect(result.truncated)
        #expect(result.stdout.count == 1 << 20)
        let after = try await session.exec("echo ok", timeout: .seconds(10))
        #expect(after.stdout == Array("ok\n".utf8))
        let fresh = try await session.openShell().run("echo fresh", timeout: .seconds(10))
        #expect(fresh.stdout == Array("fresh\n".utf8))
        await session.close()
    }

    @Test func cancellingTheTaskStopsTheScript() async throws {
        let session = try await SSHSession.connect(harnessOptions(server))
        let shell = session.openShell()
        let task = Task { try await shell.run("sleep 30", timeout: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        let start = ContinuousClock.now
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        #expect(start.duration(to: .now) < .seconds(5))
        let after = try await session.exec("echo ok", timeout: .seconds(10))
        #expect(after.stdout == Array("ok\n".utf8))
        await session.close()
    }

    @Test func aClosedSessionFailsTheShellsScripts() async throws {
        let session = try await SSHSession.connect(harnessOptions(server))
        let shell = session.openShell()
        _ = try await shell.run("true", timeout: .seconds(10))
        await session.close()
        #expect(!shell.isAlive)
        await #expect(throws: SSHError.self) { _ = try await shell.run("true", timeout: .seconds(5)) }
    }
}
