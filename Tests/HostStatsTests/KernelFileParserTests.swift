import HostStats
import Testing

@Suite struct ProcStatParserTests {
    @Test func theAggregateAndEveryCoreLineAreRead() throws {
        let counters = try ProcStatParser.parse(FixtureText.read("generated/debian12/proc_stat.txt"))
        #expect(counters.total == CPUTicks(user: 6049, system: 1741, idle: 49340, iowait: 769, softirq: 145, steal: 85))
        #expect(counters.perCore.map(\.core) == [0, 1])
        #expect(counters.perCore[1].ticks.user == 3990)
        #expect(counters.bootTime == 1_795_288_706)
    }

    @Test func theCoreLinesAddUpToTheAggregateLine() throws {
        let counters = try ProcStatParser.parse(FixtureText.read("captured/debian12-local/proc_stat.txt"))
        let summed = counters.perCore.reduce(UInt64(0)) { $0 + ($1.ticks.total ?? 0) }
        let total = try #require(counters.total.total)
        // The kernel sums each field over the cores while they keep ticking: a few ticks of slack
        // per field and core, nothing like the thousands a misread column would cost.
        #expect(abs(Double(summed) - Double(total)) <= Double(8 * counters.perCore.count))
        #expect(total > 10_000)
    }

    @Test func concatenatedReadsAreSeparateSamples() throws {
        let samples = try ProcStatParser.parseSamples(
            FixtureText.read("captured/debian12-local/proc_stat_2samples.txt"))
        #expect(samples.count == 2)
        #expect(try #require(samples[1].total.total) > #require(samples[0].total.total))
    }

    @Test func aCoreBeforeTheAggregateOrABadTickIsAnErrorNamingTheLine() {
        #expect {
            try ProcStatParser.parse("intr 5 0 0 0 0\ncpu0 1 2 3 4\ncpu 1 2 3 4\n")
        } throws: { error in
            (error as? ParseError).map { $0.line == 2 && $0.description.contains("`cpu0` line before") } ?? false
        }
        #expect {
            try ProcStatParser.parse("cpu 1 2 3 4\ncpu0 1 2 x 4\n")
        } throws: { error in
            (error as? ParseError).map { $0.line == 2 && $0.description.contains("`x` is not a tick counter") } ?? false
        }
        #expect {
            try ProcStatParser.parse("cpu 1 2 3\n")
        } throws: { error in
            (error as? ParseError)?.description.contains("`cpu` line has 3 counters, expected at least 4") ?? false
        }
    }

    @Test func oneSampleYieldsNoPercentagesAndSaysWhy() throws {
        let part = try ProcStatParser.part(FixtureText.read("generated/debian12/proc_stat.txt"))
        let cpu = try #require(part.cpu)
        #expect(cpu.cores == 2)
        #expect(cpu.busyPercent == nil && cpu.userPercent == nil && cpu.idlePercent == nil)
        #expect(cpu.perCore.allSatisfy { $0.busyPercent == nil })
        #expect(part.warnings.contains { $0.contains("two samples") })
    }

    @Test func twoSamplesYieldSharesThatSumToOneHundred() throws {
        let part = try ProcStatParser.part(FixtureText.read("captured/debian12-local/proc_stat_2samples.txt"))
        let cpu = try #require(part.cpu)
        let shares = [
            cpu.userPercent, cpu.nicePercent, cpu.systemPercent, cpu.iowaitPercent, cpu.irqPercent,
            cpu.softirqPercent, cpu.stealPercent, cpu.idlePercent,
        ].compactMap { $0 }
        #expect(shares.count == 8)
        #expect(abs(shares.reduce(0, +) - 100) < 1e-9)
        #expect(abs(try #require(cpu.busyPercent) - (100 - cpu.idlePercent! - cpu.iowaitPercent!)) < 1e-9)
        #expect(abs(try #require(cpu.activePercent) - (100 - cpu.idlePercent!)) < 1e-9)
    }
}

@Suite struct CPUStatsFromCountersTests {
    static let earlier = CPUCounters(
        total: CPUTicks(user: 100, nice: 0, system: 50, idle: 800, iowait: 50, guest: 10),
        perCore: [
            .init(core: 0, ticks: CPUTicks(user: 50, idle: 400)), .init(core: 1, ticks: CPUTicks(user: 50, idle: 400)),
        ])

