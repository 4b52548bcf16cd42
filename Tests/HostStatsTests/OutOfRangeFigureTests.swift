import HostStats
import OrderedJSON
import Testing

/// Figures a host may print that no byte count or counter can hold (`99999999999999999999999`,
/// `inf`, `nan`, sums past 2^64): each once stopped the process with a runtime trap, or passed off
/// a wrapped-around number as the host's. Each now parses to `null` with a warning saying which
/// figure and why, and the rest of the output is kept.
@Suite struct OutOfRangeFigureTests {
    static func part(_ tool: String, _ text: String) throws -> SnapshotPart {
        let parser = try #require(ToolParser.named(tool))
        return try parser.parse(text)
    }

    static func warned(_ part: SnapshotPart, _ fragment: String) -> Bool {
        part.warnings.contains { $0.contains(fragment) }
    }

    @Test func aPsRSSPastUInt64IsNullWithAWarningAndTheRowIsKept() throws {
        let part = try Self.part(
            "ps",
            """
              PID  PPID USER     %CPU %MEM   RSS COMMAND
                1     0 root      0.0  0.1 99999999999999999999999 /sbin/init
                2 99999999999999999999 root  nan  0.0  1024 sleep 1

            """)
        let processes = try #require(part.processes)
        #expect(processes.map(\.pid) == [1, 2])
        #expect(processes[0].rssBytes == nil && processes[0].command == "/sbin/init")
        #expect(processes[1].rssBytes == 1_048_576 && processes[1].ppid == nil && processes[1].cpuPercent == nil)
        #expect(Self.warned(part, "the RSS of PID 1 `99999999999999999999999` is out of range: left out (null)"))
        #expect(Self.warned(part, "the PPID of PID 2 `99999999999999999999` is out of range"))
        #expect(Self.warned(part, "left out (null): processes[pid 2].cpu_percent"))
    }

    @Test(arguments: ["99999999999999999999 total", "18446744073709551616 total", "1e400 total"])
    func aTopMemoryTotalOutOfRangeLeavesMemoryOutRatherThanInventingOne(_ total: String) throws {
        let part = try Self.part(
            "top",
            """
            top - 10:00:00 up 1 day,  2:03,  1 user,  load average: 0.00, 0.01, 0.05
            %Cpu(s):  1.0 us,  1.0 sy,  0.0 ni, 98.0 id,  0.0 wa,  0.0 hi,  0.0 si,  0.0 st
            MiB Mem :  \(total),   1000.0 free,    500.0 used,    300.0 buff/cache
            MiB Swap:      0.0 total,      0.0 free,      0.0 used.   1200.0 avail Mem

            """)
        #expect(part.memory == nil)
        #expect(part.cpu?.idlePercent == 98)
        #expect(Self.warned(part, "top's `total` figure `\(total.split(separator: " ")[0])` is out of range"))
        #expect(Self.warned(part, "top's memory figures are out of range: memory left out"))
    }

    @Test func aTopFreeFigureOutOfRangeOfAKnownUnitIsNullToo() throws {
        let part = try Self.part(
            "top",
            """
            top - 10:00:00 up 1 day,  2:03,  1 user,  load average: 0.00, 0.01, 0.05
            %Cpu(s):  1.0 us,  1.0 sy,  0.0 ni, 98.0 id,  0.0 wa,  0.0 hi,  0.0 si,  0.0 st
            KiB Mem : 8000000 total, 99999999999999999 free,  500000 used,  300000 buff/cache

            """)
        #expect(part.memory == nil)
        #expect(Self.warned(part, "top's `free` figure `99999999999999999` is out of range"))
    }

    @Test(arguments: ["99999999999P", "16E", "1e30G", "99999999999999999999999"])
    func aDfSizeOutOfRangeIsNullAndTheOtherFiguresStay(_ size: String) throws {
        let part = try Self.part(
            "df",
            """
            Filesystem      Size  Used Avail Use% Mounted on
            /dev/vda1       \(size)  1.0G  2.0G  34% /

            """)
        let disk = try #require(part.disks?.first)
        #expect(disk.sizeBytes == nil)
        #expect(disk.usedBytes == 1 << 30 && disk.availableBytes == 2 << 30)
        #expect(Self.warned(part, "df size on line 2 `\(size)` is out of range: left out (null)"))
    }

