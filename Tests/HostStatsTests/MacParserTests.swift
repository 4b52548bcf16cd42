import HostStats
import Testing

@Suite struct VmStatParserTests {
    @Test func pagesAreCountedAtTheSizeTheHeaderStates() throws {
        let silicon = try VmStatParser.parse(FixtureText.read("public/macos-14.4.1-apple-silicon/vm_stat.txt"))
        #expect(silicon.freeBytes == 6472 * 16384)
        #expect(silicon.usedBytes == (912_210 - 19_224 + 165_932 + 424_276) * 16384)
        #expect(silicon.definition == "app+wired+compressed")
        let intel = try VmStatParser.parse(FixtureText.read("public/macos-intel/vm_stat.txt"))
        #expect(intel.freeBytes == 24686 * 4096)
    }

    @Test func theTotalComesFromHwMemsizeNotFromPageSums() throws {
        let text =
            try FixtureText.read("public/macos-10.8-era/vm_stat_4096.txt")
            + FixtureText.read("public/macos-10.8-era/sysctl_n_hw.memsize.txt")
        let memory = try VmStatParser.parse(text)
        #expect(memory.totalBytes == 17_179_869_184)
        #expect(memory.definition == "active+wired")
        #expect(memory.usedBytes == (924_164 + 391_749) * 4096)
        #expect(memory.availableBytes == 17_179_869_184 - memory.usedBytes!)
        #expect(try VmStatParser.parse(FixtureText.read("public/macos-10.8-era/vm_stat_4096.txt")).totalBytes == nil)
    }

    @Test func usedStaysBelowTheInstalledMemoryOfTheSameMac() throws {
        let vm = try VmStatParser.parse(FixtureText.read("public/macos-14.4.1-apple-silicon/vm_stat.txt"))
        let sysctl = try SysctlParser.parse(FixtureText.read("public/macos-14.4.1-apple-silicon/sysctl_selected.txt"))
        #expect(sysctl.pageSize == 16384)
        #expect(vm.usedBytes! < sysctl.memoryBytes!)
    }
}

@Suite struct SysctlParserTests {
    @Test func macOSKeysRead() throws {
        let values = try SysctlParser.parse(FixtureText.read("public/macos-10.14.6/sysctl_a_selected.txt"))
        #expect(values.memoryBytes == 17_179_869_184 && values.logicalCPUs == 8)
        #expect(values.swapTotalBytes == 3072 << 20 && values.swapUsedBytes == UInt64(2513.5 * 1_048_576))
        #expect(values.load == LoadAverage(one: 2.57, five: 2.41, fifteen: 2.24))
        #expect(values.bootTime == 1_592_836_479)
    }

    @Test func freeBSDMemoryComesFromPageCounts() throws {
        let memory = try #require(
            try SysctlParser.parse(FixtureText.read("public/freebsd-arm64/sysctl_selected.txt")).memory)
        #expect(memory.totalBytes == 4_266_598_400)
        #expect(memory.availableBytes == (68_475 + 860_261 + 2_962) * 4096)
        #expect(memory.definition == "total-free-inactive-laundry")
    }

    @Test func bootTimeIsNotPassedOffAsUptime() throws {
        let part = try SysctlParser.part(FixtureText.read("public/macos-14.4.1-apple-silicon/sysctl_selected.txt"))
        #expect(part.uptimeSeconds == nil)
        #expect(part.warnings.contains { $0.contains("1711644864") })
        #expect(part.cpu?.cores == 10 && part.cpu?.busyPercent == nil)
    }
}