    @Test func guestTimeIsNotCountedTwice() {
        let later = CPUCounters(
            total: CPUTicks(user: 200, nice: 0, system: 50, idle: 800, iowait: 50, guest: 110),
            perCore: Self.earlier.perCore)
        let stats = CPUStats(from: Self.earlier, to: later, elapsedMs: 500)
        // 100 user ticks, 100 of them guest: the window is 100 ticks long, all user.
        #expect(stats.userPercent == 100)
        #expect(stats.busyPercent == 100)
        #expect(stats.sampleMs == 500)
    }

    @Test func busyLeavesOutIowaitButActiveKeepsIt() {
        let later = CPUCounters(
            total: CPUTicks(user: 125, nice: 0, system: 50, idle: 850, iowait: 75, guest: 10), perCore: [])
        let stats = CPUStats(from: Self.earlier, to: later, elapsedMs: nil)
        #expect(stats.busyPercent == 25)
        #expect(stats.activePercent == 50)
        #expect(stats.iowaitPercent == 25)
        #expect(stats.idlePercent == 50)
    }

    @Test func aCounterThatWentBackwardsGivesNoFiguresRatherThanNegativeOnes() {
        var later = Self.earlier
        later.total.idle += 100
        later.total.iowait -= 10  // the kernel's iowait is known to step back on idle CPUs
        later.perCore[0].ticks.user += 10
        later.perCore[1].ticks.idle -= 1
        let stats = CPUStats(from: Self.earlier, to: later, elapsedMs: 1000)
        #expect(stats.busyPercent == nil && stats.idlePercent == nil && stats.iowaitPercent == nil)
        #expect(stats.perCore.map(\.busyPercent) == [100, nil])
    }

    @Test func aCoreMissingFromTheEarlierSampleHasNoFigure() {
        var later = Self.earlier
        later.perCore.append(.init(core: 2, ticks: CPUTicks(user: 5, idle: 5)))
        let stats = CPUStats(from: Self.earlier, to: later, elapsedMs: 1000)
        #expect(stats.cores == 3)
        #expect(stats.perCore.last?.busyPercent == nil)
    }
}

@Suite struct ProcMemInfoParserTests {
    @Test func usedIsTotalMinusAvailableInBytes() throws {
        let memory = try ProcMemInfoParser.parse(FixtureText.read("generated/debian12/proc_meminfo.txt"))
        #expect(memory.totalBytes == 24_684_096 * 1024)
        #expect(memory.availableBytes == 24_218_000 * 1024)
        #expect(memory.usedBytes == (24_684_096 - 24_218_000) * 1024)
        #expect(memory.definition == "total-available")
        // As `free -w` shows cache: Cached + SReclaimable.
        #expect(memory.cachedBytes == (542_064 + 67_884) * 1024)
        #expect(memory.buffersBytes == 17_296 * 1024)
        #expect(memory.swapTotalBytes == 0 && memory.swapUsedBytes == 0)
    }

    @Test func kernelsWithoutMemAvailableFallBackToTheOlderProcpsFormula() throws {
        let text = """
            MemTotal:        1024000 kB
            MemFree:          100000 kB
            Buffers:           50000 kB
            Cached:           300000 kB
            SwapCached:            0 kB
            SwapTotal:        512000 kB
            SwapFree:         500000 kB
            """
        let memory = try ProcMemInfoParser.parse(text)
        #expect(memory.availableBytes == nil)
        #expect(memory.usedBytes == (1_024_000 - 100_000 - 50_000 - 300_000) * 1024)
        #expect(memory.definition == "total-free-buff/cache")
        #expect(memory.swapUsedBytes == 12_000 * 1024)
    }

    @Test func anotherToolsOutputIsNamedInTheError() {
        #expect {
            try ProcMemInfoParser.parse("               total        used\nMem:     100   50\n")
        } throws: { error in
            let message = (error as? ParseError)?.description ?? ""
            return message.contains("MemTotal") && message.contains("`free`")
        }
    }
}

@Suite struct ProcNetDevParserTests {
    @Test func countersAreMappedByTheHeaderNames() throws {
        let interfaces = try ProcNetDevParser.parse(FixtureText.read("generated/debian12/proc_net_dev.txt"))
        #expect(interfaces.map(\.interface) == ["lo", "ifb0", "ifb1", "eth0"])
        let eth0 = try #require(interfaces.last)
        #expect(eth0.rxBytes == 15_339_403 && eth0.txBytes == 25_543)
        #expect(eth0.rxBytesPerSecond == nil)
    }

