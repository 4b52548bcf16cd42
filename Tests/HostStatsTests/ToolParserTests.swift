import HostStats
import Testing

@Suite struct MpstatParserTests {
    static let textFixtures = FixtureCase.all().filter { $0.tool == "mpstat" && !$0.expectsError }.map(\.file)

    @Test(arguments: textFixtures)
    func sharesSumToOneHundred(_ path: String) throws {
        let cpu = try MpstatParser.parse(FixtureText.read(path)).value
        guard let idle = cpu.idlePercent else {
            #expect(cpu.busyPercent == nil, "\(path): busy without idle")
            return
        }
        let shares = [
            cpu.userPercent, cpu.nicePercent, cpu.systemPercent, cpu.iowaitPercent, cpu.irqPercent,
            cpu.softirqPercent, cpu.stealPercent,
        ].compactMap { $0 }
        #expect(abs(shares.reduce(idle, +) - 100) <= 0.05, "\(path)")
        #expect(cpu.busyPercent! <= cpu.activePercent!)
    }

    @Test func averageRowsAreUsedUnderEveryLabel() throws {
        let german = try MpstatParser.parse(FixtureText.read("generated/debian12-de_DE/mpstat_P_ALL_1_1.txt")).value
        #expect(german.idlePercent == 56.78 && german.userPercent == 38.69)
        #expect(german.perCore.map(\.busyPercent) == [40, 44.44])
        let french = """
            Linux 6.1.0 (vm) \t21/11/2026 \t_x86_64_\t(2 CPU)

            19:23:38     CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle
            19:23:39     all   38,69    0,00    3,52    1,01    0,00    0,00    0,00    0,00    0,00   56,78

            Moyenne\u{202F}:    all   40,00    0,00    4,00    1,00    0,00    0,00    0,00    0,00    0,00   55,00
            """
        let cpu = try MpstatParser.parse(french).value
        #expect(cpu.idlePercent == 55 && cpu.busyPercent == 44)
    }

    @Test func twelveHourClocksDoNotShiftColumns() throws {
        let cpu = try MpstatParser.parse(FixtureText.read("generated/debian12-en_US/mpstat_P_ALL_1_1.txt")).value
        #expect(cpu.idlePercent == 97.49 && cpu.sampleMs == 1000)
        #expect(cpu.perCore.map(\.core) == [0, 1])
    }

    @Test func guestTimeIsFoldedIntoUserAsProcStatCountsIt() throws {
        let text = """
            12:00:00     CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle
            12:00:01     all   10.00    1.00    5.00    0.00    0.00    0.00    0.00   20.00    2.00   62.00
            Average:     all   10.00    1.00    5.00    0.00    0.00    0.00    0.00   20.00    2.00   62.00
            """
        let cpu = try MpstatParser.parse(text).value
        #expect(cpu.userPercent == 30 && cpu.nicePercent == 3)
    }

    @Test func sinceBootOutputGivesNoCurrentFigures() throws {
        let parsed = try MpstatParser.parse(FixtureText.read("public/linux-centos7-sysstat10.1.5/mpstat.txt"))
        #expect(parsed.value.busyPercent == nil && parsed.value.cores == 1)
        #expect(parsed.warnings.contains { $0.contains("since boot") })
    }

    @Test func mpstatAgreesWithProcStatOverTheSameWindow() throws {
        let text = try FixtureText.read("captured/debian12-local/proc_stat_around_mpstat.txt")
        let samples = try ProcStatParser.parseSamples(text)
        let truth = CPUStats(from: samples[0], to: samples[1], elapsedMs: nil)
        let mpstat = try MpstatParser.parse(text).value
        // The /proc/stat reads bracket mpstat's two seconds with a few milliseconds on each side.
        #expect(abs(mpstat.busyPercent! - truth.busyPercent!) < 5)
        #expect(abs(mpstat.userPercent! - truth.userPercent!) < 5)
    }

    @Test func jsonOutputUsesItsLastStatistics() throws {
        let cpu = try MpstatParser.parse(FixtureText.read("generated/debian12/mpstat_o_JSON_1_1.txt")).value
        #expect(cpu.cores == 2 && cpu.idlePercent == 23.5 && cpu.softirqPercent == 0.5)
    }
}

@Suite struct PsParserTests {
    @Test func aShortNameHoldingParenthesesAndSpacesDoesNotShiftColumns() throws {
        let processes = try PsParser.parse(FixtureText.read("generated/debian12-edge/ps_edge_pids.txt")).value
        let evil = try #require(processes.first { $0.pid == 10927 })
        #expect(evil.cpuPercent == 12.3 && evil.rssBytes == 8324 * 1024)
        #expect(evil.command == "/usr/bin/python3 spin.py --label=paren)(test")
        #expect(processes.first { $0.pid == 10926 }?.command.hasSuffix("日本語 ✓ émoji 🚀") == true)
        #expect(processes.first { $0.pid == 10930 }?.command == "fake argv0 with space ü 900")
    }

