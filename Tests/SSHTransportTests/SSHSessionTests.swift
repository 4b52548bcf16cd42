import Foundation
import SSHTransport
import Synchronization
import TestSupport
import Testing

/// Options for the harness server with only the given identity files and no agent.
func harnessOptions(
    _ server: SSHTestServer, identities: [String]? = nil, agent: Bool = false, knownHosts: String? = nil,
    policy: HostKeyPolicy = .strict, secrets: SecretProvider? = nil, timeout: Duration = .seconds(10)
) -> SSHConnectionOptions {
    SSHConnectionOptions(
        displayName: "harness", hostName: server.host, port: server.port, user: server.user,
        identityFiles: identities ?? [server.keyPath], identitiesOnly: true,
        agentSocket: agent ? server.agentSocket : nil, knownHostsFiles: [knownHosts ?? server.knownHostsPath],
        hostKeyPolicy: policy, connectTimeout: timeout, allowPassword: true, secrets: secrets)
}

@Suite(.serialized) struct SSHSessionExecTests {
    let server: SSHTestServer

    init() throws {
        server = try SSHTestServer.shared()
    }

    @Test func aCommandReturnsItsOutputAndExitStatus() async throws {
        let result = try await withSSHSession(harnessOptions(server)) { session in
            try await session.exec("echo out; echo err >&2; exit 3", timeout: .seconds(10))
        }
        #expect(String(decoding: result.stdout, as: UTF8.self) == "out\n")
        #expect(String(decoding: result.stderr, as: UTF8.self) == "err\n")
        #expect(result.exitStatus == 3)
        #expect(result.exitSignal == nil)
        #expect(!result.truncated)
    }

    @Test func aCommandKilledByASignalReportsTheSignal() async throws {
        let result = try await withSSHSession(harnessOptions(server)) { session in
            try await session.exec("kill -TERM $$", timeout: .seconds(10))
        }
        #expect(result.exitSignal == "TERM")
        #expect(result.exitStatus == nil)
    }

    @Test func bytesThatAreNotUTF8SurviveUnchanged() async throws {
        let result = try await withSSHSession(harnessOptions(server)) { session in
            try await session.exec("printf '\\377\\376a\\000b\\351'", timeout: .seconds(10))
        }
        #expect(result.stdout == [0xFF, 0xFE, 0x61, 0x00, 0x62, 0xE9])
    }

    @Test func twentyCommandsRunConcurrentlyOnOneSession() async throws {
        let session = try await SSHSession.connect(harnessOptions(server), maxChannels: 32)
        let start = ContinuousClock.now
        let outputs = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for index in 0..<20 {
                group.addTask {
                    let result = try await session.exec("sleep 1; echo \(index)", timeout: .seconds(20))
                    return (index, String(decoding: result.stdout, as: UTF8.self))
                }
            }
            var collected: [Int: String] = [:]
            for try await (index, output) in group { collected[index] = output }
            return collected
        }
        let elapsed = start.duration(to: .now)
        await session.close()
        #expect(outputs.count == 20)
        for index in 0..<20 { #expect(outputs[index] == "\(index)\n") }
        // Twenty one-second sleeps finish together only if they ran at the same time.
        #expect(elapsed < .seconds(5), "20 concurrent execs took \(elapsed)")
    }

    @Test func commandsBeyondTheChannelLimitWaitTheirTurn() async throws {
        let session = try await SSHSession.connect(harnessOptions(server), maxChannels: 2)
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let result = try await session.exec("sleep 0.5; echo ok", timeout: .seconds(20))
                    #expect(result.stdout == Array("ok\n".utf8))
                }
            }
            try await group.waitForAll()
        }
        let elapsed = start.duration(to: .now)
        await session.close()
        // Two at a time: two rounds of half a second.
        #expect(elapsed >= .milliseconds(950), "4 execs with 2 channels took \(elapsed)")
    }

    @Test func aCommandThatOverrunsItsDeadlineIsStoppedAndTheSessionStaysUsable() async throws {
        let session = try await SSHSession.connect(harnessOptions(server))
        let start = ContinuousClock.now
        await #expect {
            _ = try await session.exec("sleep 30.4242", timeout: .milliseconds(500))
        } throws: { error in
            (error as? SSHError)?.code == .timeout
        }
        #expect(start.duration(to: .now) < .seconds(5))
        let result = try await session.exec("echo still here", timeout: .seconds(10))
        #expect(result.stdout == Array("still here\n".utf8))
        // The command's process group was killed on the host, not left running.
        let leftover = try await session.exec("pgrep -f '[s]leep 30.4242' || echo none", timeout: .seconds(10))
        #expect(leftover.stdout == Array("none\n".utf8))
        await session.close()
    }

    @Test func aRunawayCommandIsCutAtTheOutputLimit() async throws {
        let session = try await SSHSession.connect(harnessOptions(server))
        let result = try await session.exec("head -c 50000000 /dev/zero", timeout: .seconds(30), outputLimit: 1 << 20)
        #expect(result.truncated)
        #expect(result.stdout.count == 1 << 20)
        let after = try await session.exec("echo ok", timeout: .seconds(10))
        #expect(after.stdout == Array("ok\n".utf8))
        await session.close()
    }

    @Test func fiftyMegabytesOfOutputArriveWholeWhenTheLimitAllows() async throws {
        let session = try await SSHSession.connect(harnessOptions(server))
        let result = try await session.exec("head -c 50000000 /dev/zero", timeout: .seconds(60), outputLimit: 64 << 20)
        #expect(!result.truncated)
        #expect(result.stdout.count == 50_000_000)
        #expect(result.exitStatus == 0)
        await session.close()
    }

    @Test func cancellingTheTaskStopsTheCommand() async throws {
        let session = try await SSHSession.connect(harnessOptions(server))
        let task = Task { try await session.exec("sleep 30", timeout: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        let start = ContinuousClock.now
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        #expect(start.duration(to: .now) < .seconds(5))
        let after = try await session.exec("echo ok", timeout: .seconds(10))
        #expect(after.stdout == Array("ok\n".utf8))
        await session.close()
    }

    @Test func aConnectionDroppedMidCommandFailsTheCommandAndMarksTheSessionDead() async throws {
        let session = try await SSHSession.connect(harnessOptions(server))
        // The shell's parent is the sshd process serving this connection.
        await #expect {
            _ = try await session.exec("sleep 0.2; kill -9 $PPID; sleep 5", timeout: .seconds(20))
        } throws: { error in
            guard let error = error as? SSHError else { return false }
            return error.code == .sessionClosed || error.code == .timeout
        }
        try await waitUntil("the session to be marked dead") { !session.isAlive }
        await #expect(throws: SSHError.self) { _ = try await session.exec("true", timeout: .seconds(5)) }
    }
}

