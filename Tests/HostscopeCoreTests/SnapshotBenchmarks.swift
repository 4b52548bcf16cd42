import Foundation
import HostStats
import HostscopeCore
import OrderedJSON
import SSHTransport
import TestSupport
import Testing
import ValueFormats

/// The snapshot benchmark of Scripts/bench/snapshot: a warm snapshot on one persistent session
/// next to a bare `exec true` on that session, OpenSSH's `ssh` running the same probe (a new
/// connection each time, and through a ControlMaster), and the naive design of a connection per
/// command running `mpstat 1 1`, `free -m`, `df -hT` and `ps`. Off unless `HOSTSCOPE_BENCH=1`;
/// run it in release mode through Scripts/bench/snapshot/run.sh.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["HOSTSCOPE_BENCH"] == "1"))
struct SnapshotBenchmarks {
    struct Row {
        var design: String
        var wallMs: [Double]
        var clientCPUMs: Double
        var remoteCPUMs: Double?

        var median: Double { wallMs.sorted()[wallMs.count / 2] }
        var p90: Double { wallMs.sorted()[min(wallMs.count - 1, wallMs.count * 9 / 10)] }
    }

    private let iterations = Int(ProcessInfo.processInfo.environment["HOSTSCOPE_BENCH_ITERATIONS"] ?? "") ?? 200

