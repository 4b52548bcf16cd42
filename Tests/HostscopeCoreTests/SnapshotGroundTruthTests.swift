import Foundation
import HostStats
import HostscopeCore
import SSHTransport
import TestSupport
import Testing

/// Figures read straight from the kernel of this machine, to check snapshots against.
enum KernelTruth {
    static func meminfo() throws -> [String: UInt64] {
        let text = try String(contentsOfFile: "/proc/meminfo", encoding: .utf8)
        var values: [String: UInt64] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":")
            guard parts.count == 2 else { continue }
            let number = parts[1].split(separator: " ").first.flatMap { UInt64($0) } ?? 0
            values[String(parts[0])] = number * 1024
        }
        return values
    }

    /// (size, used, available) in bytes as statvfs gives them.
    static func filesystem(_ path: String) -> (size: UInt64, used: UInt64, available: UInt64)? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        let block = UInt64(info.f_frsize)
        return (
            UInt64(info.f_blocks) * block, (UInt64(info.f_blocks) - UInt64(info.f_bfree)) * block,
            UInt64(info.f_bavail) * block
        )
    }

    /// The network interfaces there are now (`/sys/class/net`), each as its name and index: an interface removed
    /// and made again under the same name gets another index.
    static func interfaces() -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/net")) ?? []
        return Set(
            names.compactMap { name in
                (try? String(contentsOfFile: "/sys/class/net/\(name)/ifindex", encoding: .utf8)).map {
                    name + "#" + $0.trimmingCharacters(in: .whitespacesAndNewlines)
                }
            })
    }

    /// The names of the interfaces of `before` (``interfaces()``) that are still there, the same ones: those a
    /// collection between the two readings saw for its whole time. Other tests add and remove interfaces (veth
    /// pairs of network namespaces) meanwhile, and one that came or went has rightly no rate.
    static func stayed(since before: Set<String>) -> Set<String> {
        Set(before.intersection(interfaces()).map { String($0.prefix { $0 != "#" }) })
    }
}

func harnessConnection(_ server: SSHTestServer) -> HostConnection {
    HostConnection(
        options: SSHConnectionOptions(
            displayName: "harness", hostName: server.host, port: server.port, user: server.user,
            identityFiles: [server.keyPath], identitiesOnly: true, knownHostsFiles: [server.knownHostsPath]))
}

@Suite(.serialized) struct SnapshotGroundTruthTests {
    private func snapshot(_ record: SnapshotRecord) throws -> Snapshot {
        switch record {
        case .snapshot(let snapshot): return snapshot
        case .failure(let failure): throw HarnessError(description: "collection failed: \(failure.message)")
        }
    }

