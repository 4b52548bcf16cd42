import Foundation
import HostStats
import OrderedJSON
import Testing

/// The kernel files of node_exporter's other default collectors, read from a Linux 6.18 capture and
/// from variants older and newer kernels (and broken reads) print.
@Suite struct NodeFileParserTests {
    static let capture = "captured/node-files-6.18/"
    static let variants = "captured/node-files-variants/"

    @Test func everyMeminfoFieldIsKeptUnderNodeExportersName() throws {
        let parsed = try ProcMemInfoFieldsParser.parse(FixtureText.read(Self.capture + "proc_meminfo.txt"))
        let names = parsed.value.map(\.name)
        #expect(parsed.warnings.isEmpty)
        #expect(names.count == 54)
        #expect(names.contains("Active_anon_bytes") && names.contains("HugePages_Total"))
        #expect(names.contains("Committed_AS_bytes") && names.contains("Hugepagesize_bytes"))
        #expect(parsed.value.first { $0.name == "MemTotal_bytes" }?.value == Double(25_276_502_016))
        let old = try ProcMemInfoFieldsParser.parse(FixtureText.read(Self.variants + "proc_meminfo_linux3.10.txt"))
        #expect(old.value.count == 43)
        #expect(!old.value.map(\.name).contains("KReclaimable_bytes"))
    }

