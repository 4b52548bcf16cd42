import Foundation
import Testing

@testable import HostStats

/// The probe's awk reader (``LinuxProcProbe/sampleAwk``) against grep, over this machine's own
/// `/proc`, with every awk installed here (mawk, BusyBox's, gawk): the same processes, read the
/// same, whatever their names, in a fraction of the bytes.
@Suite(.serialized) struct SampleAwkTests {
    private let platform = HostPlatform(os: OSInfo(family: "linux"), userNames: [0: "root"])

    /// The awks this machine has, as commands; `awk` itself is always one of them on Debian.
    static let awks: [String] = {
        var found: [String] = []
        for (command, path) in [
            ("mawk", "/usr/bin/mawk"), ("gawk", "/usr/bin/gawk"), ("busybox awk", "/bin/busybox"),
            ("original-awk", "/usr/bin/original-awk"),
        ] where FileManager.default.isExecutableFile(atPath: path) {
            found.append(command)
        }
        return found.isEmpty ? ["awk"] : found
    }()

    /// One sample read with `reader` (a command taking the files as operands), parsed as the probe's.
    private func sample(_ reader: String, files: [String], stdin: String) throws -> LinuxCounterSample {
        let nonce = ProbeOutput.makeNonce()
        let marker = "echo " + ProbeOutput.markerPrefix(nonce)
        let script =
            "export LC_ALL=C; \(marker)sample; printf '\(stdin)' | \(reader) \(files.joined(separator: " ")) - "
            + "2>/dev/null; \(marker)end"
        let result = try LinuxProcProbe.parse(ProbeOutput(try LocalShell.run(script), nonce: nonce), platform: platform)
        return try #require(result.samples.first)
    }

    @Test(arguments: awks) func awkReadsEveryProcessAsGrepDoesWhateverItsName(awk: String) throws {
        try ProcessNameTests.withOddlyNamedProcesses(extraNames: ["x) S 1 2 3", "t\tab", "e )", "("]) { started in
            let pids = started.map(\.pid)
            // A pid that is not running: awk must go on past the file it cannot open.
            let files =
                ["/proc/uptime", "/proc/stat", "/proc/999999999/stat", "/proc/1/stat"]
                + pids.map { "/proc/\($0)/stat" }
            let grep = try sample(LinuxProcProbe.sampleGrep, files: files, stdin: "rows of df\\n")
            let awk = try sample("\(awk) '\(LinuxProcProbe.sampleAwk)'", files: files, stdin: "rows of df\\n")
            #expect(awk.uptimeSeconds >= grep.uptimeSeconds)
            let byPid = Dictionary(grep.processes.map { ($0.pid, $0) }, uniquingKeysWith: { first, _ in first })
            #expect(Set(awk.processes.map(\.pid)) == Set([1] + pids))
            for process in awk.processes {
                // A short line leaves out the virtual size, which nothing shows.
                var whole = byPid[process.pid]
                whole?.virtualBytes = nil
                var read = process
                read.virtualBytes = nil
                if process.pid == 1, let earlier = whole {
                    // Init is not this test's: it may have run, changed state or memory between the two reads.
                    #expect(read.cpuTicks >= earlier.cpuTicks && read.cpuTicks - earlier.cpuTicks < 1000)
                    read.cpuTicks = earlier.cpuTicks
                    read.state = earlier.state
                    read.rssPages = earlier.rssPages
                }
                #expect(whole == read, "pid \(process.pid) read differently by \(awk)")
                #expect((process.virtualBytes == nil) == (process.comm != "nl\nx"))
            }
            // The name with a newline is still one process, its name whole.
            #expect(awk.processes.contains { $0.comm == "nl\nx" })
            #expect(awk.processes.contains { $0.comm == "x) S 1 2 3" && $0.state == "S" })
        }
    }

    @Test(arguments: awks) func awkPrintsShortProcessLinesAndPassesOtherFilesAndStandardInputWhole(awk: String)
        throws
    {
        let program = "\(awk) '\(LinuxProcProbe.sampleAwk)'"
        let output = try LocalShell.run("printf 'a b\\n' | \(program) /proc/loadavg /proc/1/stat -")
        var lines = output.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        // The host's clock in whole seconds first.
        let clock = try #require(lines.first.flatMap { Double($0.dropFirst("(clock):".count)) })
        #expect(abs(clock - Date().timeIntervalSince1970) < 5)
        lines.removeFirst()
        #expect(lines.first?.hasPrefix("/proc/loadavg:") == true)
        // `PID:(comm) state ppid utime stime starttime rss`.
        let short = try #require(lines.dropFirst().first)
        #expect(short.hasPrefix("1:("))
        #expect(short.split(separator: ")").last?.split(separator: " ").count == 6)
        #expect(lines.last == "(standard input):a b")
        // Without `-` it reads no standard input: in the probe's shell that is the next commands.
        let left = try LocalShell.run("printf 'next command\\n' | { \(program) /proc/loadavg >/dev/null; cat; }")
        #expect(left == "next command\n")
    }