@Suite struct MacTopParserTests {
    @Test func headerLinesGiveLoadCPUAndMemory() throws {
        let parsed = try MacTopParser.parse(FixtureText.read("public/macos-10.14.6/top_l1_o_mem_n5_stats.txt"))
        let part = parsed.value
        #expect(part.load == LoadAverage(one: 2.51, five: 2.52, fifteen: 2.5))
        #expect(part.cpu?.userPercent == 6.87 && part.cpu?.systemPercent == 25.95 && part.cpu?.busyPercent == 32.83)
        #expect(part.memory?.usedBytes == 8170 << 20 && part.memory?.totalBytes == (8170 + 21) << 20)
        #expect(parsed.warnings.contains { $0.contains("top -l 2") })
    }

    @Test func commandsWithSpacesAndMarkedPIDsRead() throws {
        let rows = try FixtureText.read("public/macos-top-stats/top_pid_command_mem_rows.txt")
        let part = try MacTopParser.parse(
            "PhysMem: 4329M used (1426M wired), 3861M unused.\n\nPID COMMAND MEM\n" + rows
        ).value
        let autocad = try #require(part.processes?.first { $0.pid == 7163 })
        #expect(autocad.command == "AutoCAD LT 2023" && autocad.rssBytes == 11 << 30)
        #expect(part.processes?.first { $0.pid == 623 }?.rssBytes == 1608 << 10)
        #expect(part.processes?.first { $0.pid == 174 }?.rssBytes == 1442 << 20)
    }
}

@Suite struct NetstatParserTests {
    @Test func onlyLinkRowsCountAndAnEmptyAddressDoesNotShiftColumns() throws {
        let interfaces = try NetstatParser.parse(FixtureText.read("public/macos-10.7-era/netstat_ib_excerpt.txt")).value
        #expect(interfaces.map(\.interface) == ["lo0", "gif0", "stf0", "en0"])
        #expect(interfaces[0].rxBytes == 368_415_571)
        #expect(interfaces[3].rxBytes == 13_309_516_362 && interfaces[3].txBytes == 11_363_839_527)
    }

    @Test func linksWhoseCutNamesCollideStayApart() throws {
        let parsed = try NetstatParser.parse(FixtureText.read("public/macos-10.14.6/netstat_i.txt"))
        let names = parsed.value.map(\.interface)
        #expect(Set(names).count == names.count)
        #expect(names.filter { $0.hasPrefix("vmnet#") }.count == 2)
        #expect(parsed.warnings.contains { $0.contains("-b") })
    }

    @Test func freeBSDDropColumnsAndDashedMtuRead() throws {
        let interfaces = try NetstatParser.parse(FixtureText.read("public/freebsd-12/netstat_ib.txt")).value
        #expect(interfaces.map(\.interface) == ["em0", "lo0"])
        #expect(interfaces[0].rxBytes == 372_538_087 && interfaces[0].rxDropped == 0)
        let macDrops = try NetstatParser.parse(FixtureText.read("public/macos-10.10-era/netstat_ibdn.txt")).value
        #expect(macDrops.first { $0.interface == "en1" }?.txDropped == 3)
    }
}

@Suite struct MacIostatParserTests {
    @Test func theLastLineIsUsedPerDiskGroup() throws {
        let part = try MacIostatParser.parse(FixtureText.read("public/macos-iostat/iostat_od_3_2_three_disks.txt"))
            .value
        #expect(part.devices?.map(\.device) == ["disk0", "disk2", "disk3"])
        #expect(part.devices?.first?.bytesPerSecond == Double(36036 * 512))
        #expect(part.devices?.last?.transfersPerSecond == 140)
    }

    @Test func cpuAndLoadGroupsRead() throws {
        let part = try MacIostatParser.parse(FixtureText.read("public/macos-iostat/iostat_c2.txt")).value
        #expect(part.cpu?.idlePercent == 93 && part.cpu?.busyPercent == 7)
        #expect(part.load == LoadAverage(one: 2.37, five: 4.23, fifteen: 5.12))
    }
}

