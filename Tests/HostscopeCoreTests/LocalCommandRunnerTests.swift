import Foundation
import HostStats
import HostscopeCore
import TestSupport
import Testing

/// The `local` host's runner: `/bin/sh -c` in a process group of its own, stopped whole at its deadline,
/// past its output limit, or when the task that runs it is cancelled.
@Suite struct LocalCommandRunnerTests {
    /// Whether a process whose command line contains `marker` runs on this machine.
    static func running(_ marker: String) throws -> Bool {
        let pgrep = Process()
        pgrep.executableURL = URL(fileURLWithPath: "/usr/bin/pgrep")
        pgrep.arguments = ["-f", marker]
        pgrep.standardOutput = FileHandle.nullDevice
        try pgrep.run()
        pgrep.waitUntilExit()
        return pgrep.terminationStatus == 0
    }

    /// A marker no other test's process carries: a `sleep` of a unique length.
    static func uniqueSleep() -> String {
        "sleep 30.\(Int.random(in: 100_000...999_999))"
    }

    @Test func aCommandGivesItsOutputsItsStatusAndItsSignal() async throws {
        let runner = LocalCommandRunner()
        let exited = try await runner.run("echo out; echo err >&2; exit 7", timeout: .seconds(30))
        #expect(exited.stdoutText == "out\n")
        #expect(exited.stderrText == "err\n")
        #expect(exited.exitStatus == 7)
        #expect(exited.exitSignal == nil)
        #expect(!exited.truncated)
        let signalled = try await runner.run("kill -TERM $$", timeout: .seconds(30))
        #expect(signalled.exitStatus == nil)
        #expect(signalled.exitSignal == "TERM")
    }

    @Test func outputPastTheLimitIsCutMarkedTruncatedAndTheCommandStopped() async throws {
        let start = ContinuousClock.now
        let output = try await LocalCommandRunner(outputLimit: 10_000).run("yes; yes >&2", timeout: .seconds(30))
        #expect(output.truncated)
        #expect(output.stdout.count + output.stderr.count == 10_000)
        #expect(output.stdoutText.hasPrefix("y\ny\n"))
        #expect(start.duration(to: .now) < .seconds(10))
    }

    @Test func aCommandPastItsDeadlineIsStoppedWithEverythingItStarted() async throws {
        let marker = Self.uniqueSleep()
        let start = ContinuousClock.now
        await #expect {
            _ = try await LocalCommandRunner().run("\(marker) & \(marker) & wait", timeout: .milliseconds(500))
        } throws: { error in
            (error as? CollectionError)?.kind == .timeout
        }
        #expect(start.duration(to: .now) < .seconds(10))
        try await waitUntil("no \(marker) left") { try !Self.running(marker) }
    }

    @Test func cancellingTheTaskStopsTheCommandAndEverythingItStartedAtOnce() async throws {
        let marker = Self.uniqueSleep()
        let task = Task { try await LocalCommandRunner().run("\(marker) & wait", timeout: .seconds(120)) }
        try await waitUntil("\(marker) to start") { try Self.running(marker) }
        let start = ContinuousClock.now
        task.cancel()
        await #expect(throws: (any Error).self) { _ = try await task.value }
        #expect(start.duration(to: .now) < .seconds(10))
        try await waitUntil("no \(marker) left") { try !Self.running(marker) }
    }
}