@Suite(.serialized) struct KeepaliveTests {
    @Test func aSessionWithAKeepaliveIntervalHasTCPKeepaliveProbesOnItsSocket() async throws {
        let server = try SSHTestServer.shared()
        var options = harnessOptions(server)
        options.keepaliveInterval = .seconds(7)
        let session = try await SSHSession.connect(options)
        // Our side of the connection, as the kernel reports it: a keepalive timer is armed. `ss` shows
        // one timer, the retransmit timer while our last bytes await their ACK, so it looks again then.
        let result = try await session.exec(
            "for try in 1 2 3 4 5 6 7 8 9 10; do out=$(ss -tno state established '( dport = :\(server.port) )'); "
                + "case \"$out\" in *keepalive*) break;; esac; sleep 0.05; done; printf '%s\\n' \"$out\"",
            timeout: .seconds(10))
        await session.close()
        let text = String(decoding: result.stdout, as: UTF8.self)
        #expect(text.contains("timer:(keepalive"), "\(text)")
    }

    @Test func commandsWaitingOnTheHostAfterKeepalivesCostTheIOThreadAlmostNothing() async throws {
        let server = try SSHTestServer.shared()
        var options = harnessOptions(server)
        options.keepaliveInterval = .seconds(1)
        // An engine of its own, so that its one I/O thread can be told from the others and timed.
        let before = Set(threadIDs())
        let engine = SSHEngine(threads: 1)
        // The thread starts and names itself on its own time: look until it has.
        var found: Int?
        for _ in 0..<200 where found == nil {
            found = threadIDs().first { !before.contains($0) && threadName($0) == "ssh io 0" }
            if found == nil { try await Task.sleep(for: .milliseconds(10)) }
        }
        let thread = try #require(found, "the engine's I/O thread")
        let session = try await SSHSession.connect(options, engine: engine)
        let shell = session.openShell()
        _ = try await shell.run("true", timeout: .seconds(10))
        // Real time must pass for keepalives to go out (one a second).
        try await Task.sleep(for: .seconds(2.5))
        let start = try #require(cpuNanoseconds(ofThread: thread))
        async let probe = shell.run("sleep 2; echo shell", timeout: .seconds(20))
        let exec = try await session.exec("sleep 2; echo exec", timeout: .seconds(20))
        let script = try await probe
        let used = try #require(cpuNanoseconds(ofThread: thread)) - start
        #expect(String(decoding: script.stdout, as: UTF8.self) == "shell\n")
        #expect(String(decoding: exec.stdout, as: UTF8.self) == "exec\n")
        // Waiting on the socket costs the thread microseconds; reading over and over data that is not
        // there (as a keepalive's queued reply once made it do) takes all the CPU it is given, a tenth
        // of a second in two even on a machine with dozens of runnable processes.
        #expect(used < 50_000_000, "the I/O thread used \(used / 1_000_000) ms of CPU in 2 s of waiting")
        shell.close()
        await session.close()
    }
}

/// The thread ids of this process.
private func threadIDs() -> [Int] {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).compactMap { Int($0) }
}

private func threadName(_ id: Int) -> String? {
    (try? String(contentsOfFile: "/proc/self/task/\(id)/comm", encoding: .utf8))?
        .trimmingCharacters(in: .newlines)
}

/// The CPU time a thread of this process has used, from the scheduler's exact account
/// (`se.sum_exec_runtime`, in milliseconds with a fraction); the tick-sampled `utime` misses short runs.
private func cpuNanoseconds(ofThread id: Int) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/self/task/\(id)/sched", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("se.sum_exec_runtime") {
        guard let value = line.split(separator: ":").last.flatMap({ Double($0.trimmingCharacters(in: .whitespaces)) })
        else { return nil }
        return Int(value * 1_000_000)
    }
    return nil
}