    @Test func dfBlocksWhoseBytesPassUInt64AreNullNotWrappedAround() throws {
        let part = try Self.part(
            "df",
            """
            Filesystem     1K-blocks     Used Available Use% Mounted on
            /dev/vda1      18014398509481985 1000 2000  34% /

            """)
        let disk = try #require(part.disks?.first)
        #expect(disk.sizeBytes == nil && disk.usedBytes == 1_024_000)
        #expect(Self.warned(part, "`18014398509481985` is out of range"))
    }

    @Test func usedAndAvailableAddingUpPastUInt64StillGiveAPercentage() throws {
        let part = try Self.part(
            "df",
            """
            Filesystem     1B-blocks                 Used            Available Use% Mounted on
            /dev/vda1      18446744073709551615 18446744073709551000 18446744073709551000 50% /

            """)
        #expect(part.disks?.first?.usedPercent == 50)
    }

    @Test func macOSDfInodeCountsOutOfRangeAreNull() throws {
        let part = try Self.part(
            "df",
            """
            Filesystem    512-blocks      Used Available Capacity iused      ifree %iused  Mounted on
            /dev/disk1s1   976490576 400000000 500000000    45% 99999999999999999999999 4000000    1%   /

            """)
        let disk = try #require(part.disks?.first)
        #expect(disk.inodesUsed == nil && disk.inodesTotal == nil && disk.sizeBytes == 976_490_576 * 512)
        #expect(Self.warned(part, "df count on line 2 `99999999999999999999999` is out of range"))
    }

    @Test(arguments: ["99999999999999999999", "infG", "-inf"])
    func aFreeFigureOutOfRangeLeavesWhatNeedsItOut(_ figure: String) throws {
        let text = """
                           total        used        free      shared  buff/cache   available
            Mem:        16000000     \(figure)     8000000       10000     2000000    12000000
            Swap:              0           0           0

            """
        guard figure != "-inf" else {
            // A negative figure is no size at all: an error, not a trap.
            #expect(throws: ParseError.self) { try Self.part("free", text) }
            return
        }
        let part = try Self.part("free", text)
        let memory = try #require(part.memory)
        #expect(memory.usedBytes == nil && memory.definition == nil && memory.usedPercent == nil)
        #expect(memory.totalBytes == 16_000_000 * 1024 && memory.freeBytes == 8_000_000 * 1024)
        #expect(Self.warned(part, "a figure of the `Mem:` row `\(figure)` is out of range: left out (null)"))
    }

    @Test func freeCacheAndBuffersAddingUpPastUInt64AreNotAdded() throws {
        // procps 3.3 bytes (`free -b`, every figure a multiple of 1024), buffers + cached past 2^64.
        let part = try Self.part(
            "free",
            """
                         total       used       free     shared    buffers     cached
            Mem:       1024000     512000     512000          0 18446744073709550592 18446744073709550592
            Swap:            0          0          0

            """)
        let memory = try #require(part.memory)
        #expect(memory.usedBytes == 512_000 && memory.totalBytes == 1_024_000)
        #expect(memory.cachedBytes == 18_446_744_073_709_550_592)
        #expect(memory.definition == MemoryStats.Definition.totalMinusFree)
    }

    @Test func anUptimeOfAbsurdHoursIsAFigureNotAnOverflow() throws {
        let part = try Self.part(
            "uptime", " 10:00:00 up 99999999999999999:00,  1 user,  load average: 0.00, 0.01, 0.05\n")
        #expect(part.uptimeSeconds == 99_999_999_999_999_999.0 * 3600)
        #expect(part.load?.five == 0.01)
    }