    @Test func conntrackStatisticsAreSummedOverTheCPUsByTheHeadersNamesOnOldAndNewKernels() throws {
        let current = try ProcConntrackStatParser.parse(
            FixtureText.read(Self.capture + "proc_net_stat_nf_conntrack.txt"))
        #expect(current.map(\.name) == ProcConntrackStatParser.fields)
        #expect(current.allSatisfy { $0.value == 0 })
        let old = try ProcConntrackStatParser.parse(
            FixtureText.read(Self.variants + "proc_net_stat_nf_conntrack_linux4.19.txt"))
        let values = Dictionary(uniqueKeysWithValues: old.map { ($0.name, $0.value) })
        #expect(values["found"] == Double(0xa3f1 + 0x1000))
        #expect(values["invalid"] == Double(0x1c + 0x4))
        #expect(values["ignore"] == Double(0x12b40 + 0xc0))
        #expect(values["insert"] == Double(0x4d2 + 0x2e))
        #expect(values["insert_failed"] == 3)
        #expect(values["drop"] == 3)
        #expect(values["early_drop"] == 1)
        #expect(values["search_restart"] == Double(0x11 + 1))
        #expect(throws: ParseError.self) {
            try ProcConntrackStatParser.parse(
                FixtureText.read(Self.variants + "proc_net_stat_nf_conntrack_truncated.txt"))
        }
        #expect(throws: ParseError.self) { try ProcConntrackStatParser.parse("") }
        // A sum past 2^64 is left out, the others kept.
        let huge = try ProcConntrackStatParser.parse(
            "entries found drop\n0 ffffffffffffffff 1\n0 1 1\n")
        #expect(huge == [KernelFigure("drop", 2)])
    }

    @Test func aMeminfoFigurePastTwoToTheSixtyFourIsLeftOutWithAWarning() throws {
        let parsed = try ProcMemInfoFieldsParser.parse(FixtureText.read(Self.variants + "proc_meminfo_overflow.txt"))
        #expect(
            parsed.value.map(\.name) == [
                "MemTotal_bytes", "MemFree_bytes", "HugePages_Total", "Unknown_Future_Field_bytes",
            ])
        #expect(parsed.warnings.count == 2)
        #expect(parsed.warnings.allSatisfy { $0.contains("out of range") })
    }

    @Test func aFieldReadTwiceKeepsItsFirstFigureOnceWithAWarning() throws {
        let parsed = try ProcMemInfoFieldsParser.parse(
            "MemTotal: 100 kB\nActive: 5 kB\nActive: 7 kB\nMemTotal: 9 kB\n")
        #expect(parsed.value.map(\.name) == ["MemTotal_bytes", "Active_bytes"])
        #expect(parsed.value.map(\.value) == [102_400, 5120])
        #expect(parsed.warnings.count == 2)
        let stalls = try ProcPressureParser.parse(
            "some avg10=1.00 avg60=0.00 avg300=0.00 total=5\nsome avg10=2.00 avg60=0.00 avg300=0.00 total=6\n",
            resource: "cpu")
        #expect(stalls.map(\.avg10) == [1.0])
    }

    @Test func adjtimexLinesReadAsTheKernelsStructAndBadOnesAreNamed() throws {
        // Captured on Linux 6.18 x86_64 without time synchronisation (state 5, TIME_ERROR).
        let timex = try TimexParser.parse(
            "5 0 -12 655360 16000000 16000000 8257 2 1 32768000 1795934223 450531 10000 3 4 5 6 7 8 9 10 37\n")
        #expect(timex.state == 5 && !timex.isSynchronised)
        #expect(timex.offset == -12 && timex.frequency == 655_360 && timex.maxError == 16_000_000)
        #expect(timex.status == 8257 && timex.isNanoseconds)
        #expect(timex.tick == 10_000 && timex.ppsFrequency == 3 && timex.jitter == 4 && timex.shift == 5)
        #expect(timex.stability == 6 && timex.jitterCount == 7 && timex.stabilityExceededCount == 10)
        #expect(timex.taiOffset == 37)
        #expect(throws: ParseError.self) { try TimexParser.parse("5 0 0\n") }
        #expect(throws: ParseError.self) { try TimexParser.parse("-1" + String(repeating: " 0", count: 21)) }
        #expect(throws: ParseError.self) { try TimexParser.parse("x" + String(repeating: " 0", count: 21)) }
    }

    @Test func vmstatNetstatSnmp6AndSockstatKeepEachNameOnce() throws {
        let vmstat = try ProcVmStatParser.parse("pgfault 10\npgmajfault 2\npgfault 11\n")
        #expect(vmstat.value == [KernelFigure("pgfault", 10), KernelFigure("pgmajfault", 2)])
        #expect(vmstat.warnings.count == 1)
        let snmp = try ProcNetstatParser.parse(
            "Tcp: ActiveOpens InSegs\nTcp: 3 4\nTcp: ActiveOpens InSegs\nTcp: 5 6\n", source: "/proc/net/snmp")
        #expect(snmp.value == [KernelFigure("Tcp_ActiveOpens", 3), KernelFigure("Tcp_InSegs", 4)])
        #expect(snmp.warnings.count == 2)
        let snmp6 = try ProcNetstatParser.parseSNMP6("Udp6InDatagrams 7\nUdp6InDatagrams 8\n")
        #expect(snmp6.value == [KernelFigure("Udp6_InDatagrams", 7)])
        let sockstat = try ProcSockstatParser.parse("sockets: used 9\nTCP: inuse 1 inuse 2\nsockets: used 3\n")
        #expect(sockstat.value == [KernelFigure("sockets_used", 9), KernelFigure("TCP_inuse", 1)])
        #expect(sockstat.warnings.count == 2)
    }

    @Test func everyNetDevColumnIsNamedFromTheHeader() throws {
        let parsed = try ProcNetDevColumnsParser.parse(FixtureText.read(Self.capture + "proc_net_dev.txt"))
        let eth0 = try #require(parsed.value.first { $0.device == "eth0" })
        #expect(
            eth0.counters.map(\.name) == [
                "receive_bytes", "receive_packets", "receive_errs", "receive_drop", "receive_fifo", "receive_frame",
                "receive_compressed", "receive_multicast", "transmit_bytes", "transmit_packets", "transmit_errs",
                "transmit_drop", "transmit_fifo", "transmit_colls", "transmit_carrier", "transmit_compressed",
            ])
        let glued = try ProcNetDevColumnsParser.parse(
            FixtureText.read(Self.variants + "proc_net_dev_linux2.6_glued.txt"))
        #expect(glued.value[1].counters[0] == KernelFigure("receive_bytes", 4_294_967_295))
        let newer = try ProcNetDevColumnsParser.parse(FixtureText.read(Self.variants + "proc_net_dev_extra_column.txt"))
        #expect(newer.value[0].counters.contains(KernelFigure("receive_nohandler", 7)))
        #expect(newer.value[1].counters.contains(KernelFigure("transmit_carrier", 7)))
    }

    @Test func aTruncatedNetDevLineIsAnErrorNamingIt() {
        #expect {
            try ProcNetDevColumnsParser.parse(FixtureText.read(Self.variants + "proc_net_dev_truncated.txt"))
        } throws: { error in
            (error as? ParseError).map { $0.line == 4 && $0.description.contains("eth0 has 5 counters") } ?? false
        }
    }

    @Test func statGivesContextSwitchesInterruptsForksAndRunQueues() throws {
        let activity = try ProcStatActivityParser.parse(FixtureText.read(Self.capture + "proc_stat.txt")).value
        #expect(activity.contextSwitches.map { $0 > 1000 } == true)
        #expect(activity.interrupts.map { $0 > 1000 } == true)
        #expect(activity.forks.map { $0 > 100 } == true)
        #expect(activity.procsRunning != nil && activity.procsBlocked != nil)
        let partial = try ProcStatActivityParser.parse("cpu 1 2 3 4\nctxt 99\n").value
        #expect(partial == KernelActivity(contextSwitches: 99))
    }

    @Test func vmstatKeepsNodeExportersDefaultFieldsInAnyOrder() throws {
        let parsed = try ProcVmStatParser.parse(FixtureText.read(Self.capture + "proc_vmstat.txt"))
        #expect(
            Set(parsed.value.map(\.name)).isSuperset(of: ["oom_kill", "pgfault", "pgmajfault", "pgpgin", "pswpout"]))
        #expect(parsed.value.allSatisfy { ProcVmStatParser.isDefaultField($0.name[...]) })
        #expect(!parsed.value.map(\.name).contains("nr_free_pages"))
        let reordered = try ProcVmStatParser.parse(FixtureText.read(Self.variants + "proc_vmstat_reordered.txt"))
        #expect(reordered.value.map(\.name) == ["pswpout", "oom_kill", "pgmajfault", "pgpgin", "pgpgout", "pswpin"])
        #expect(reordered.warnings.count == 1 && reordered.warnings[0].contains("pgfault"))
    }

    @Test func pressureGivesSomeAndFullLinesWhereTheKernelHasThem() throws {
        let io = try ProcPressureParser.parse(FixtureText.read(Self.capture + "proc_pressure_io.txt"), resource: "io")
        #expect(io.map(\.kind) == ["some", "full"])
        #expect(io[1].totalMicroseconds == 12_308_005)
        let old = try ProcPressureParser.parse(
            FixtureText.read(Self.variants + "proc_pressure_cpu_linux5.4.txt"), resource: "cpu")
        #expect(old.map(\.kind) == ["some"])
        #expect {
            try ProcPressureParser.parse(
                FixtureText.read(Self.variants + "proc_pressure_memory_truncated.txt"), resource: "memory")
        } throws: { error in (error as? ParseError)?.line == 2 }
    }

    @Test func sockstatNamesEachFigureByProtocolAndState() throws {
        let parsed = try ProcSockstatParser.parse(FixtureText.read(Self.capture + "proc_net_sockstat.txt"))
        #expect(
            parsed.value.map(\.name).prefix(6) == [
                "sockets_used", "TCP_inuse", "TCP_orphan", "TCP_tw", "TCP_alloc", "TCP_mem",
            ])
        let six = try ProcSockstatParser.parse(
            FixtureText.read(Self.capture + "proc_net_sockstat6.txt"), source: "/proc/net/sockstat6")
        #expect(six.value.map(\.name).contains("TCP6_inuse"))
        let old = try ProcSockstatParser.parse(FixtureText.read(Self.variants + "proc_net_sockstat_linux3.10.txt"))
        #expect(old.value.contains(KernelFigure("FRAG_memory", 0)) && old.value.contains(KernelFigure("TCP_mem", 2)))
    }

    @Test func netstatAndSnmpKeepNodeExportersDefaultSelection() throws {
        let netstat = try ProcNetstatParser.parse(FixtureText.read(Self.capture + "proc_net_netstat.txt")).value
        let snmp = try ProcNetstatParser.parse(
            FixtureText.read(Self.capture + "proc_net_snmp.txt"), source: "/proc/net/snmp"
        ).value
        let snmp6 = try ProcNetstatParser.parseSNMP6(FixtureText.read(Self.capture + "proc_net_snmp6.txt")).value
        let names = Set((netstat + snmp + snmp6).map(\.name))
        // The 40 netstat series node_exporter 1.5 gives on this kernel.
        #expect(names.count == 40)
        #expect(
            names.isSuperset(of: [
                "TcpExt_ListenDrops", "IpExt_InOctets", "Tcp_CurrEstab", "Ip_Forwarding",
                "Udp6_InDatagrams", "Icmp6_OutMsgs", "UdpLite6_InErrors", "Ip6_OutOctets",
            ]))
        #expect(!names.contains("Tcp_MaxConn") && !names.contains("TcpExt_TW"))
        #expect {
            try ProcNetstatParser.parse(
                FixtureText.read(Self.variants + "proc_net_snmp_truncated.txt"), source: "/proc/net/snmp")
        } throws: { error in (error as? ParseError).map { $0.line == 2 && $0.description.contains("6 values") } ?? false
        }
    }

    @Test func softnetReadsHexColumnsAndTheCPUColumnWhereThereIsOne() throws {
        let cpus = try ProcSoftnetParser.parse(FixtureText.read(Self.capture + "proc_net_softnet_stat.txt"))
        #expect(
            cpus == [
                SoftnetCPU(cpu: 0, processed: 0x1a, dropped: 0, timeSqueezed: 0),
                SoftnetCPU(cpu: 1, processed: 0x155e, dropped: 0, timeSqueezed: 0),
            ])
        let old = try ProcSoftnetParser.parse(FixtureText.read(Self.variants + "proc_net_softnet_stat_linux3.10.txt"))
        #expect(old.map(\.cpu) == [0, 1] && old[1].dropped == 3 && old[0].timeSqueezed == 2)
    }

    @Test func oneValueFilesUDPQueuesAndARPEntriesAreRead() throws {
        let handles = try KernelValueFilesParser.parseFileNr(FixtureText.read(Self.capture + "proc_sys_fs_file-nr.txt"))
        #expect(handles.allocated == 1240 && handles.maximum == 2_466_170)
        #expect(
            try KernelValueFilesParser.parseValue(
                FixtureText.read(Self.capture + "proc_sys_kernel_random_poolsize.txt"), source: "poolsize") == 256)
        #expect(throws: ParseError.self) { try KernelValueFilesParser.parseValue("", source: "nf_conntrack_count") }
        let udp = try ProcNetUDPParser.parse(FixtureText.read(Self.capture + "proc_net_udp.txt"), ip: "v4")
        #expect(udp == UDPQueues(ip: "v4", transmitBytes: 0, receiveBytes: 0))
        let queued = try ProcNetUDPParser.parse(
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n"
                + "  1: 00000000:0044 00000000:0000 07 00000010:00000200 00:00000000 00000000     0        0 1 2 0 0\n"
                + "  2: 00000000:0045 00000000:0000 07 00000001:00000001 00:00000000 00000000     0        0 1 2 0 0\n",
            ip: "v4")
        #expect(queued == UDPQueues(ip: "v4", transmitBytes: 0x11, receiveBytes: 0x201))
        let arp = try ProcNetArpParser.parse(FixtureText.read(Self.capture + "proc_net_arp.txt"))
        #expect(arp == [KernelFigure("eth0", 1)])
    }

    @Test func mountsGiveEachMountPointsReadOnlyFlagWithEscapesUndone() throws {
        let mounts = try ProcMountsParser.parse(FixtureText.read(Self.capture + "proc_mounts.txt"))
        #expect(mounts.first { $0.mountPoint == "/" }?.readOnly == false)
        let edge = try ProcMountsParser.parse(FixtureText.read(Self.variants + "proc_mounts_edge.txt"))
        #expect(edge.contains { $0.mountPoint.contains(" ") })
        #expect(
            try ProcMountsParser.parse("/dev/sdb1 /mnt/a\\040b ext4 ro,noatime 0 0\n") == [
                MountEntry(device: "/dev/sdb1", mountPoint: "/mnt/a b", type: "ext4", readOnly: true)
            ])
    }

    @Test func netClassLinesBecomeEachDevicesAttributesAndARefusedFileIsAbsent() {
        let devices = NetClassParser.parse(
            "/sys/class/net/eth0/mtu:1500\n/sys/class/net/eth0/ifalias:\n/sys/class/net/lo/mtu:65536\n"
                + "/sys/class/net/eth0/operstate:up\n")
        #expect(
            devices == [
                NetworkDeviceClass(device: "eth0", attributes: ["mtu": "1500", "ifalias": "", "operstate": "up"]),
                NetworkDeviceClass(device: "lo", attributes: ["mtu": "65536"]),
            ])
    }
}

