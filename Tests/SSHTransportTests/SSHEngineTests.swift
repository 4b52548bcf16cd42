import Foundation
import SSHTransport
import Synchronization
import TestSupport
import Testing
import ValueFormats

/// The threads of this process, by their names.
private func threadNames() -> [String] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
        .map { $0.trimmingCharacters(in: .newlines) }
}

private func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

/// A flag one task sets and another reads.
final class StopFlag: Sendable {
    private let value = Lock(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

/// Runs `echo` on `session` every 50 ms until `stop` is set; returns the slowest round trip.
func keepTicking(_ session: SSHSession, until stop: StopFlag) async throws -> (slowest: Duration, count: Int) {
    var slowest = Duration.zero
    var count = 0
    while !stop.isSet {
        let start = ContinuousClock.now
        let result = try await session.exec("echo tick", timeout: .seconds(5))
        #expect(String(decoding: result.stdout, as: UTF8.self) == "tick\n")
        slowest = max(slowest, start.duration(to: .now))
        count += 1
        try await Task.sleep(for: .milliseconds(50))
    }
    return (slowest, count)
}

@Suite(.serialized) struct SSHEngineTests {
    let server: SSHTestServer

    init() throws {
        server = try SSHTestServer.shared()
    }

    @Test func fortySessionsOnOneIOThreadRunTheirCommandsConcurrentlyWithoutAThreadEach() async throws {
        let engine = SSHEngine(threads: 1)
        let before = threadNames().count
        let sessions = try await withThrowingTaskGroup(of: SSHSession.self) { group in
            for _ in 0..<40 {
                group.addTask { try await SSHSession.connect(harnessOptions(self.server), engine: engine) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(sessions.count == 40)
        #expect(engine.sessionsPerThread == [40])
        // Forty sessions, one I/O thread: no thread per session (a few threads of Swift's pool and
        // of name resolution may come and go).
        #expect(threadNames().count < before + 10, "\(threadNames())")
        #expect(threadNames().filter { $0 == "ssh io 0" }.count >= 1)

        // Every session runs a command that waits 300 ms; all at once they take about that long,
        // not forty times as long.
        let start = ContinuousClock.now
        let outputs = try await withThrowingTaskGroup(of: String.self) { group in
            for (index, session) in sessions.enumerated() {
                group.addTask {
                    let result = try await session.exec("sleep 0.3; echo \(index)", timeout: .seconds(20))
                    return String(decoding: result.stdout, as: UTF8.self)
                }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(outputs == Set((0..<40).map { "\($0)\n" }))
        #expect(start.duration(to: .now) < .seconds(6))

        for session in sessions { await session.close() }
        try await waitUntil("the I/O thread to drop every session: \(engine.sessionsPerThread)") {
            engine.sessionsPerThread == [0]
        }
        #expect(sessions.allSatisfy { !$0.isAlive })
    }

    @Test func aServerThatNeverSendsABannerTimesOutWhileOtherSessionsOnTheThreadGoOn() async throws {
        let engine = SSHEngine(threads: 1)
        let listener = try LoopbackListener()
        let busy = try await SSHSession.connect(harnessOptions(server), engine: engine)
        let stop = StopFlag()
        let ticker = Task { try await keepTicking(busy, until: stop) }

        var silent = harnessOptions(server, timeout: .seconds(1))
        silent.port = listener.port
        silent.displayName = "silent"
        let start = ContinuousClock.now
        await #expect {
            _ = try await SSHSession.connect(silent, engine: engine)
        } throws: { error in
            guard let error = error as? SSHError else { return false }
            return error.code == .timeout && error.message.contains("no SSH handshake within 1 s")
        }
        let waited = start.duration(to: .now)
        #expect(waited >= .milliseconds(900) && waited < .seconds(3), "\(waited)")
        try await Task.sleep(for: .milliseconds(200))
        stop.set()
        let (slowest, count) = try await ticker.value
        #expect(count >= 10)
        #expect(slowest < .milliseconds(500), "a command waited \(milliseconds(slowest)) ms behind the silent host")
        await busy.close()
        withExtendedLifetime(listener) {}
    }

    @Test func aServerStoppedMidSessionTimesOutItsCommandsWhileOtherServersKeepAnswering() async throws {
        let frozen = try SSHTestServer.startDedicated()
        defer { frozen.stop() }
        let engine = SSHEngine(threads: 1)
        let healthy = try await withThrowingTaskGroup(of: SSHSession.self) { group in
            for _ in 0..<5 {
                group.addTask { try await SSHSession.connect(harnessOptions(self.server), engine: engine) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let doomed = try await SSHSession.connect(harnessOptions(frozen), engine: engine)
        #expect(try await doomed.exec("echo up", timeout: .seconds(5)).stdout == Array("up\n".utf8))

        frozen.freezeSSHD()
        defer { frozen.thawSSHD() }
        let stop = StopFlag()
        let tickers = healthy.map { session in Task { try await keepTicking(session, until: stop) } }
        let start = ContinuousClock.now
        await #expect {
            _ = try await doomed.exec("echo never", timeout: .seconds(1))
        } throws: { error in
            (error as? SSHError)?.code == .timeout
        }
        #expect(start.duration(to: .now) < .seconds(3))
        // A second command on the stopped host times out too; its I/O thread is not stuck on it.
        await #expect {
            _ = try await doomed.exec("echo never", timeout: .milliseconds(500))
        } throws: { error in
            (error as? SSHError)?.code == .timeout
        }
        // Closing the session to the stopped host does not wait on it for long either.
        let closeStart = ContinuousClock.now
        await doomed.close()
        #expect(closeStart.duration(to: .now) < .seconds(4))

        stop.set()
        for ticker in tickers {
            let (slowest, count) = try await ticker.value
            #expect(count >= 10)
            #expect(slowest < .milliseconds(500), "a healthy host waited \(milliseconds(slowest)) ms")
        }
        for session in healthy { await session.close() }
    }

    @Test func aPassphrasePromptRunsOffTheIOThread() async throws {
        let engine = SSHEngine(threads: 1)
        let busy = try await SSHSession.connect(harnessOptions(server), engine: engine)
        let stop = StopFlag()
        let ticker = Task { try await keepTicking(busy, until: stop) }
        let passphrase = server.passphrase
        let prompted = Lock<[String]>([])
        // A provider that takes two seconds to answer, as a person typing would.
        let slowProvider: SecretProvider = { request in
            prompted.withLock { $0.append(currentThreadName()) }
            Thread.sleep(forTimeInterval: 2)
            if case .passphrase = request { return Secret(passphrase) }
            return nil
        }
        let options = harnessOptions(server, identities: [server.encryptedKeyPath], secrets: slowProvider)
        let session = try await SSHSession.connect(options, engine: engine)
        #expect(session.info.authMethod.contains("id_ed25519_pass"))
        stop.set()
        let (slowest, _) = try await ticker.value
        #expect(slowest < .seconds(1), "a command waited \(milliseconds(slowest)) ms behind the prompt")
        #expect(prompted.withLock { $0 } == ["ssh secret"])
        await session.close()
        await busy.close()
    }
}

/// The calling thread's name.
private func currentThreadName() -> String {
    let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
    return name.trimmingCharacters(in: .newlines)
}

@Suite(.serialized) struct HandshakeGateTests {
    let server: SSHTestServer

    init() throws {
        server = try SSHTestServer.shared()
    }

    @Test func thirtyConnectsAtOnceGoFourAtATimeAndAllSucceedWhileAConnectedSessionKeepsTicking() async throws {
        let engine = SSHEngine(threads: 1, concurrentHandshakes: 4)
        let busy = try await SSHSession.connect(harnessOptions(server), engine: engine)
        let stop = StopFlag()
        let ticker = Task { try await keepTicking(busy, until: stop) }
        let mostRunning = Lock(0)
        let sampler = Task {
            while !Task.isCancelled {
                let running = engine.handshakes.counts.running
                mostRunning.withLock { $0 = max($0, running) }
                try? await Task.sleep(for: .milliseconds(2))
            }
        }
        let sessions = try await withThrowingTaskGroup(of: SSHSession.self) { group in
            for _ in 0..<30 {
                // A short timeout: a connect that counted its wait in the queue would run out.
                group.addTask {
                    try await SSHSession.connect(harnessOptions(self.server, timeout: .seconds(3)), engine: engine)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        sampler.cancel()
        stop.set()
        let (slowest, _) = try await ticker.value
        let counts = engine.handshakes.counts
        #expect(sessions.count == 30)
        #expect(counts.admitted == 31)
        #expect(counts.running == 0)
        #expect(counts.peakWaiting >= 20, "\(counts)")
        #expect(mostRunning.withLock { $0 } <= 4)
        #expect(slowest < .seconds(2), "a connected session waited \(milliseconds(slowest)) ms during the storm")
        for session in sessions { await session.close() }
        await busy.close()
    }

    @Test func aConnectTimesOutOnlyAfterItsTurnCame() async throws {
        let engine = SSHEngine(threads: 1, concurrentHandshakes: 1)
        let listener = try LoopbackListener()
        var silent = harnessOptions(server, timeout: .seconds(1))
        silent.port = listener.port
        let blocker = Task { try await SSHSession.connect(silent, engine: engine) }
        try await waitUntil("the silent host to hold the only handshake slot") {
            engine.handshakes.counts.running == 1
        }
        // Queued behind the silent host for about a second, then given its own second.
        let start = ContinuousClock.now
        let session = try await SSHSession.connect(harnessOptions(server, timeout: .seconds(1)), engine: engine)
        #expect(start.duration(to: .now) > .milliseconds(700))
        await #expect(throws: SSHError.self) { _ = try await blocker.value }
        await session.close()
        withExtendedLifetime(listener) {}
    }
}