    @Test func zombiesKeepTheirDefunctMarker() throws {
        let processes = try PsParser.parse(FixtureText.read("generated/debian12-edge/ps_zombies.txt")).value
        #expect(processes.filter { $0.command == "[python3] <defunct>" }.count == 2)
    }

    @Test func busyboxScaledSizesAndBracedNamesRead() throws {
        let processes = try PsParser.parse(FixtureText.read("generated/debian12-edge/busybox_ps_o.txt")).value
        #expect(processes.first?.rssBytes == 14 << 20)
        let zombies = try PsParser.parse(FixtureText.read("generated/debian12-edge/busybox_ps_zombies.txt")).value
        #expect(zombies.first { $0.pid == 11820 }?.command.hasPrefix("/bin/bash ./capture.sh") == true)
    }

    @Test func busyboxDefaultColumnsOfBothBuildsRead() throws {
        let debian = try PsParser.parse(FixtureText.read("generated/busybox-1.35.0/busybox_ps.txt")).value
        #expect(debian.first?.user == "root" && debian.first?.ppid == nil)
        let upstream = try PsParser.parse(FixtureText.read("public/busybox-upstream-image/ps_ax.txt")).value
        #expect(upstream.first { $0.pid == 22 }?.user == "101")
        #expect(upstream.first { $0.pid == 8 }?.command == "nginx: master process nginx -g daemon off;")
    }

    @Test func anUnsupportedOptionIsReportedAsTheToolSaidIt() {
        #expect {
            try PsParser.parse(FixtureText.read("generated/busybox-1.35.0/busybox_ps_o_pcpu.txt"))
        } throws: { error in
            (error as? ParseError)?.message.contains("bad -o argument 'pcpu'") == true
        }
    }
}

@Suite struct IostatParserTests {
    @Test func theLastReportIsUsedNotTheSinceBootOne() throws {
        let report = try IostatParser.parse(FixtureText.read("generated/debian12/iostat_dxk_1_2.txt")).value
        let vda = try #require(report.devices.first)
        #expect(vda.device == "vda" && vda.readBytesPerSecond == 4 * 1024 && vda.writeBytesPerSecond == 20 * 1024)
        #expect(vda.readsPerSecond == 1 && vda.utilizationPercent == 0)
    }

    @Test func aLoneReportYieldsNamesButNoFigures() throws {
        let parsed = try IostatParser.parse(FixtureText.read("public/linux-centos7-sysstat10.1.5/iostat-x.txt"))
        #expect(parsed.value.devices.map(\.device) == ["sda", "dm-0", "dm-1"])
        #expect(parsed.value.devices.allSatisfy { $0.readBytesPerSecond == nil })
        #expect(parsed.value.cpu?.busyPercent == nil)
        #expect(parsed.warnings.contains { $0.contains("since boot") })
    }

    @Test func everySysstatColumnSetMapsByName() throws {
        // 10.x (`Device:`, rkB/s fifth) and 11.6 (rkB/s third) differ in order; two copies of a
        // report, blank-line separated as iostat prints them, stand in for an interval report.
        let old = try FixtureText.read("public/linux-centos7-sysstat10.1.5/iostat-x.txt")
        let oldReport = try IostatParser.parse(old + "\n" + old).value
        #expect(oldReport.devices.first?.readBytesPerSecond == 5.27 * 1024)
        #expect(oldReport.devices.first?.writesPerSecond == 0.11)
        let text = try FixtureText.read("public/linux-ubuntu18.04-sysstat11.6/iostat-x.txt")
        let report = try IostatParser.parse(text + "\n" + text).value
        let sda = try #require(report.devices.first { $0.device == "sda" })
        #expect(sda.readBytesPerSecond == 8595.16 * 1024 && sda.writesPerSecond == 67.15)
        #expect(report.cpu?.idlePercent == 17.51 && report.cpu?.busyPercent == 80.21)
    }
}

@Suite struct TopParserTests {
    @Test func aGluedHundredIsReadAsItsOwnFigure() throws {
        let part = try TopParser.parse(FixtureText.read("generated/debian12/top_b_n1.txt"))
        #expect(part.value.cpu?.systemPercent == 100 && part.value.cpu?.userPercent == 0)
        #expect(part.warnings.contains { $0.contains("tiny interval") })
        #expect(part.value.load == LoadAverage(one: 1.0, five: 0.33, fifteen: 0.13))
        #expect(part.value.uptimeSeconds == 240)
    }

    @Test func theLastFrameIsUsedAndCarriesNoWarning() throws {
        let part = try TopParser.parse(FixtureText.read("captured/debian12-local/top_b_n2_d1.txt"))
        #expect(part.warnings.isEmpty)
        #expect(part.value.cpu?.userPercent == 96.5)
        #expect(part.value.processes?.count == 5)
    }