/// The probe's reads of those files on this machine, through a real shell, and the clock read once
/// per connection.
@Suite struct NodeFiguresProbeTests {
    @Test func oneTickReadsEveryFileThisKernelHasAndTheClockWithoutADatePerTick() throws {
        let detection = try HostPlatform.parse(ProbeOutput(try LocalShell.run(HostPlatform.detectionCommand)))
        let base = try #require(detection.clockBase)
        #expect(detection.os.nodename?.isEmpty == false && detection.os.kernelVersion?.hasPrefix("#") == true)
        #expect(detection.os.domainname != nil && detection.os.release["ID"] != nil)
        #expect(detection.networkClass.contains { $0.device == "lo" && $0.attributes["mtu"] != nil })

        let nonce = ProbeOutput.makeNonce()
        let command = LinuxProcProbe.command(sampleSeconds: nil, nonce: nonce, processDetails: false)
        #expect(!command.contains("date "))
        let result = try LinuxProcProbe.parse(
            ProbeOutput(try LocalShell.run(command), nonce: nonce), platform: detection)
        let node = try #require(result.node)
        #expect(result.warnings == [])
        #expect(node.memory.count > 40 && node.vmstat.count >= 5 && node.netstat.count > 20)
        #expect(node.sockets.contains { $0.name == "sockets_used" })
        #expect(node.activity?.contextSwitches != nil && node.fileHandlesMaximum != nil)
        #expect(node.softnet.count == ProcessInfo.processInfo.activeProcessorCount)
        #expect(node.udpQueues.map(\.ip) == ["v4", "v6"] && !node.mounts.isEmpty)
        #expect(node.networkClass.contains { $0.device == "lo" && $0.attributes["operstate"] != nil })
        #expect(node.pressure.isEmpty == !FileManager.default.fileExists(atPath: "/proc/pressure/cpu"))
        let clock = try #require(node.hostClockSeconds)
        #expect(abs(clock - Date().timeIntervalSince1970) < 2)
        #expect(abs(clock - (base + (result.samples.last?.uptimeSeconds ?? 0))) < 0.001)
    }