    @Test func aNameGluedToItsFirstCounterIsSplitAtTheColon() throws {
        let text =
            try Self.header()
            + "  eth0:1234567890  421    3    4    0     0    0    0    25543  293    5    6    0    0    0    0\n"
        let eth0 = try #require(try ProcNetDevParser.parse(text).first)
        #expect(eth0.interface == "eth0" && eth0.rxBytes == 1_234_567_890)
        #expect(eth0.rxErrors == 3 && eth0.rxDropped == 4 && eth0.txErrors == 5 && eth0.txDropped == 6)
    }

    @Test func aLineWithMissingCountersIsRejected() throws {
        let text = try Self.header() + "  eth0: 15339403     421    0\n"
        #expect(throws: ParseError.self) { try ProcNetDevParser.parse(text) }
    }

    @Test func anotherHeaderLayoutIsReadByItsColumnNames() throws {
        let text =
            "Inter-| Receive | Transmit\n face |packets bytes drop errs|errs drop bytes\n  eth1: 10 2000 3 4 5 6 7000\n"
        let eth1 = try #require(try ProcNetDevParser.parse(text).first)
        #expect(eth1.interface == "eth1")
        #expect(eth1.rxBytes == 2000 && eth1.rxDropped == 3 && eth1.rxErrors == 4)
        #expect(eth1.txErrors == 5 && eth1.txDropped == 6 && eth1.txBytes == 7000)
    }

    @Test func dataBeforeAnyHeaderAndABadCounterAreNamedWithTheirLine() throws {
        #expect {
            try ProcNetDevParser.parse("  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n")
        } throws: { error in
            (error as? ParseError).map { $0.line == 1 && $0.description.contains("header") } ?? false
        }
        let text = try Self.header() + "  eth0: 15339403 421 x 4 0 0 0 0 25543 293 5 6 0 0 0 0\n"
        #expect {
            try ProcNetDevParser.parse(text)
        } throws: { error in
            (error as? ParseError).map { $0.line == 3 && $0.description.contains("`x` is not a counter") } ?? false
        }
    }

    /// The two header lines of a real /proc/net/dev.
    static func header() throws -> String {
        try FixtureText.read("generated/debian12/proc_net_dev.txt").split(separator: "\n").prefix(2).joined(
            separator: "\n") + "\n"
    }
}

@Suite struct ProcDiskStatsParserTests {
    @Test func twentyFieldLinesCarryDiscardsAndFlushes() throws {
        let devices = try ProcDiskStatsParser.parse(FixtureText.read("generated/debian12/proc_diskstats.txt"))
        let vda = try #require(devices.first { $0.device == "vda" })
        #expect(vda.readsCompleted == 30501 && vda.sectorsRead == 1_509_018 && vda.sectorsWritten == 826_944)
        #expect(vda.readBytes == 1_509_018 * 512 && vda.writtenBytes == 826_944 * 512)
        #expect(vda.flushesCompleted == 718 && vda.flushMilliseconds == 17)
    }

    @Test func fourteenAndEighteenFieldLinesLeaveTheNewerCountersNil() throws {
        let devices = try ProcDiskStatsParser.parse(
            """
               8       0 sda 100 2 800 10 50 1 400 5 0 12 15
               8       1 sda1 100 2 800 10 50 1 400 5 0 12 15 7 0 56 3
               8       2 sda2 40 80 20 160
            """)
        #expect(devices.count == 3)
        #expect(devices[0].discardsCompleted == nil && devices[0].flushesCompleted == nil)
        #expect(
            devices[1].discardsCompleted == 7 && devices[1].sectorsDiscarded == 56 && devices[1].flushesCompleted == nil
        )
        #expect(devices[2].sectorsRead == 80 && devices[2].writesCompleted == 20 && devices[2].readsMerged == nil)
    }

    @Test func aLineOfAnotherShapeOrWithABadCounterIsAnError() {
        #expect {
            try ProcDiskStatsParser.parse("   8 0 sda 1 2 3 4\nFilesystem 1K-blocks Used\n")
        } throws: { error in
            (error as? ParseError).map { $0.line == 2 && $0.description.contains("`Filesystem 1K-blocks Used`") }
                ?? false
        }
        #expect {
            try ProcDiskStatsParser.parse("   8 0 sda 100 2 800 10 50 -1 400 5 0 12 15\n")
        } throws: { error in
            (error as? ParseError).map { $0.line == 1 && $0.description.contains("`-1` is not a counter") } ?? false
        }
    }

    @Test func thePartGivesCountersButNoRates() throws {
        let part = try ProcDiskStatsParser.part(FixtureText.read("generated/debian12/proc_diskstats.txt"))
        let vda = try #require(part.devices?.first { $0.device == "vda" })
        #expect(vda.readBytes == 1_509_018 * 512 && vda.readBytesPerSecond == nil)
        #expect(!part.warnings.isEmpty)
    }
}