    @Test func germanDecimalsAndLabelsRead() throws {
        let part = try TopParser.parse(FixtureText.read("generated/debian12-de_DE/top_b_n1.txt")).value
        #expect(part.cpu?.systemPercent == 50 && part.cpu?.idlePercent == 50)
        #expect(part.memory?.definition == "total-available")
        #expect(part.load?.one == 1.2)
        #expect(part.processes?.first?.command == "process_a+")
    }

    @Test func procps32MemoryCountsBuffersAndCacheOut() throws {
        let memory = try #require(
            try TopParser.parse(FixtureText.read("public/linux-rhel5-procps3.2/top_interactive.txt")).value.memory)
        #expect(memory.totalBytes == 65_968_872 * 1024)
        #expect(memory.usedBytes == (65_968_872 - 7_630_208 - 1_144_832 - 39_128_520) * 1024)
        #expect(memory.definition == "total-free-buffers-cached")
    }

    @Test func busyboxTopReadsItsOwnLayout() throws {
        let part = try TopParser.parse(FixtureText.read("generated/busybox-1.35.0/busybox_top_b_n1.txt")).value
        #expect(part.cpu?.userPercent == 45 && part.cpu?.idlePercent == 50)
        #expect(part.memory?.totalBytes == (1_646_600 + 23_037_496) * 1024)
        #expect(part.load?.five == 0.41)
        #expect(part.processes?.first?.command == "/usr/local/usr/bin/swift-build")
    }

    @Test func scaledResidentSizesRead() throws {
        let part = try TopParser.parse(FixtureText.read("public/linux-debian-procps3.3/top_n1_interactive.txt")).value
        let java = try #require(part.processes?.first { $0.pid == 2642 })
        #expect(java.rssBytes == UInt64((0.977 * 1_073_741_824).rounded()) && java.memoryPercent == 49.9)
    }
}

@Suite struct UptimeParserTests {
    static let formats: [(path: String, seconds: Double, oneMinute: Double)] = [
        ("generated/debian12/uptime.txt", 4 * 60, 1.0),
        ("generated/debian12-de_DE/uptime.txt", 5 * 60, 1.2),
        ("public/linux-procps/uptime_hours_minutes.txt", 84 * 60, 0),
        ("public/linux-sles-style/uptime_days_hours.txt", 3 * 86_400 + 134 * 60, 0.09),
        ("public/sunos/uptime.txt", 137 * 86_400 + 1147 * 60, 0.27),
        ("public/macos-10.14.6/uptime.txt", 20 * 86_400 + 1185 * 60, 1.63),
        ("public/macos-10.11.6/uptime.txt", 3 * 60, 5.63),
        ("generated/busybox-1.35.0/busybox_uptime.txt", 5 * 60, 0.94),
    ]

    @Test(arguments: formats)
    func everyFormatGivesSecondsAndLoad(path: String, seconds: Double, oneMinute: Double) throws {
        let uptime = try UptimeParser.parse(FixtureText.read(path))
        #expect(uptime.seconds == seconds)
        #expect(uptime.load?.one == oneMinute)
    }

    @Test func decimalCommaLoadsAreSplitOnCommaSpace() throws {
        let uptime = try UptimeParser.parse(FixtureText.read("generated/debian12-de_DE/uptime.txt"))
        #expect(uptime.load == LoadAverage(one: 1.2, five: 0.42, fifteen: 0.16))
    }

    @Test func loadAgreesWithProcLoadavg() throws {
        // Both read at 19:23:17 on the same machine.
        let uptime = try UptimeParser.parse(FixtureText.read("generated/debian12/uptime.txt"))
        #expect(uptime.load == (try ProcLoadAvgParser.parse(FixtureText.read("generated/debian12/proc_loadavg.txt"))))
    }
}

@Suite struct IPLinkParserTests {
    @Test func countersMatchProcNetDev() throws {
        let ip = try IPLinkParser.parse(FixtureText.read("generated/debian12/ip_s_link.txt"))
        let proc = try ProcNetDevParser.parse(FixtureText.read("generated/debian12/proc_net_dev.txt"))
        #expect(ip == proc)
    }

    @Test func countersMatchProcNetDevReadRightAfter() throws {
        let sections = try FixtureText.sections("captured/debian12-local/ip_s_link_and_proc_net_dev.txt")
        let ip = try IPLinkParser.parse(sections[0])
        let proc = try ProcNetDevParser.parse(sections[1])
        #expect(ip.map(\.interface) == proc.map(\.interface))
        for (left, right) in zip(ip, proc) {
            // Loopback traffic from other jobs may land between the two reads.
            #expect(right.rxBytes! >= left.rxBytes! && right.rxBytes! - left.rxBytes! < 1 << 20)
        }
    }

    @Test func withoutStatisticsItSaysWhatIsMissing() {
        #expect {
            try IPLinkParser.parse(
                "1: lo: <LOOPBACK,UP> mtu 65536 qdisc noqueue state UNKNOWN\n    link/loopback 00:00:00:00:00:00\n")
        } throws: { error in
            (error as? ParseError)?.message.contains("-s") == true
        }
    }
}
