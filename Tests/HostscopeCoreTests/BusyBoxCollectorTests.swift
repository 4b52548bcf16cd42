import Foundation
import HostStats
import HostscopeCore
import TestSupport
import Testing

/// A BusyBox userland on this machine: a directory holding one link to `/bin/busybox` per
/// applet it lists, so that with `PATH` set to it alone every command a probe names is an
/// applet, as on Alpine.
enum BusyBoxUserland {
    static let binary = "/bin/busybox"

    /// The applet directory, made once per test run.
    static let directory: Result<String, HarnessError> = {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            return .failure(HarnessError(description: "\(binary) is missing: install Debian's busybox package"))
        }
        let list = Process()
        list.executableURL = URL(fileURLWithPath: binary)
        list.arguments = ["--list"]
        let pipe = Pipe()
        list.standardOutput = pipe
        do {
            try list.run()
        } catch {
            return .failure(HarnessError(description: "cannot run \(binary) --list: \(error)"))
        }
        let names = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        list.waitUntilExit()
        let directory = NSTemporaryDirectory() + "hostscope-busybox-\(getpid())"
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            for name in names.split(separator: "\n") where !name.isEmpty && !name.contains("/") {
                let link = directory + "/" + name
                if !FileManager.default.fileExists(atPath: link) {
                    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: binary)
                }
            }
        } catch {
            return .failure(HarnessError(description: "cannot build the applet directory: \(error)"))
        }
        return .success(directory)
    }()
}

/// Runs commands with BusyBox's own shell (`ash`) and a `PATH` of BusyBox applets only.
struct BusyBoxRunner: CommandRunner {
    var directory: String
    var base: any CommandRunner = LocalCommandRunner()

    func run(_ command: String, timeout: Duration) async throws -> CommandOutput {
        let quoted = "'" + command.replacingOccurrences(of: "'", with: "'\\''") + "'"
        return try await base.run(
            "PATH=\(directory); export PATH; exec \(BusyBoxUserland.binary) sh -c \(quoted)", timeout: timeout)
    }
}

/// Keeps every command and its output, for writing probe fixtures.
actor RecordingRunner: CommandRunner {
    let base: any CommandRunner
    private(set) var runs: [(command: String, output: CommandOutput)] = []

    init(base: any CommandRunner) {
        self.base = base
    }

    func run(_ command: String, timeout: Duration) async throws -> CommandOutput {
        let output = try await base.run(command, timeout: timeout)
        runs.append((command, output))
        return output
    }

    func forget() {
        runs = []
    }

    /// The standard output of the `index`th command with its run's nonce replaced by `NONCE`,
    /// the form Fixtures/probes keeps.
    func normalizedOutput(_ index: Int) -> String {
        let (command, output) = runs[index]
        var text = output.stdoutText
        if let start = command.range(of: "@@"), let colon = command[start.upperBound...].firstIndex(of: ":") {
            let nonce = command[start.upperBound..<colon]
            if !nonce.isEmpty, nonce.allSatisfy(\.isHexDigit) {
                text = text.replacingOccurrences(of: "@@\(nonce):", with: "@@NONCE:")
            }
        }
        return text
    }
}

@Suite(.serialized) struct BusyBoxCollectorTests {
    private func runner() throws -> BusyBoxRunner {
        BusyBoxRunner(directory: try BusyBoxUserland.directory.get())
    }

    private func snapshot(_ record: SnapshotRecord) throws -> Snapshot {
        switch record {
        case .snapshot(let snapshot): return snapshot
        case .failure(let failure): throw HarnessError(description: "collection failed: \(failure.message)")
        }
    }