@Suite struct MacDfAndPsTests {
    @Test func blocksOf512BytesAndHugeInodeCountsRead() throws {
        let disks = try DfParser.parse(FixtureText.read("public/macos-10.14.6/df.txt")).value
        let root = try #require(disks.first { $0.mount == "/" })
        #expect(root.sizeBytes == 976_490_576 * 512)
        #expect(root.inodesTotal == 1_507_695 + 9_223_372_036_853_268_112)
        #expect(disks.contains { $0.filesystem == "map -hosts" && $0.mount == "/net" })
        #expect(disks.contains { $0.mount.hasSuffix("/Macintosh HD") })
    }

    @Test func macOSPsColumnSetsRead() throws {
        let aux = try PsParser.parse(FixtureText.read("public/macos-10.14.6/ps_axu_head.txt")).value
        let sublime = try #require(aux.first { $0.pid == 633 })
        #expect(sublime.user == "kbrazil" && sublime.rssBytes == 61_740 * 1024)
        #expect(sublime.command == "/Applications/Sublime Text.app/Contents/MacOS/plugin_host 560 --auto-shell-env")
        let ef = try PsParser.parse(FixtureText.read("public/macos-14-era/ps_ef_excerpt.txt")).value
        #expect(ef.first { $0.pid == 95 }?.command == "/usr/libexec/UserEventAgent (System)")
    }
}

@Suite struct ToolParserRegistryTests {
    @Test func everyNamedToolIsRegisteredWithADescription() {
        let names = ToolParser.all.map(\.name)
        for name in [
            "mpstat", "free", "df", "ps", "iostat", "top", "uptime", "vm_stat", "netstat", "sysctl", "ip", "proc-stat",
            "proc-meminfo", "proc-net-dev", "proc-diskstats", "proc-loadavg", "proc-uptime", "proc-pid-stat",
            "os-release",
        ] {
            #expect(names.contains(name), "\(name) is not registered")
        }
        #expect(Set(names).count == names.count)
        #expect(ToolParser.all.allSatisfy { !$0.summary.isEmpty && !$0.summary.contains("\n") })
    }

    @Test func topAndIostatDispatchOnWhatTheTextIs() throws {
        let top = try #require(ToolParser.named("top"))
        #expect(
            try top.parse(FixtureText.read("public/macos-10.x/top_physmem_line.txt")).memory?.definition == "total-free"
        )
        let iostat = try #require(ToolParser.named("iostat"))
        #expect(try iostat.parse(FixtureText.read("public/macos-iostat/iostat_c2.txt")).load != nil)
    }

    static let mismatches: [(tool: String, file: String, named: String)] = [
        ("free", "generated/debian12/df_kP.txt", "`df`"),
        ("df", "generated/debian12/free_b.txt", "`free`"),
        ("mpstat", "generated/debian12/iostat_dxk_1_2.txt", "`iostat`"),
        ("vm_stat", "generated/debian12/proc_meminfo.txt", "/proc/meminfo"),
        ("proc-stat", "generated/debian12/top_b_n1.txt", "`top`"),
        ("netstat", "generated/debian12/ip_s_link.txt", "`ip`"),
        ("ps", "generated/debian12/uptime.txt", "`uptime`"),
    ]

    @Test(arguments: mismatches)
    func anotherToolsOutputIsNamedInTheError(tool: String, file: String, named: String) throws {
        let parser = try #require(ToolParser.named(tool))
        let text = try FixtureText.read(file)
        #expect {
            try parser.parse(text)
        } throws: { error in
            let message = (error as? ParseError)?.description ?? ""
            return message.contains("expected the output of") && message.contains(named)
        }
    }

    @Test(arguments: ToolParser.all.map(\.name))
    func garbageIsAnErrorNeverAnEmptyResult(tool: String) throws {
        let parser = try #require(ToolParser.named(tool))
        for text in ["", "hello world\n", "\u{0}\u{1}garbage 12 34\n", "}{][ : : ,,,\n"] {
            #expect(throws: ParseError.self, "\(tool) accepted \(text.debugDescription)") { try parser.parse(text) }
        }
    }
}