    @Test func aClockSteppedSinceTheConnectionGivesAwksWholeSeconds() {
        var warnings: [String] = []
        let node = NodeFiguresReader.read(
            files: ["(clock)": "1795921229"], clock: nil, textfiles: nil, pageSize: 4096, clockBase: 1_795_000_000,
            uptime: 100.5, warnings: &warnings)
        #expect(node.hostClockSeconds == 1_795_921_229)
        let steady = NodeFiguresReader.read(
            files: ["(clock)": "1795000100"], clock: nil, textfiles: nil, pageSize: 4096, clockBase: 1_795_000_000,
            uptime: 100.5, warnings: &warnings)
        #expect(steady.hostClockSeconds == 1_795_000_100.5)
    }
}

/// The snapshot JSON's `kernel` object: written where the collector read the kernel files, read back.
@Suite struct NodeFiguresJSONTests {
    @Test func theKernelObjectComesLastAndReadsBackAsWritten() throws {
        var node = NodeFigures()
        node.activity = KernelActivity(contextSwitches: 10, interrupts: 20, forks: 30, procsRunning: 2, procsBlocked: 0)
        node.pressure = [
            PressureStall(
                resource: "io", kind: "some", avg10: 1.5, avg60: 0.5, avg300: 0.25, totalMicroseconds: 1_500_000)
        ]
        node.memory = [KernelFigure("MemTotal_bytes", 1024), KernelFigure("HugePages_Total", 0)]
        node.fileHandlesMaximum = 99
        node.hostClockSeconds = 1_795_921_229.5
        node.clockOffsetSeconds = -0.002
        node.timex = try TimexParser.parse(
            "5 0 -12 655360 16000000 16000000 64 2 1 32768000 1795934223 450531 10000 3 4 5 6 7 8 9 10 37")
        var snapshot = Snapshot(
            host: "web1", collectedAt: Date(timeIntervalSince1970: 1_795_921_229), collector: "proc")
        #expect(snapshot.jsonValue.objectValue?.keys.contains("kernel") == false)
        snapshot.node = node
        let json = snapshot.jsonValue
        #expect(json.objectValue?.keys.last == "kernel")
        #expect(json["kernel"]?["meminfo"]?["MemTotal_bytes"] == .uint(1024))
        #expect(json["kernel"]?["pressure"]?["io"]?["some"]?["total_seconds"]?.doubleValue == 1.5)
        #expect(json["kernel"]?["file_handles_allocated"]?.isNull == true)
        #expect(json["kernel"]?["timex"]?["synchronised"] == .bool(false))
        #expect(json["kernel"]?["timex"]?["maxerror"]?.doubleValue == 16_000_000)
        guard case .snapshot(let read) = try SnapshotRecord(json: json) else {
            Issue.record("not read back as a snapshot")
            return
        }
        #expect(read.node == node)
    }
}