    @Test(arguments: awks) func awkCutsVmstatToNodeExportersFieldsAndBoundsTheTextfiles(awk: String) throws {
        let program = "\(awk) '\(LinuxProcProbe.sampleAwk)'"
        let vmstat = try LocalShell.run("\(program) /proc/vmstat").split(separator: "\n").dropFirst()
        #expect(!vmstat.isEmpty)
        #expect(
            vmstat.allSatisfy {
                ProcVmStatParser.isDefaultField($0.dropFirst("/proc/vmstat:".count).prefix { $0 != " " })
            })
        #expect(vmstat.contains { $0.hasPrefix("/proc/vmstat:pgfault ") })
        let directory = NSTemporaryDirectory() + "hostscope-prom-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let count = NodeFiguresReader.textfileLimit + 2
        for index in 0..<count {
            let lines = index == 0 ? NodeFiguresReader.textfileLineLimit + 1 : 1
            try String(repeating: "m\(index) 1\n", count: lines)
                .write(toFile: directory + String(format: "/%03d.prom", index), atomically: true, encoding: .utf8)
        }
        let output = try LocalShell.run("\(program) \(directory)/*.prom").split(separator: "\n")
        let cut = output.filter { $0.hasPrefix("(cut):") }
        // The long file after its bound, and the two files past the count.
        #expect(cut.count == 3)
        #expect(output.count == 1 + NodeFiguresReader.textfileLineLimit + (NodeFiguresReader.textfileLimit - 1) + 3)
    }

    @Test func theProbeReadsProcessesThroughAwkInAFractionOfGrepsBytes() throws {
        let nonce = ProbeOutput.makeNonce()
        let command = LinuxProcProbe.command(sampleSeconds: nil, nonce: nonce, processDetails: false)
        #expect(command.contains(LinuxProcProbe.sampleAwk))
        let text = try LocalShell.run(command)
        let result = try LinuxProcProbe.parse(ProbeOutput(text, nonce: nonce), platform: platform)
        let processes = try #require(result.samples.first?.processes)
        #expect(processes.contains { $0.pid == 1 })
        let grepped = try LocalShell.run("\(LinuxProcProbe.sampleGrep) /proc/[0-9]*/stat 2>/dev/null")
        let grepLines = grepped.split(separator: "\n").count
        // The same processes, give or take those that started or ended in between.
        #expect(abs(processes.count - grepLines) < max(20, grepLines / 10))
        // The process lines alone, as the probe reads them: a small part of grep's bytes.
        let read = try LocalShell.run("\(LinuxProcProbe.sampleReader("/proc/[0-9]*/stat")) 2>/dev/null")
        #expect(abs(read.split(separator: "\n").count - grepLines) < max(20, grepLines / 10))
        #expect(read.utf8.count < grepped.utf8.count / 3, "\(read.utf8.count) against \(grepped.utf8.count) bytes")
    }

    @Test func withoutAwkTheProbeFallsBackToGrep() throws {
        // A PATH in which `awk` is not found: the probe's own tools, awk left out.
        let bin = FileManager.default.temporaryDirectory.appendingPathComponent("hostscope-noawk-\(getpid())")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: bin) }
        for tool in ["grep", "df", "sleep", "cat"] {
            try FileManager.default.createSymbolicLink(
                atPath: bin.appendingPathComponent(tool).path, withDestinationPath: "/bin/\(tool)")
        }
        let nonce = ProbeOutput.makeNonce()
        let command = LinuxProcProbe.command(sampleSeconds: 0.05, nonce: nonce, processDetails: false)
        let text = try LocalShell.run("PATH=\(bin.path); \(command)")
        #expect(text.contains("/proc/1/stat:1 ("))
        let result = try LinuxProcProbe.parse(ProbeOutput(text, nonce: nonce), platform: platform)
        #expect(result.samples.count == 2)
        #expect(result.samples.allSatisfy { $0.processes.contains { $0.pid == 1 } })
        #expect(result.disks?.contains { $0.mount == "/" } == true)
    }

    @Test func theTextfileListingStartsStatOnlyWhereTheDirectoryHoldsAPromFile() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("hostscope-textfiles-\(getpid())")
        let directory = base.appendingPathComponent("textfiles")
        let bin = base.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: base) }
        // A `stat` that notes each start, then runs the real one.
        let started = base.appendingPathComponent("stat-started")
        let stat = bin.appendingPathComponent("stat")
        try "#!/bin/sh\necho x >>\(started.path)\nexec /usr/bin/stat \"$@\"\n".write(
            to: stat, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: stat.path)
        let listing = LinuxProcProbe.textfileListing(marker: "echo @@", directory: directory.path)
        // Debian's node_exporter package leaves its directory there and empty: the section, no process.
        let empty = try LocalShell.run(listing, path: bin.path)
        #expect(empty == "@@textfiles\n")
        #expect(!FileManager.default.fileExists(atPath: started.path))
        try "a 1\n".write(to: directory.appendingPathComponent("a.prom"), atomically: true, encoding: .utf8)
        try "b 1\n".write(to: directory.appendingPathComponent("b.prom"), atomically: true, encoding: .utf8)
        let listed = try LocalShell.run(listing, path: bin.path)
        let lines = listed.split(separator: "\n").dropFirst().map { $0.split(separator: " ").last.map(String.init) }
        #expect(
            lines == [directory.appendingPathComponent("a.prom").path, directory.appendingPathComponent("b.prom").path])
        #expect(try String(contentsOf: started, encoding: .utf8) == "x\n")
    }

    @Test(arguments: awks) func awkCutsNetstatToTheFieldsTheParserKeepsWithTheSameFigures(awk: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hostscope-netstat-\(getpid())")
        let net = directory.appendingPathComponent("net")
        try FileManager.default.createDirectory(at: net, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // This machine's files, copied once so that both readings see the same counters; and a file whose
        // second pair has a value too few (the parser's error must survive the cut) after an unknown column.
        for name in ["netstat", "snmp", "snmp6"] {
            // A copy of a /proc file by size would be empty: its size is 0.
            try String(contentsOfFile: "/proc/net/\(name)", encoding: .utf8).write(
                to: net.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let odd = directory.appendingPathComponent("odd/net")
        try FileManager.default.createDirectory(at: odd, withIntermediateDirectories: true)
        try "Tcp: ActiveOpens NewField InErrs\nTcp: 5 7 2\nUdp: InDatagrams NoPorts\nUdp: 9\n".write(
            to: odd.appendingPathComponent("snmp"), atomically: true, encoding: .utf8)
        let paths = ["netstat", "snmp", "snmp6"].map { net.appendingPathComponent($0).path }
        let oddPath = odd.appendingPathComponent("snmp").path
        let output = try LocalShell.run(
            "\(awk) '\(LinuxProcProbe.sampleAwk)' \((paths + [oddPath]).joined(separator: " "))")
        func cut(_ path: String) -> String {
            output.split(separator: "\n").filter { $0.hasPrefix(path + ":") }.map {
                $0.dropFirst(path.count + 1) + "\n"
            }
            .joined()
        }
        for path in paths.prefix(2) {
            let whole = try ProcNetstatParser.parse(String(contentsOfFile: path, encoding: .utf8)).value
            #expect(!whole.isEmpty)
            #expect(try ProcNetstatParser.parse(cut(path)).value == whole, "\(path) read by \(awk)")
        }
        let snmp6 = try ProcNetstatParser.parseSNMP6(String(contentsOfFile: paths[2], encoding: .utf8)).value
        #expect(try ProcNetstatParser.parseSNMP6(cut(paths[2])).value == snmp6)
        // The cut keeps what node_exporter keeps and nothing else: a fraction of the bytes.
        let whole = try paths.map { try String(contentsOfFile: $0, encoding: .utf8) }.joined()
        #expect(paths.map(cut).joined().utf8.count < whole.utf8.count / 3)
        #expect(cut(oddPath) == "Tcp: ActiveOpens InErrs\nTcp: 5 2\nUdp: InDatagrams NoPorts\nUdp: 9\n")
        #expect(throws: ParseError.self) { try ProcNetstatParser.parse(cut(oddPath)) }
    }

    /// Whether `pid` runs: it has a `/proc` entry and is not a zombie (an ended process whose parent has not
    /// collected it: a process left by a shell that ended is handed to a reaper that may be slow, or this test).
    static func running(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        return stat.split(separator: ")").last?.split(separator: " ").first != "Z"
    }

    /// A directory holding `awk` as a link to `awk` (one of ``awks``), for the front of PATH.
    private func awkDirectory(_ awk: String) throws -> URL {
        let bin = FileManager.default.temporaryDirectory.appendingPathComponent("hostscope-awk-\(getpid())-\(UUID())")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let target =
            ["mawk": "/usr/bin/mawk", "gawk": "/usr/bin/gawk", "busybox awk": "/bin/busybox"][awk]
            ?? "/usr/bin/\(awk)"
        try FileManager.default.createSymbolicLink(
            atPath: bin.appendingPathComponent("awk").path, withDestinationPath: target)
        return bin
    }

    /// What a tick's node figures hold, family by family (names and counts, not the moving values).
    private func shape(_ node: NodeFigures?) -> [String] {
        guard let node else { return ["none"] }
        return [
            node.memory.map(\.name).joined(separator: ","), node.vmstat.map(\.name).joined(separator: ","),
            node.sockets.map(\.name).joined(separator: ","), node.netstat.map(\.name).joined(separator: ","),
            "pressure \(node.pressure.count)", "softnet \(node.softnet.count)", "udp \(node.udpQueues.count)",
            "mounts \(node.mounts.count)", "devices \(node.networkDevices.count)",
            "entropy \(node.entropyAvailable != nil)", "filefd \(node.fileHandlesAllocated != nil)",
            "activity \(node.activity != nil)", "clock \(node.hostClockSeconds != nil)",
            "textfiles \(node.textfiles?.count ?? -1)",
        ]
    }

    @Test(arguments: awks) func theConnectionsReaderAnswersTwentyTicksInOneShellAsAFreshAwkDoes(awk: String) throws {
        let bin = try awkDirectory(awk)
        defer { try? FileManager.default.removeItem(at: bin) }
        let setup = ProbeOutput.makeNonce()
        let ticks = (0..<20).map { _ in ProbeOutput.makeNonce() }
        let fresh = ProbeOutput.makeNonce()
        // One shell, as the session's: the reader started in it, twenty ticks through it, then a fresh tick.
        var script = "export LC_ALL=C LANG=C; "
        script += LinuxProcProbe.readerStart(marker: "echo @@\(setup):", shell: "\"$$\"") + "echo @@\(setup):end; "
        for nonce in ticks { script += LinuxProcProbe.readerCommand(nonce: nonce) + "; " }
        script += LinuxProcProbe.command(sampleSeconds: nil, nonce: fresh, processDetails: false)
        let text = try LocalShell.run(script, path: bin.path)
        let reader = try #require(
            ProbeOutput(text, nonce: setup).section("reader").flatMap {
                Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
            },
            "the reader did not start with \(awk)")
        let expected = try LinuxProcProbe.parse(ProbeOutput(text, nonce: fresh), platform: platform)
        let expectedSample = try #require(expected.samples.first)
        for nonce in ticks {
            let output = ProbeOutput(text, nonce: nonce)
            #expect(output.section("noreader") == nil)
            let result = try LinuxProcProbe.parse(output, platform: platform)
            let sample = try #require(result.samples.first)
            #expect(result.samples.count == 1)
            #expect(sample.cpu.perCore.count == expectedSample.cpu.perCore.count)
            #expect(sample.network.map(\.interface) == expectedSample.network.map(\.interface))
            #expect(sample.disks.map(\.device) == expectedSample.disks.map(\.device))
            // The same processes, give or take the fresh awk and the reader, children of the one shell.
            #expect(sample.processes.contains { $0.pid == Int(reader) })
            #expect(abs(sample.processes.count - expectedSample.processes.count) <= 4)
            #expect(result.memory?.totalBytes == expected.memory?.totalBytes)
            #expect(result.load != nil)
            #expect(result.disks?.map(\.mount) == expected.disks?.map(\.mount))
            #expect(shape(result.node) == shape(expected.node), "a tick through \(awk)'s reader")
            #expect(result.warnings == expected.warnings)
        }
        // The shell has ended, and with it the reader (the end of its input).
        var alive = true
        for _ in 0..<50 where alive {
            alive = Self.running(reader)
            if alive { usleep(20000) }
        }
        #expect(!alive, "the reader outlived its shell")
    }

    @Test func aShellWithoutAReaderSaysSoAndStartsNone() throws {
        let nonce = ProbeOutput.makeNonce()
        let output = ProbeOutput(try LocalShell.run(LinuxProcProbe.readerCommand(nonce: nonce)), nonce: nonce)
        #expect(output.isComplete)
        #expect(output.section("noreader") != nil)
        #expect(output.sectionBytes(named: "sample").isEmpty)
        // A script in another shell than the one named starts no reader.
        let other = ProbeOutput.makeNonce()
        let command = LinuxProcProbe.command(
            sampleSeconds: nil, nonce: other, processDetails: false, startReaderIn: Int(getpid()))
        let started = ProbeOutput(try LocalShell.run(command), nonce: other)
        #expect(started.isComplete)
        #expect(started.section("reader") == nil)
    }
}
