/// Leaving out figures that are no number: `nan`, `inf` or `1e400` in a tool's output (or a
/// division of such figures) read as a `Double` that is NaN or infinite. JSON cannot hold them,
/// CSV and tables would show `nan`, and rates or shares computed from them mean nothing; so they
/// become `null`, as the snapshot JSON contract has unknown figures, with one warning naming them.
///
/// Parsers read figures as they are printed; this pass runs where a snapshot or a `hostscope
/// parse` part is completed, so no parser has to remember it.
extension Snapshot {
    /// Sets every non-finite figure to `nil` and adds a warning naming them, if there were any.
    public mutating func leaveOutNonFiniteFigures() {
        var names: [String] = []
        FiniteFigures.check(&uptimeSeconds, "uptime_seconds", &names)
        FiniteFigures.check(&load, &names)
        FiniteFigures.check(&cpu, &names)
        FiniteFigures.check(&memory, &names)
        FiniteFigures.check(&disks, &names)
        FiniteFigures.check(&network, &names)
        FiniteFigures.check(&processes, &names)
        if let warning = FiniteFigures.warning(names) { warnings.append(warning) }
    }
}

extension SnapshotPart {
    /// Sets every non-finite figure to `nil` and adds a warning naming them, if there were any.
    public mutating func leaveOutNonFiniteFigures() {
        var names: [String] = []
        FiniteFigures.check(&uptimeSeconds, "uptime_seconds", &names)
        FiniteFigures.check(&load, &names)
        FiniteFigures.check(&cpu, &names)
        FiniteFigures.check(&memory, &names)
        if var list = disks {
            FiniteFigures.check(&list, &names)
            disks = list
        }
        if var list = network {
            FiniteFigures.check(&list, &names)
            network = list
        }
        if var list = processes {
            FiniteFigures.check(&list, &names)
            processes = list
        }
        if var list = devices {
            for index in list.indices {
                let device = "devices[\(list[index].device)]."
                FiniteFigures.check(&list[index].readBytesPerSecond, device + "read_bytes_per_second", &names)
                FiniteFigures.check(&list[index].writeBytesPerSecond, device + "write_bytes_per_second", &names)
                FiniteFigures.check(&list[index].readsPerSecond, device + "reads_per_second", &names)
                FiniteFigures.check(&list[index].writesPerSecond, device + "writes_per_second", &names)
                FiniteFigures.check(&list[index].utilizationPercent, device + "utilization_percent", &names)
                FiniteFigures.check(&list[index].bytesPerSecond, device + "bytes_per_second", &names)
                FiniteFigures.check(&list[index].transfersPerSecond, device + "transfers_per_second", &names)
            }
            devices = list
        }
        if let warning = FiniteFigures.warning(names) { warnings.append(warning) }
    }
}

/// The per-section checks both passes share.
enum FiniteFigures {
    static func check(_ value: inout Double?, _ name: String, _ names: inout [String]) {
        guard let figure = value, !figure.isFinite else { return }
        value = nil
        names.append(name)
    }

    static func check(_ load: inout LoadAverage?, _ names: inout [String]) {
        guard let figures = load, ![figures.one, figures.five, figures.fifteen].allSatisfy(\.isFinite) else { return }
        load = nil
        names.append("load")
    }

    static func check(_ cpu: inout CPUStats?, _ names: inout [String]) {
        guard var stats = cpu else { return }
        check(&stats.sampleMs, "cpu.sample_ms", &names)
        check(&stats.busyPercent, "cpu.busy_percent", &names)
        check(&stats.activePercent, "cpu.active_percent", &names)
        check(&stats.userPercent, "cpu.user_percent", &names)
        check(&stats.nicePercent, "cpu.nice_percent", &names)
        check(&stats.systemPercent, "cpu.system_percent", &names)
        check(&stats.iowaitPercent, "cpu.iowait_percent", &names)
        check(&stats.irqPercent, "cpu.irq_percent", &names)
        check(&stats.softirqPercent, "cpu.softirq_percent", &names)
        check(&stats.stealPercent, "cpu.steal_percent", &names)
        check(&stats.idlePercent, "cpu.idle_percent", &names)
        for index in stats.perCore.indices {
            check(&stats.perCore[index].busyPercent, "cpu.per_core[\(stats.perCore[index].core)].busy_percent", &names)
        }
        cpu = stats
    }

    static func check(_ memory: inout MemoryStats?, _ names: inout [String]) {
        guard var stats = memory else { return }
        check(&stats.usedPercent, "memory.used_percent", &names)
        memory = stats
    }

    static func check(_ disks: inout [DiskStats], _ names: inout [String]) {
        for index in disks.indices {
            let disk = "disks[\(disks[index].mount)]."
            check(&disks[index].usedPercent, disk + "used_percent", &names)
            check(&disks[index].readBytesPerSecond, disk + "read_bytes_per_second", &names)
            check(&disks[index].writeBytesPerSecond, disk + "write_bytes_per_second", &names)
        }
    }

    static func check(_ network: inout [NetworkInterfaceStats], _ names: inout [String]) {
        for index in network.indices {
            let interface = "network[\(network[index].interface)]."
            check(&network[index].rxBytesPerSecond, interface + "rx_bytes_per_second", &names)
            check(&network[index].txBytesPerSecond, interface + "tx_bytes_per_second", &names)
        }
    }

    static func check(_ processes: inout [ProcessStats], _ names: inout [String]) {
        for index in processes.indices {
            let process = "processes[pid \(processes[index].pid)]."
            check(&processes[index].cpuPercent, process + "cpu_percent", &names)
            check(&processes[index].memoryPercent, process + "memory_percent", &names)
        }
    }

    /// One sentence naming the figures left out (the first few, and how many more).
    static func warning(_ names: [String]) -> String? {
        guard !names.isEmpty else { return nil }
        let shown = names.prefix(5).joined(separator: ", ")
        let more = names.count > 5 ? " and \(names.count - 5) more" : ""
        return "figures that are no finite number (nan, inf) left out (null): \(shown)\(more)"
    }
}