    /// `interfacesBefore`: ``KernelTruth/interfaces()`` before the snapshot began; only those that stayed must have
    /// rates.
    private func checkAgainstKernel(_ snapshot: Snapshot, interfacesBefore: Set<String>) throws {
        let truth = try KernelTruth.meminfo()
        let memory = try #require(snapshot.memory)
        #expect(memory.totalBytes == truth["MemTotal"])
        let available = Double(try #require(memory.availableBytes))
        let trueAvailable = Double(try #require(truth["MemAvailable"]))
        #expect(abs(available - trueAvailable) / trueAvailable < 0.02)
        #expect(memory.usedBytes == memory.totalBytes! - memory.availableBytes!)
        #expect(memory.definition == "total-available")

        #expect(!snapshot.disks.isEmpty)
        let root = try #require(snapshot.disks.first { $0.mount == "/" })
        let statvfs = try #require(KernelTruth.filesystem("/"))
        // df reports 1 KiB blocks: exact to the block.
        #expect(root.sizeBytes.map { $0 / 1024 } == statvfs.size / 1024)
        #expect(root.usedPercent != nil)
        for disk in snapshot.disks where disk.type != "tmpfs" && disk.type != "devtmpfs" {
            guard let truth = KernelTruth.filesystem(disk.mount) else { continue }
            #expect(disk.sizeBytes.map { $0 / 1024 } == truth.size / 1024, "size of \(disk.mount)")
        }

        let cpu = try #require(snapshot.cpu)
        #expect(cpu.cores == ProcessInfo.processInfo.activeProcessorCount)
        let busy = try #require(cpu.busyPercent)
        #expect((0...100).contains(busy))
        let sum = busy + (cpu.idlePercent ?? 0) + (cpu.iowaitPercent ?? 0)
        #expect(abs(sum - 100) < 0.01)
        #expect(cpu.perCore.count == cpu.cores)

        #expect(snapshot.uptimeSeconds.map { $0 > 0 } == true)
        #expect(snapshot.load != nil)
        #expect(snapshot.network.contains { $0.interface == "lo" && $0.rxBytes != nil })
        let stayed = KernelTruth.stayed(since: interfacesBefore)
        #expect(stayed.contains("lo"))
        for interface in snapshot.network where stayed.contains(interface.interface) {
            #expect(interface.rxBytesPerSecond != nil, "\(interface.interface) has no receive rate")
        }

        #expect(!snapshot.processes.isEmpty)
        #expect(snapshot.processes.count <= 10)
        let cpus = snapshot.processes.map { $0.cpuPercent ?? -1 }
        #expect(cpus == cpus.sorted(by: >))
        // The probe's own commands are not listed as the host's busiest processes.
        #expect(!snapshot.processes.contains { $0.command.hasPrefix("head -n 100000") })
        #expect(!snapshot.processes.contains { $0.command.hasPrefix("ps -eo pid,ppid") })
    }

    @Test func aLocalSnapshotAgreesWithTheKernel() async throws {
        let collector = HostCollector(host: "local", runner: LocalCommandRunner())
        let interfaces = KernelTruth.interfaces()
        let snapshot = try snapshot(await collector.snapshot())
        #expect(snapshot.collector == "proc")
        #expect(snapshot.os?.family == "linux")
        try checkAgainstKernel(snapshot, interfacesBefore: interfaces)
    }

    @Test func anSSHSnapshotAgreesWithTheKernel() async throws {
        let connection = harnessConnection(try SSHTestServer.shared())
        let collector = HostCollector(host: "harness", runner: connection)
        let interfaces = KernelTruth.interfaces()
        let snapshot = try snapshot(await collector.snapshot())
        await connection.close()
        try checkAgainstKernel(snapshot, interfacesBefore: interfaces)
    }

    @Test func theToolsCollectorAgreesWithTheProcCollector() async throws {
        let proc = try snapshot(await HostCollector(host: "local", runner: LocalCommandRunner()).snapshot())
        let tools = try snapshot(
            await HostCollector(
                host: "local", runner: LocalCommandRunner(),
                options: CollectorOptions(kind: .tools, sample: .seconds(1))
            ).snapshot())
        #expect(tools.collector == "tools")
        #expect(tools.memory?.totalBytes == proc.memory?.totalBytes)
        let toolsAvailable = Double(tools.memory?.availableBytes ?? 0)
        let procAvailable = Double(proc.memory?.availableBytes ?? 1)
        #expect(abs(toolsAvailable - procAvailable) / procAvailable < 0.02)
        #expect(tools.cpu?.cores == proc.cpu?.cores)
        #expect(tools.cpu?.busyPercent != nil)
        #expect(Set(tools.disks.map(\.mount)) == Set(proc.disks.map(\.mount)))
        for disk in tools.disks {
            let other = proc.disks.first { $0.mount == disk.mount }
            #expect(disk.sizeBytes == other?.sizeBytes, "size of \(disk.mount)")
        }
        #expect(!tools.processes.isEmpty)
        #expect(!tools.warnings.contains { $0.contains("mpstat not found") })
    }

    @Test func withoutSysstatTheToolsCollectorFallsBackAndSaysSo() async throws {
        // A PATH holding every tool the probe uses except mpstat.
        let directory = NSTemporaryDirectory() + "hostscope-nosysstat-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for tool in ["sh", "head", "cat", "sleep", "df", "ps", "free", "uname", "ls"] {
            for prefix in ["/usr/bin/", "/bin/"] where FileManager.default.fileExists(atPath: prefix + tool) {
                try FileManager.default.createSymbolicLink(
                    atPath: directory + "/" + tool, withDestinationPath: prefix + tool)
                break
            }
        }
        let runner = PrefixedRunner(prefix: "PATH=\(directory); export PATH; ", base: LocalCommandRunner())
        let tools = try snapshot(
            await HostCollector(host: "local", runner: runner, options: CollectorOptions(kind: .tools)).snapshot())
        #expect(tools.warnings.contains { $0.contains("mpstat not found (install sysstat)") })
        #expect(tools.cpu?.busyPercent != nil)
        #expect(tools.memory?.totalBytes != nil)
    }

    @Test func watchTicksHaveNoRatesFirstAndRatesAfter() async throws {
        let collector = HostCollector(host: "local", runner: LocalCommandRunner())
        let interfaces = KernelTruth.interfaces()
        let first = try snapshot(await collector.tick())
        #expect(first.cpu?.busyPercent == nil)
        #expect(first.cpu?.cores != nil)
        #expect(first.network.allSatisfy { $0.rxBytesPerSecond == nil })
        try await Task.sleep(for: .milliseconds(300))
        let second = try snapshot(await collector.tick())
        #expect(second.cpu?.busyPercent != nil)
        let stayed = KernelTruth.stayed(since: interfaces)
        #expect(second.network.filter { stayed.contains($0.interface) }.allSatisfy { $0.rxBytesPerSecond != nil })
        #expect(second.network.contains { $0.interface == "lo" && $0.rxBytesPerSecond != nil })
    }

    @Test func watchTicksNameTheirBusiestProcessesAndAskForEachOnlyOnce() async throws {
        // A busy loop with a command line of its own, so it tops the second tick's list.
        let busy = Process()
        busy.executableURL = URL(fileURLWithPath: "/bin/sh")
        busy.arguments = ["-c", "while :; do :; done", "hostscope-busy-marker"]
        try busy.run()
        defer {
            // SIGKILL: the test runner's children may inherit a mask that blocks SIGTERM.
            kill(busy.processIdentifier, SIGKILL)
            busy.waitUntilExit()
        }
        let runner = RecordingRunner(base: LocalCommandRunner())
        let collector = HostCollector(host: "local", runner: runner)
        _ = try snapshot(await collector.tick())
        try await Task.sleep(for: .milliseconds(300))
        let second = try snapshot(await collector.tick())
        let row = try #require(second.processes.first { $0.pid == Int(busy.processIdentifier) })
        #expect(row.command == "/bin/sh -c while :; do :; done hostscope-busy-marker")
        #expect(row.user == NSUserName())
        // Every listed process has a command: its line, or [comm] for a kernel thread.
        #expect(second.processes.allSatisfy { !$0.command.isEmpty })

        // The ticks' own probe reads no command lines; the details come from a second,
        // small probe, which does not ask again for a process it already knows.
        let commands = await runner.runs.map(\.command)
        #expect(commands.filter { $0.contains("sample;") }.allSatisfy { !$0.contains("cmdline") })
        let asked = commands.filter { $0.contains("cmdline;") }
        #expect(asked.contains { $0.contains("/proc/\(busy.processIdentifier)/cmdline") })
        await runner.forget()
        try await Task.sleep(for: .milliseconds(300))
        let third = try snapshot(await collector.tick())
        #expect(third.processes.first { $0.pid == Int(busy.processIdentifier) }?.command == row.command)
        #expect(!(await runner.runs.map(\.command)).contains { $0.contains("/proc/\(busy.processIdentifier)/cmdline") })
    }

    @Test func truncatedProbeOutputBecomesAParseErrorRecord() async throws {
        let runner = CuttingRunner(base: LocalCommandRunner())
        let record = await HostCollector(host: "local", runner: runner).snapshot()
        guard case .failure(let failure) = record else {
            Issue.record("a truncated probe output produced a snapshot")
            return
        }
        #expect(failure.kind == .parse)
        #expect(failure.message.contains("ended early"))
    }

    @Test func aProbeOutputOverTheLimitIsACommandError() async throws {
        let record = await HostCollector(host: "local", runner: LocalCommandRunner(outputLimit: 1000)).snapshot()
        guard case .failure(let failure) = record else {
            Issue.record("an over-long output produced a snapshot")
            return
        }
        #expect(failure.kind == .command)
        #expect(failure.message.contains("output limit"))
    }
}

/// Runs commands through another runner with a shell prefix (an environment for the command).
struct PrefixedRunner: CommandRunner {
    var prefix: String
    var base: any CommandRunner

    func run(_ command: String, timeout: Duration) async throws -> CommandOutput {
        try await base.run(prefix + command, timeout: timeout)
    }
}

/// Delivers only the first half of a real command's output, as a connection cut mid-transfer
/// would; detection runs whole so that the probe itself is what gets cut.
struct CuttingRunner: CommandRunner {
    var base: any CommandRunner

    func run(_ command: String, timeout: Duration) async throws -> CommandOutput {
        var output = try await base.run(command, timeout: timeout)
        if command.contains("sample;") { output.stdout = Array(output.stdout.prefix(output.stdout.count / 2)) }
        return output
    }
}