    @Test func anUptimeOfInfinityIsLeftOut() throws {
        let part = try Self.part("uptime", " 10:00:00 up inf days,  1 user,  load average: nan, 0.01, 0.05\n")
        #expect(part.uptimeSeconds == nil && part.load == nil)
        #expect(Self.warned(part, "left out (null): uptime_seconds, load"))
    }

    @Test func anMpstatClockOfAbsurdHoursIsNoClock() throws {
        let part = try Self.part(
            "mpstat",
            """
            Linux 6.1.0 (vm) \t11/21/2026 \t_x86_64_\t(2 CPU)

            99999999999999999:00:00     CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle
            99999999999999999:00:01     all    1.00    0.00    1.00    0.00    0.00    0.00    0.00    0.00    0.00   98.00
            Average:        all    1.00    0.00    1.00    0.00    0.00    0.00    0.00    0.00    0.00   98.00

            """)
        #expect(part.cpu?.idlePercent == 98 && part.cpu?.sampleMs == nil)
    }

    @Test func mpstatSharesOfInfinityAreLeftOut() throws {
        let part = try Self.part(
            "mpstat",
            """
            Linux 6.1.0 (vm) \t11/21/2026 \t_x86_64_\t(2 CPU)

            10:00:00     CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle
            Average:     all    1e400    0.00    1.00    0.00    0.00    0.00    0.00    0.00    0.00   nan

            """)
        let cpu = try #require(part.cpu)
        #expect(cpu.userPercent == nil && cpu.idlePercent == nil && cpu.busyPercent == nil)
        #expect(cpu.systemPercent == 1)
        #expect(Self.warned(part, "cpu.busy_percent, cpu.active_percent, cpu.user_percent"))
    }

    @Test func meminfoSumsAndKibibytesPastUInt64AreLeftOut() throws {
        let part = try Self.part(
            "proc-meminfo",
            """
            MemTotal:       16000000 kB
            MemFree:         1000 kB
            Buffers:        18446744073709551000
            Cached:         18446744073709551000
            SReclaimable:   18446744073709551000
            SwapTotal:      18446744073709551 kB
            SwapFree:       0 kB

            """)
        let memory = try #require(part.memory)
        #expect(memory.totalBytes == 16_000_000 * 1024 && memory.freeBytes == 1_024_000)
        #expect(memory.cachedBytes == nil && memory.usedBytes == nil && memory.swapTotalBytes == nil)
        #expect(Self.warned(part, "/proc/meminfo Cached + SReclaimable is out of range"))
        #expect(Self.warned(part, "/proc/meminfo SwapTotal in bytes `18446744073709551 kB` is out of range"))
    }

    @Test func procStatCountersAddingUpPastUInt64GiveNoCPUFigures() throws {
        let part = try Self.part(
            "proc-stat",
            "cpu  0 0 0 0 0 0 0 0 0 0\ncpu  18446744073709551615 1 1 1 0 0 0 0 0 0\n")
        #expect(part.cpu?.busyPercent == nil && part.cpu?.sampleMs == nil)
        #expect(Self.warned(part, "the /proc/stat counters add up past 2^64"))
    }

    @Test func procPidStatFiguresBeyondTheKernelsAreErrorsOrNullsNotTraps() throws {
        let tail = "S 1 1 1 0 -1 4194304 0 0 0 0 18446744073709551615 1 0 0 20 0 1 0 100 1000"
        #expect(throws: ParseError.self) { try Self.part("proc-pid-stat", "99999999999999999999 (big) \(tail) 10\n") }
        #expect(throws: ParseError.self) { try Self.part("proc-pid-stat", "10 (busy) \(tail) 10\n") }
        let rss = try Self.part(
            "proc-pid-stat", "10 (big) S 1 1 1 0 -1 4194304 0 0 0 0 5 5 0 0 20 0 1 0 100 1000 18446744073709551615\n")
        #expect(rss.processes?.first?.rssBytes == nil)
        #expect(Self.warned(rss, "the RSS of pid 10 in pages `18446744073709551615` is out of range"))
    }