/// Every new parser over mutated copies of the captures (cut short, lines swapped, bytes changed,
/// digits appended until they overflow): each reads or throws a ParseError, never traps.
@Suite struct NodeFileParserMutationTests {
    /// A fixed-seed generator, so a failure repeats.
    struct SplitMix {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(max(1, bound)))
        }
    }

    static func mutations(of text: String, count: Int, seed: UInt64) -> [String] {
        var random = SplitMix(state: seed)
        var results: [String] = []
        let bytes = Array(text.utf8)
        for _ in 0..<count {
            var mutated = bytes
            switch random.next(4) {
            case 0: mutated = Array(mutated.prefix(random.next(mutated.count + 1)))
            case 1:
                var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
                if lines.count > 1 { lines.swapAt(random.next(lines.count), random.next(lines.count)) }
                mutated = Array(lines.joined(separator: "\n").utf8)
            case 2:
                for _ in 0..<3 where !mutated.isEmpty {
                    mutated[random.next(mutated.count)] = [UInt8(ascii: "9"), 0x20, 0x0A, 0x3A, 0xFF][random.next(5)]
                }
            default:
                if let digit = mutated.lastIndex(where: { $0 >= 48 && $0 <= 57 }) {
                    mutated.insert(contentsOf: Array(repeating: UInt8(ascii: "9"), count: 25), at: digit)
                }
            }
            results.append(String(decoding: mutated, as: UTF8.self))
        }
        return results
    }

    @Test func mutatedCapturesParseOrFailWithAParseError() throws {
        let root = "captured/node-files-6.18/"
        let parsers: [(String, (String) throws -> Void)] = [
            ("proc_meminfo.txt", { _ = try ProcMemInfoFieldsParser.parse($0) }),
            ("proc_net_dev.txt", { _ = try ProcNetDevColumnsParser.parse($0) }),
            ("proc_stat.txt", { _ = try ProcStatActivityParser.parse($0) }),
            ("proc_vmstat.txt", { _ = try ProcVmStatParser.parse($0) }),
            ("proc_pressure_io.txt", { _ = try ProcPressureParser.parse($0, resource: "io") }),
            ("proc_net_sockstat.txt", { _ = try ProcSockstatParser.parse($0) }),
            ("proc_net_netstat.txt", { _ = try ProcNetstatParser.parse($0) }),
            ("proc_net_snmp6.txt", { _ = try ProcNetstatParser.parseSNMP6($0) }),
            ("proc_net_softnet_stat.txt", { _ = try ProcSoftnetParser.parse($0) }),
            ("proc_net_udp6.txt", { _ = try ProcNetUDPParser.parse($0, ip: "v6") }),
            ("proc_net_arp.txt", { _ = try ProcNetArpParser.parse($0) }),
            ("proc_mounts.txt", { _ = try ProcMountsParser.parse($0) }),
            ("proc_sys_fs_file-nr.txt", { _ = try KernelValueFilesParser.parseFileNr($0) }),
        ]
        var read = 0
        var refused = 0
        for (index, (file, parse)) in parsers.enumerated() {
            for text in Self.mutations(of: try FixtureText.read(root + file), count: 200, seed: UInt64(index + 1)) {
                do {
                    try parse(text)
                    read += 1
                } catch is ParseError {
                    refused += 1
                }
            }
        }
        #expect(read + refused == parsers.count * 200)
        #expect(read > 0 && refused > 0)
    }
}
