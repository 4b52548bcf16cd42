import Alerting
import Foundation
import HostStats
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// CPU per record of the shipped rules over a busy host's snapshot (8 filesystems, 4 interfaces, 4 disks,
/// 16 cores, node figures), 50 hosts in turn. Run by Scripts/bench/alerts/run.sh (HOSTSCOPE_BENCH=1); the
/// target is under 50 µs per record.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["HOSTSCOPE_BENCH"] == "1"))
struct AlertEvaluatorBenchmarks {
    private let records = Int(ProcessInfo.processInfo.environment["HOSTSCOPE_BENCH_RECORDS"] ?? "") ?? 200_000

    private func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(1), &usage)  // RUSAGE_THREAD: the evaluating thread alone
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    static func snapshot(host: String, tick: Int, at: Date) -> Snapshot {
        let t = Double(tick)
        var snapshot = Snapshot(
            host: host, collectedAt: at, collector: "proc",
            load: LoadAverage(one: 1.5, five: 1.2, fifteen: 1),
            cpu: CPUStats(
                cores: 16, busyPercent: 35, perCore: (0..<16).map { CoreStats(core: $0, busyPercent: Double($0 * 5)) }),
            memory: MemoryStats(
                totalBytes: 64 << 30, usedBytes: 40 << 30, availableBytes: 24 << 30, usedPercent: 62.5,
                swapTotalBytes: 8 << 30, swapUsedBytes: 1 << 30),
            disks: (0..<8).map { index in
                let size: UInt64 = 500 << 30
                let available = size / 2 - UInt64(tick) * 4096
                return DiskStats(
                    filesystem: "/dev/sd\(index)", type: "ext4", mount: index == 0 ? "/" : "/data\(index)",
                    sizeBytes: size, usedBytes: size - available, availableBytes: available, usedPercent: 50,
                    inodesTotal: 30_000_000, inodesUsed: 1_000_000 + UInt64(tick))
            })
        var node = NodeFigures()
        node.vmstat = [KernelFigure("pgfault", 1e9 + t * 1000), KernelFigure("pgmajfault", 5000 + t)]
        node.clockOffsetSeconds = 0.002
        node.networkDevices = ["eth0", "eth1", "lo", "docker0"].map { device in
            NetworkDeviceCounters(
                device: device,
                counters: [
                    KernelFigure("receive_bytes", 1e12 + t * 1e6), KernelFigure("receive_packets", 1e9 + t * 1e3),
                    KernelFigure("receive_errs", 10), KernelFigure("transmit_bytes", 1e12 + t * 1e6),
                    KernelFigure("transmit_packets", 1e9 + t * 1e3), KernelFigure("transmit_errs", 3),
                ])
        }
        node.mounts = (0..<8).map {
            MountEntry(device: "/dev/sd\($0)", mountPoint: $0 == 0 ? "/" : "/data\($0)", type: "ext4", readOnly: false)
        }
        snapshot.node = node
        snapshot.counters = KernelCounters(
            disks: (0..<4).map { index in
                DiskIOCounters(
                    major: 8, minor: index * 16, device: "sd\(index)", readsCompleted: 1000 + UInt64(tick),
                    sectorsRead: 100_000, writesCompleted: 2000, sectorsWritten: 200_000,
                    ioMilliseconds: 100_000 + UInt64(tick) * 500, weightedIOMilliseconds: 200_000 + UInt64(tick) * 900)
            })
        return snapshot
    }

    @Test func theShippedRulesCostUnderFiftyMicrosecondsOfCPUPerRecord() {
        var evaluator = AlertEvaluator(rules: AlertRules.defaults)
        let hosts = (0..<50).map { "host-\($0)" }
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        // Built before the clock starts: the benchmark measures evaluation, not making snapshots.
        let ticks = 40
        let prepared = (0..<ticks).map { tick in
            hosts.map { host in SnapshotRecord.snapshot(Self.snapshot(host: host, tick: tick, at: start)) }
        }
        var transitions = 0
        let before = cpuSeconds()
        for index in 0..<records {
            let tick = index / hosts.count
            let record = prepared[tick % ticks][index % hosts.count]
            transitions += evaluator.evaluate(record, now: start.addingTimeInterval(Double(tick) * 15)).count
        }
        let perRecord = (cpuSeconds() - before) / Double(records) * 1e6
        print(
            "alerts-bench: \(records) records, \(AlertRules.defaults.rules.count) rules, "
                + "\(String(format: "%.2f", perRecord)) µs CPU per record, \(transitions) transitions")
        #expect(perRecord < 50)
    }
}