@Suite struct ProcPidStatParserTests {
    @Test func aNameHoldingAClosingParenthesisIsReadUpToTheLastOne() throws {
        let samples = try ProcPidStatParser.parse(FixtureText.read("captured/debian12-local/proc_pid_stat_all.txt"))
        let evil = try #require(samples.first { $0.comm == "evil) R 1 (x" })
        #expect(evil.state == "S")
        #expect(samples.contains { $0.comm == "name with spc" })
        #expect(samples.count > 20)
    }

    @Test func cpuTicksAreUserPlusSystemTime() throws {
        let sample = try #require(
            try ProcPidStatParser.parse(FixtureText.read("generated/debian12-edge/proc_10929_stat.txt")).first)
        #expect(sample.pid == 10929 && sample.comm == "python3" && sample.ppid == 1)
        #expect(sample.cpuTicks == 73 + 1)
        #expect(sample.rssPages == 2074 && sample.startTimeTicks == 35010 && sample.virtualBytes == 17_653_760)
    }

    @Test func aNameWithANewlineJoinsTheNextLine() throws {
        let samples = try ProcPidStatParser.parse(
            "7 (two\nlines) S 1 7 7 0 -1 4194304 1 0 0 0 3 4 0 0 20 0 1 0 99 1000 5 0\n"
                + "8 (next) R 1 8 8 0 -1 4194304 1 0 0 0 1 1 0 0 20 0 1 0 99 1000 5 0\n")
        #expect(samples.map(\.comm) == ["two\nlines", "next"])
        #expect(samples[0].cpuTicks == 7)
    }

    @Test func aTruncatedLineIsAnErrorNotASilentDrop() {
        #expect(throws: ParseError.self) {
            try ProcPidStatParser.parse("10926 (python3) S 1 10920 5365 0 -1 4194304 974 0 2\n")
        }
    }
}

@Suite struct SmallKernelFileParserTests {
    @Test func loadAverageReadsTheFirstThreeFigures() throws {
        #expect(
            try ProcLoadAvgParser.parse(FixtureText.read("generated/debian12/proc_loadavg.txt"))
                == LoadAverage(one: 1.0, five: 0.33, fifteen: 0.13))
    }

    @Test func uptimeReadsSecondsSinceBoot() throws {
        #expect(try ProcUptimeParser.parse("350735.47 234388.90\n") == 350_735.47)
        #expect(throws: ParseError.self) { try ProcUptimeParser.parse("up 3 days\n") }
    }

    @Test func osReleaseAndUnameGiveNameKernelAndArch() throws {
        let os = try OSReleaseParser.parse(FixtureText.read("captured/debian12-local/os_release_uname_snrm.txt"))
        #expect(os.family == "linux" && os.name == "Debian GNU/Linux 12 (bookworm)")
        #expect(os.arch == "x86_64" && os.kernel?.hasPrefix("6.") == true)
    }

    @Test func osReleaseQuotingFollowsTheShell() throws {
        let os = try OSReleaseParser.parse(
            "NAME='Some OS'\nVERSION=\"1 \\\"quoted\\\"\"\nDarwin mac 23.4.0 arm64\n")
        #expect(os.name == "Some OS 1 \"quoted\"")
        #expect(os.family == "darwin" && os.kernel == "23.4.0")
    }

    @Test func emptyInputSaysItIsEmpty() {
        #expect {
            try ProcLoadAvgParser.parse("")
        } throws: { error in
            (error as? ParseError)?.message.contains("empty") == true
        }
    }
}