    /// CPU time of this process (its threads included) and of its reaped children, in ms.
    private func cpuMs(_ who: Int32) -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(who), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000
    }

    private func ms(_ duration: Duration) -> Double {
        duration.inMilliseconds
    }

    /// Host CPU (user + system of the shell and its children) per run of `command`, from the
    /// shell's `times` after running it `count` times in one exec.
    private func remoteCPUMs(_ session: SSHSession, _ command: String, count: Int) async throws -> Double {
        let script = "i=0; while [ $i -lt \(count) ]; do ( \(command) ) >/dev/null 2>&1; i=$((i+1)); done; times"
        let result = try await session.exec(script, timeout: .seconds(600))
        var total = 0.0
        for line in String(decoding: result.stdout, as: UTF8.self).split(separator: "\n") {
            for field in line.split(separator: " ") {
                // `0m0.950000s`
                let text = field.dropLast()
                let parts = text.split(separator: "m")
                if parts.count == 2, let minutes = Double(parts[0]), let seconds = Double(parts[1]) {
                    total += (minutes * 60 + seconds) * 1000
                }
            }
        }
        return total / Double(count)
    }

    /// Wall times of `runs` calls of `body` after `warmUp` unmeasured ones, and the CPU per call of this
    /// process (`RUSAGE_SELF`) or of its reaped children (`RUSAGE_CHILDREN`, for `ssh`).
    private func measure(
        runs: Int, warmUp: Int = 20, cpuOf who: Int32 = RUSAGE_SELF.rawValue, _ body: () async throws -> Void
    ) async throws -> (wall: [Double], clientCPUMs: Double) {
        for _ in 0..<warmUp { try await body() }
        var wall: [Double] = []
        let cpuStart = cpuMs(who)
        for _ in 0..<runs {
            let start = ContinuousClock.now
            try await body()
            wall.append(ms(start.duration(to: .now)))
        }
        return (wall, (cpuMs(who) - cpuStart) / Double(runs))
    }

    private struct TickFailed: Error, CustomStringConvertible {
        var record: SnapshotRecord
        var description: String { "a benchmark tick failed: \(record)" }
    }

    private func runSSH(_ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ssh")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test func warmSnapshotAgainstItsPeers() async throws {
        let server = try SSHTestServer.shared()
        let connection = harnessConnection(server)
        let session = try await connection.connectedSession()
        var rows: [Row] = []

        let profiling = ProcessInfo.processInfo.environment["HOSTSCOPE_BENCH_PROFILE"] == "1"
        // A bare exec on the warm session: the floor for any command.
        var measured = try await measure(runs: profiling ? 1 : iterations) {
            _ = try await session.exec("true", timeout: .seconds(10))
        }
        rows.append(
            Row(
                design: "hostscope: `exec true` on the warm session", wallMs: measured.wall,
                clientCPUMs: measured.clientCPUMs,
                remoteCPUMs: profiling ? nil : try await remoteCPUMs(session, "true", count: iterations)))

        // A bare `true` through a long-lived shell on the session: what a probe pays beyond its own work.
        if !profiling {
            let shell = session.openShell()
            measured = try await measure(runs: iterations) { _ = try await shell.run("true", timeout: .seconds(10)) }
            rows.append(
                Row(
                    design: "hostscope: `true` in a long-lived shell on the session", wallMs: measured.wall,
                    clientCPUMs: measured.clientCPUMs, remoteCPUMs: nil))
            shell.close()
        }

        // A warm snapshot: the probe in the session's probe shell, parsed into a snapshot.
        let collector = HostCollector(host: "harness", runner: connection)
        measured = try await measure(runs: iterations) {
            let record = await collector.tick()
            guard case .snapshot = record else { throw TickFailed(record: record) }
        }
        let probe = LinuxProcProbe.command(sampleSeconds: nil, nonce: ProbeOutput.makeNonce())
        rows.append(
            Row(
                design: "hostscope: warm snapshot (probe in the session's shell, parsed)", wallMs: measured.wall,
                clientCPUMs: measured.clientCPUMs,
                remoteCPUMs: profiling ? nil : try await remoteCPUMs(session, probe, count: iterations)))

        if profiling {
            // Only the warm snapshots, to run under `perf record`.
            let last = rows[rows.count - 1]
            print(String(format: "warm snapshot: median %.2f ms, client CPU %.3f ms", last.median, last.clientCPUMs))
            await connection.close()
            return
        }

        // OpenSSH running the same probe: a new connection each time, then through a master.
        let common = [
            "-i", server.keyPath, "-o", "IdentitiesOnly=yes", "-o", "UserKnownHostsFile=\(server.knownHostsPath)",
            "-o", "BatchMode=yes", "-p", String(server.port),
        ]
        let target = "\(server.user)@\(server.host)"
        let sshRuns = max(10, iterations / 4)
        measured = try await measure(runs: sshRuns, warmUp: 0, cpuOf: RUSAGE_CHILDREN.rawValue) {
            let status = try runSSH(common + [target, probe])
            #expect(status == 0)
        }
        rows.append(
            Row(
                design: "OpenSSH `ssh host PROBE`, new connection each time", wallMs: measured.wall,
                clientCPUMs: measured.clientCPUMs, remoteCPUMs: nil))

        let control = NSTemporaryDirectory() + "hostscope-bench-\(getpid()).sock"
        #expect(
            try runSSH(common + ["-M", "-N", "-f", "-o", "ControlPath=\(control)", "-o", "ControlPersist=60", target])
                == 0)
        for _ in 0..<5 { _ = try runSSH(common + ["-o", "ControlPath=\(control)", target, "true"]) }
        measured = try await measure(runs: iterations, warmUp: 0, cpuOf: RUSAGE_CHILDREN.rawValue) {
            let status = try runSSH(common + ["-o", "ControlPath=\(control)", target, probe])
            #expect(status == 0)
        }
        rows.append(
            Row(
                design: "OpenSSH `ssh` through a ControlMaster (warm), same probe", wallMs: measured.wall,
                clientCPUMs: measured.clientCPUMs, remoteCPUMs: nil))
        _ = try runSSH(common + ["-o", "ControlPath=\(control)", "-O", "exit", target])

        // The naive design: a new connection per command, classic tools.
        let naive = ["mpstat 1 1", "free -m", "df -hT", "ps -eo pid,ppid,user,pcpu,pmem,rss,args --sort=-pcpu"]
        measured = try await measure(runs: 5, warmUp: 0) {
            for command in naive {
                let fresh = try await SSHSession.connect(connection.options)
                _ = try await fresh.exec(command, timeout: .seconds(30))
                await fresh.close()
            }
        }
        rows.append(
            Row(
                design: "naive: new connection per command (mpstat 1 1, free -m, df -hT, ps)", wallMs: measured.wall,
                clientCPUMs: measured.clientCPUMs,
                remoteCPUMs: try await remoteCPUMs(session, naive.joined(separator: "; "), count: 3)))
        await connection.close()

        var table =
            "| design | wall median (ms) | wall p90 (ms) | client CPU (ms) | host CPU (ms) |\n|---|---:|---:|---:|---:|\n"
        for row in rows {
            table += String(
                format: "| %@ | %.2f | %.2f | %.3f | %@ |\n", row.design, row.median, row.p90, row.clientCPUMs,
                row.remoteCPUMs.map { String(format: "%.2f", $0) } ?? "n/a")
        }
        let snapshotRow = rows.first { $0.design.hasPrefix("hostscope: warm snapshot") } ?? rows[rows.count - 1]
        let ratio = snapshotRow.median / rows[0].median
        table += String(format: "\nwarm snapshot / exec true = %.2f×\n", ratio)
        print(table)
        if let path = ProcessInfo.processInfo.environment["HOSTSCOPE_BENCH_OUT"] {
            try table.write(toFile: path, atomically: true, encoding: .utf8)
        }
    }
}
