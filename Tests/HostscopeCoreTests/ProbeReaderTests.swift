import Foundation
import HostStats
import HostscopeCore
import TestSupport
import Testing

/// Passes a collector's probes on to a connection's shell and keeps their scripts.
private actor ProbeScripts: CommandRunner {
    let base: HostConnection
    private(set) var scripts: [String] = []

    init(base: HostConnection) {
        self.base = base
    }

    func run(_ command: String, timeout: Duration) async throws -> CommandOutput {
        try await base.run(command, timeout: timeout)
    }

    func runProbe(_ script: String, timeout: Duration) async throws -> CommandOutput {
        scripts.append(script)
        return try await base.runProbe(script, timeout: timeout)
    }

    /// How each tick's probe read its sample: `fresh` (an awk of its own), `start` (fresh, then the
    /// connection's reader started), `reader`; detection and process details left out.
    func tickKinds() -> [String] {
        scripts.filter { $0.contains("self; echo $$") }.map { script in
            if script.contains("kill -0 \"$hs_q\"") { return "reader" }
            return script.contains("mkfifo") ? "start" : "fresh"
        }
    }
}

/// `watch` ticks of the `proc` collector through the connection's long-lived awk
/// (``LinuxProcProbe/readerAwk``), on the harness's real sshd.
@Suite(.serialized) struct ProbeReaderTests {
    private func tick(_ collector: HostCollector) async throws -> Snapshot {
        switch await collector.tick() {
        case .snapshot(let snapshot): return snapshot
        case .failure(let failure): throw HarnessError(description: "tick failed: \(failure.message)")
        }
    }

    /// The families and names a tick gives, not their moving values.
    private func shape(_ snapshot: Snapshot) -> [String] {
        [
            "cpu \(snapshot.cpu != nil)", "memory \(snapshot.memory?.totalBytes ?? 0)",
            "load \(snapshot.load != nil)", snapshot.disks.map(\.mount).joined(separator: ","),
            snapshot.network.map(\.interface).joined(separator: ","),
            "processes \(snapshot.processes.count)", "warnings \(snapshot.warnings)",
            (snapshot.node?.memory ?? []).map(\.name).joined(separator: ","),
            (snapshot.node?.vmstat ?? []).map(\.name).joined(separator: ","),
            (snapshot.node?.netstat ?? []).map(\.name).joined(separator: ","),
            "pressure \(snapshot.node?.pressure.count ?? -1)", "mounts \(snapshot.node?.mounts.count ?? -1)",
            "clock \(snapshot.node?.hostClockSeconds != nil)",
        ]
    }

    @Test func ticksGoThroughTheReaderFromTheFourthAndAReaderThatEndedIsReplaced() async throws {
        let connection = harnessConnection(try SSHTestServer.shared())
        let runner = ProbeScripts(base: connection)
        let collector = HostCollector(host: "harness", runner: runner)
        var snapshots: [Snapshot] = []
        for _ in 0..<8 { snapshots.append(try await tick(collector)) }
        // Two ticks show the shell is long-lived, the third starts the reader, the rest use it.
        #expect(await runner.tickKinds() == ["fresh", "fresh", "start"] + Array(repeating: "reader", count: 5))
        for snapshot in snapshots.dropFirst(2) { #expect(shape(snapshot) == shape(snapshots[1])) }
        #expect(snapshots.last?.cpu != nil)

        // A reader that ended (killed here, in the probes' shell): the next tick is taken whole, and two ticks
        // later a new reader runs.
        let killed = try await connection.runProbe("kill \"$hs_q\"", timeout: .seconds(10))
        #expect(killed.exitStatus == 0)
        for _ in 0..<4 { snapshots.append(try await tick(collector)) }
        #expect(await runner.tickKinds().suffix(5) == ["reader", "fresh", "start", "reader", "reader"])
        #expect(shape(snapshots[snapshots.count - 1]) == shape(snapshots[1]))

        // The reader ends with the connection's shell.
        let pid = try await connection.runProbe("echo \"$hs_q\"", timeout: .seconds(10))
        let reader = try #require(Int32(pid.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(kill(reader, 0) == 0)
        await connection.close()
        var alive = true
        for _ in 0..<100 where alive {
            alive = kill(reader, 0) == 0
            if alive { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(!alive, "the reader outlived its connection")
    }
}