    @Test func theAppletPathHoldsBusyBoxToolsAndNoGetconf() async throws {
        let runner = try runner()
        let found = try await runner.run(
            "for tool in df grep ls sleep getconf; do command -v $tool; done; true", timeout: .seconds(10))
        let directory = try BusyBoxUserland.directory.get()
        #expect(
            found.stdoutText.split(separator: "\n").map(String.init)
                == ["df", "grep", "ls", "sleep"].map { directory + "/" + $0 })
        let df = try await runner.run("df --version 2>&1; true", timeout: .seconds(10))
        #expect(df.stdoutText.contains("BusyBox") && !df.stdoutText.contains("GNU"))
    }

    @Test func detectionReportsBusyBoxAndReadsThePageSizeWithoutGetconf() async throws {
        let output = try await runner().run(HostPlatform.detectionCommand, timeout: .seconds(10))
        let platform = try HostPlatform.parse(ProbeOutput(output.stdoutText))
        #expect(platform.isBusyBox)
        #expect(platform.os.family == "linux")
        #expect(platform.os.name != nil)
        #expect(!platform.hasSysstat)
        #expect(platform.pageSize == UInt64(sysconf(Int32(_SC_PAGESIZE))))
        #expect(platform.userNames[0] == "root")
    }

    /// Firmware images install the applets as copies or hard links of the binary, not as links
    /// to it: the banner inside the file `ps` runs still names BusyBox (`busybox` itself is on the
    /// PATH beside them, as here, which is what has the detection read `ps`).
    @Test func aPsThatIsACopyOfBusyBoxIsBusyBox() async throws {
        let directory = NSTemporaryDirectory() + "hostscope-busybox-copy-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.copyItem(atPath: BusyBoxUserland.binary, toPath: directory + "/ps")
        let output = try await LocalCommandRunner().run(
            "PATH=\(directory):$PATH; export PATH; " + HostPlatform.detectionCommand, timeout: .seconds(10))
        let platform = try HostPlatform.parse(ProbeOutput(output.stdoutText))
        #expect(platform.isBusyBox, "\(output.stdoutText.prefix(2000))")
    }

    @Test func theSameMachineWithItsGNUUserlandIsNotBusyBox() async throws {
        let output = try await LocalCommandRunner().run(HostPlatform.detectionCommand, timeout: .seconds(10))
        let platform = try HostPlatform.parse(ProbeOutput(output.stdoutText))
        #expect(!platform.isBusyBox, "busybox is installed here, but ps is procps")
    }

    @Test func aBusyBoxSnapshotAgreesWithTheKernel() async throws {
        let collector = HostCollector(
            host: "busybox", runner: try runner(), options: CollectorOptions(topProcesses: 10_000))
        let snapshot = try snapshot(await collector.snapshot())
        #expect(snapshot.collector == "busybox")
        #expect(snapshot.warnings.isEmpty, "\(snapshot.warnings)")

        let truth = try KernelTruth.meminfo()
        let memory = try #require(snapshot.memory)
        #expect(memory.totalBytes == truth["MemTotal"])
        #expect(memory.swapTotalBytes == truth["SwapTotal"])
        let available = Double(try #require(memory.availableBytes))
        let trueAvailable = Double(try #require(truth["MemAvailable"]))
        #expect(abs(available - trueAvailable) / trueAvailable < 0.02)
        #expect(memory.definition == "total-available")

        // BusyBox df lists stacked mounts twice; the snapshot names each mount point once.
        #expect(Set(snapshot.disks.map(\.mount)).count == snapshot.disks.count)
        let root = try #require(snapshot.disks.first { $0.mount == "/" })
        #expect(root.type != nil)
        var info = statvfs()
        #expect(statvfs("/", &info) == 0)
        #expect(root.inodesTotal == UInt64(info.f_files))
        for disk in snapshot.disks {
            guard let truth = KernelTruth.filesystem(disk.mount) else { continue }
            // df reports 1 KiB blocks: exact to the block.
            #expect(disk.sizeBytes.map { $0 / 1024 } == truth.size / 1024, "size of \(disk.mount)")
            if disk.type != "tmpfs" && disk.type != "devtmpfs" {
                #expect(disk.usedPercent != nil, "used_percent of \(disk.mount)")
            }
        }

        let cpu = try #require(snapshot.cpu)
        #expect(cpu.cores == ProcessInfo.processInfo.activeProcessorCount)
        #expect(cpu.perCore.count == cpu.cores)
        let busy = try #require(cpu.busyPercent)
        #expect((0...100).contains(busy))
        #expect(abs(busy + (cpu.idlePercent ?? 0) + (cpu.iowaitPercent ?? 0) - 100) < 0.01)
        #expect(snapshot.load != nil)
        #expect(snapshot.uptimeSeconds.map { $0 > 0 } == true)
        #expect(snapshot.network.contains { $0.interface == "lo" && $0.rxBytesPerSecond != nil })

        // This test process, as the kernel describes it.
        let me = try #require(snapshot.processes.first { $0.pid == Int(getpid()) })
        #expect(me.user == "root" || me.user == String(getuid()))
        #expect(me.ppid == Int(getppid()))
        #expect(me.command.hasPrefix(CommandLine.arguments[0]))
        #expect(me.cpuPercent != nil)
        let statm = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8).split(separator: " ")
        let residentNow = Double(UInt64(statm[1])! * UInt64(sysconf(Int32(_SC_PAGESIZE))))
        #expect(abs(Double(me.rssBytes ?? 0) - residentNow) / residentNow < 0.25)
        #expect(snapshot.processes.contains { $0.pid == 1 && $0.user == "root" })
        // The probe's own shell and applets are not reported as the host's work. Another test process's
        // probe may run at the same moment and is reported, as any process is; this probe's would show as
        // a shell started by this process, or as an applet whose shell is missing from the list.
        let listed = Set(snapshot.processes.map(\.pid))
        let ownProbe = snapshot.processes.filter { process in
            guard process.command.contains("grep -aH") || process.command.contains("df -kPT") else { return false }
            return process.ppid == Int(getpid()) || !listed.contains(process.ppid ?? 0)
        }
        #expect(ownProbe.isEmpty, "\(ownProbe)")
    }

    @Test func everyCollectorChoiceOnBusyBoxRunsTheBusyBoxProbe() async throws {
        for kind in CollectorKind.allCases {
            let collector = HostCollector(host: "busybox", runner: try runner(), options: CollectorOptions(kind: kind))
            let snapshot = try snapshot(await collector.snapshot())
            #expect(snapshot.collector == "busybox", "--collector \(kind.rawValue)")
            #expect(snapshot.memory?.totalBytes != nil)
        }
    }

    @Test func busyBoxAndProcCollectorsReportTheSameFilesystems() async throws {
        let interfaces = KernelTruth.interfaces()
        let busybox = try snapshot(await HostCollector(host: "busybox", runner: try runner()).snapshot())
        let proc = try snapshot(await HostCollector(host: "local", runner: LocalCommandRunner()).snapshot())
        #expect(proc.collector == "proc")
        #expect(Set(busybox.disks.map(\.mount)) == Set(proc.disks.map(\.mount)))
        for disk in busybox.disks {
            let other = try #require(proc.disks.first { $0.mount == disk.mount })
            #expect(disk.filesystem == other.filesystem, "source of \(disk.mount)")
            #expect(disk.type == other.type, "type of \(disk.mount)")
            #expect(disk.sizeBytes == other.sizeBytes, "size of \(disk.mount)")
            #expect(disk.inodesTotal == other.inodesTotal, "inodes of \(disk.mount)")
        }
        #expect(busybox.memory?.totalBytes == proc.memory?.totalBytes)
        // The interfaces there for both collections (other tests add and remove veth pairs meanwhile).
        let stayed = KernelTruth.stayed(since: interfaces)
        #expect(
            Set(busybox.network.map(\.interface)).intersection(stayed)
                == Set(proc.network.map(\.interface)).intersection(stayed))
        #expect(stayed.contains("lo"))
    }

    @Test func busyBoxWatchTicksHaveNoRatesFirstAndRatesAfter() async throws {
        let collector = HostCollector(host: "busybox", runner: try runner())
        let interfaces = KernelTruth.interfaces()
        let first = try snapshot(await collector.tick())
        #expect(first.collector == "busybox")
        #expect(first.cpu?.busyPercent == nil)
        #expect(first.cpu?.cores != nil)
        #expect(first.network.allSatisfy { $0.rxBytesPerSecond == nil })
        #expect(first.processes.allSatisfy { $0.cpuPercent == nil })
        try await Task.sleep(for: .milliseconds(300))
        let second = try snapshot(await collector.tick())
        #expect(second.cpu?.busyPercent != nil)
        let stayed = KernelTruth.stayed(since: interfaces)
        #expect(second.network.filter { stayed.contains($0.interface) }.allSatisfy { $0.rxBytesPerSecond != nil })
        #expect(second.network.contains { $0.interface == "lo" && $0.rxBytesPerSecond != nil })
        #expect(second.processes.contains { $0.cpuPercent != nil })
    }

    @Test func busyBoxWatchTicksReadTheTextfilesOfTheDirectoryGivenWithBusyBoxsTools() async throws {
        let directory = NSTemporaryDirectory() + "hostscope-busybox-textfiles-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try
            "# HELP cron_last_run_seconds When the job last ran.\n# TYPE cron_last_run_seconds gauge\ncron_last_run_seconds 1.7e9\n"
            .write(toFile: directory + "/cron.prom", atomically: true, encoding: .utf8)
        try "backup_ok{target=\"db\"} 1\n".write(toFile: directory + "/backup.prom", atomically: true, encoding: .utf8)
        try "not a metric\n".write(toFile: directory + "/notes.txt", atomically: true, encoding: .utf8)
        var options = CollectorOptions()
        options.textfileDirectory = directory
        let collector = HostCollector(host: "busybox", runner: try runner(), options: options)
        let tick = try snapshot(await collector.tick())
        #expect(tick.collector == "busybox")
        let textfiles = try #require(tick.node?.textfiles, "no textfiles section: \(tick.warnings)")
        #expect(textfiles.map(\.path) == [directory + "/backup.prom", directory + "/cron.prom"])
        #expect(textfiles[0].text.contains("backup_ok{target=\"db\"} 1"))
        #expect(textfiles[1].text.contains("cron_last_run_seconds 1.7e9"))
        let modified = try #require(textfiles[1].modifiedSeconds)
        #expect(abs(modified - Date().timeIntervalSince1970) < 120)
        #expect(tick.node?.textfileError == false)
        // A directory that is not there: no section, no error.
        options.textfileDirectory = directory + "/absent"
        let plain = try snapshot(await HostCollector(host: "busybox", runner: try runner(), options: options).tick())
        #expect(plain.node != nil && plain.node?.textfiles == nil && plain.node?.textfileError == false)
    }

    /// Writes the raw outputs behind Fixtures/probes/busybox-*: the detection script, a one-off
    /// snapshot and two watch ticks, nonces replaced by `NONCE`. Runs only when
    /// `HOSTSCOPE_RECORD_PROBES` names a directory; the fixture's README says how the outputs
    /// are then trimmed.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["HOSTSCOPE_RECORD_PROBES"] != nil))
    func recordABusyBoxProbeFixture() async throws {
        let target = try #require(ProcessInfo.processInfo.environment["HOSTSCOPE_RECORD_PROBES"])
        // A busy process and an idle one with recognisable command lines.
        let busy = Process()
        busy.executableURL = URL(fileURLWithPath: BusyBoxUserland.binary)
        busy.arguments = ["yes", "hostscope-fixture-load"]
        busy.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        let idle = Process()
        idle.executableURL = URL(fileURLWithPath: BusyBoxUserland.binary)
        idle.arguments = ["sleep", "86401"]
        try busy.run()
        try idle.run()
        defer {
            // SIGKILL: the test runner's children may inherit a mask that blocks SIGTERM.
            for process in [busy, idle] {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
        try await Task.sleep(for: .milliseconds(500))
        let recorder = RecordingRunner(base: try runner())
        let collector = HostCollector(host: "busybox", runner: recorder)
        _ = try snapshot(await collector.snapshot())
        _ = try snapshot(await collector.tick())
        try await Task.sleep(for: .seconds(2))
        _ = try snapshot(await collector.tick())
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        // Named as Fixtures/probes/README.md lists them: a details command belongs to the probe before it.
        var probes = ["detect", "snapshot", "tick-1", "tick-2"][...]
        var last = ""
        for (index, run) in await recorder.runs.enumerated() {
            let isDetails = run.command.contains(":cmdline; grep")
            if !isDetails { last = probes.popFirst() ?? "extra-\(index)" }
            try await recorder.normalizedOutput(index).write(
                toFile: target + "/" + last + (isDetails ? "-details" : "") + ".txt", atomically: true, encoding: .utf8)
        }
        try "\(busy.processIdentifier) \(idle.processIdentifier)\n".write(
            toFile: target + "/kept-pids", atomically: true, encoding: .utf8)
    }
}