    @Test func vmStatPagesAddingUpPastUInt64AreLeftOut() throws {
        let part = try Self.part(
            "vm_stat",
            """
            Mach Virtual Memory Statistics: (page size of 16384 bytes)
            Pages free:                               3000.
            Pages wired down:                        18446744073709551000.
            Anonymous pages:                          1000.
            Pages occupied by compressor:              100.
            Pages purgeable:                  99999999999999999999999.

            """)
        let memory = try #require(part.memory)
        #expect(memory.freeBytes == 3000 * 16384 && memory.usedBytes == nil && memory.definition == nil)
        #expect(Self.warned(part, "vm_stat `Pages purgeable` `99999999999999999999999` is out of range"))
    }

    @Test func sysctlPagesAddingUpPastUInt64AreLeftOut() throws {
        let part = try Self.part(
            "sysctl",
            """
            hw.memsize: 17179869184
            hw.pagesize: 4096
            vm.stats.vm.v_free_count: 18446744073709551000
            vm.stats.vm.v_inactive_count: 1000

            """)
        #expect(part.memory?.totalBytes == 17_179_869_184 && part.memory?.usedBytes == nil)
        #expect(Self.warned(part, "sysctl free, inactive and laundry pages in bytes are out of range"))
    }

    @Test func macTopPhysMemAddingUpPastUInt64IsLeftOut() throws {
        let part = try Self.part(
            "top",
            """
            Processes: 1 total
            Load Avg: 1.0, 1.0, 1.0
            CPU usage: 1.0% user, 1.0% sys, 98.0% idle
            PhysMem: 15E used (1G wired), 15E unused.

            """)
        #expect(part.memory == nil && part.load?.one == 1)
        #expect(Self.warned(part, "top's PhysMem used + unused is out of range"))
    }

    @Test func networkCountersPastUInt64AreNull() throws {
        let ip = try Self.part(
            "ip",
            """
            1: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc fq_codel state UP mode DEFAULT group default qlen 1000
                link/ether 52:54:00:12:34:56 brd ff:ff:ff:ff:ff:ff
                RX:  bytes packets errors dropped  missed   mcast
                99999999999999999999999 10 0 0 0 0
                TX:  bytes packets errors dropped carrier collsns
                   2000      20      0       0       0       0
            2: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000
                link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00
                RX:  bytes packets errors dropped  missed   mcast
                   100       1      0       0       0       0
                TX:  bytes packets errors dropped carrier collsns
                   100       1      0       0       0       0

            """)
        #expect(ip.network?.first?.rxBytes == nil && ip.network?.first?.txBytes == 2000)
        #expect(Self.warned(ip, "ip RX: bytes of eth0 `99999999999999999999999` is out of range"))
        let netstat = try Self.part(
            "netstat",
            """
            Name  Mtu   Network       Address            Ipkts Ierrs     Ibytes    Opkts Oerrs     Obytes  Coll
            en0   1500  <Link#4>      a4:83:e7:00:00:01  10     0 99999999999999999999999   20     0       2000     0

            """)
        #expect(netstat.network?.first?.rxBytes == nil && netstat.network?.first?.txBytes == 2000)
        #expect(Self.warned(netstat, "netstat Ibytes of en0 `99999999999999999999999` is out of range"))
    }

    @Test func sizeReadingTellsOutOfRangeFromNoSize() {
        #expect(TextScanning.readSize("12G") == .value(12 << 30))
        #expect(TextScanning.readSize("18446744073709551615") == .value(.max))
        for token in ["18446744073709551616", "99999999999999999999999", "16E", "1e400", "inf", "nan", "nanK"] {
            #expect(TextScanning.readSize(Substring(token)) == .outOfRange, "\(token)")
        }
        for token in ["-1", "-1G", "abc", ""] {
            #expect(TextScanning.readSize(Substring(token)) == nil, "\(token)")
        }
        #expect(TextScanning.readSize("18014398509481984", unit: 1024) == .outOfRange)
        #expect(TextScanning.wholeNumber(18_446_744_073_709_549_568) == 18_446_744_073_709_549_568)
        #expect(TextScanning.wholeNumber(18_446_744_073_709_551_616) == nil)
    }
}
