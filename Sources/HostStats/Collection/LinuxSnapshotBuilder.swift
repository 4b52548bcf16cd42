/// Turns probe results into a snapshot: utilisation and rates from the deltas between two
/// counter samples, gauges as read.
///
/// Rules that keep figures honest:
/// - without an earlier sample, CPU percentages and rates are `nil` (the first tick of a watch);
/// - a counter that went backwards (reboot, wrap, interface re-created) gives `nil` for that
///   figure, never a negative or huge rate;
/// - the interval is the host's own (`/proc/uptime`), not the client's clock, so network delay
///   does not skew rates.
public enum LinuxSnapshotBuilder {
    /// Kernel ticks per second of `/proc/PID/stat` times (USER_HZ); 100 on every mainstream
    /// Linux architecture.
    public static let ticksPerSecond = 100.0

    /// Fills `snapshot` from `current`, taking deltas against `previous`.
    public static func build(
        into snapshot: inout Snapshot, result: LinuxProbeResult, previous: LinuxCounterSample?,
        current: LinuxCounterSample, topProcesses: Int
    ) {
        // /proc/uptime counts centiseconds; rounding to them drops float noise (259.99999…).
        let elapsed = previous.map { ((current.uptimeSeconds - $0.uptimeSeconds) * 100).rounded() / 100 }
            .flatMap { $0 > 0 ? $0 : nil }
        snapshot.uptimeSeconds = current.uptimeSeconds
        snapshot.counters = KernelCounters(cpu: current.cpu, disks: current.disks, ticksPerSecond: ticksPerSecond)
        snapshot.load = result.load
        snapshot.memory = result.memory
        snapshot.node = result.node

        if let previous, let elapsed {
            snapshot.cpu = CPUStats(from: previous.cpu, to: current.cpu, elapsedMs: elapsed * 1000)
        } else {
            snapshot.cpu = CPUStats(
                cores: current.cpu.perCore.isEmpty ? nil : current.cpu.perCore.count,
                perCore: current.cpu.perCore.map { CoreStats(core: $0.core, busyPercent: nil) })
        }

        snapshot.network = current.network.map { interface in
            var stats = interface
            if let elapsed, let before = previous?.network.first(where: { $0.interface == interface.interface }) {
                stats.rxBytesPerSecond = rate(before.rxBytes, interface.rxBytes, elapsed)
                stats.txBytesPerSecond = rate(before.txBytes, interface.txBytes, elapsed)
            } else {
                stats.rxBytesPerSecond = nil
                stats.txBytesPerSecond = nil
            }
            return stats
        }

        snapshot.disks = (result.disks ?? []).map { disk in
            var stats = disk
            stats.readBytesPerSecond = nil
            stats.writeBytesPerSecond = nil
            guard let elapsed, let device = blockDevice(of: disk.filesystem),
                let now = current.disks.first(where: { $0.device == device }),
                let before = previous?.disks.first(where: { $0.device == device })
            else { return stats }
            stats.readBytesPerSecond = rate(before.readBytes, now.readBytes, elapsed)
            stats.writeBytesPerSecond = rate(before.writtenBytes, now.writtenBytes, elapsed)
            return stats
        }

        snapshot.processes = topProcessList(
            result: result, previous: previous, current: current, elapsed: elapsed,
            totalMemory: result.memory?.totalBytes, count: topProcesses, warnings: &snapshot.warnings)
        snapshot.warnings.append(contentsOf: result.warnings)
    }

    /// `(later − earlier) / seconds`, or `nil` when either is unknown or the counter went back.
    public static func rate(_ earlier: UInt64?, _ later: UInt64?, _ seconds: Double) -> Double? {
        guard let earlier, let later, later >= earlier, seconds > 0 else { return nil }
        return Double(later - earlier) / seconds
    }

    /// The `/proc/diskstats` name of a df filesystem: `/dev/vda1` → `vda1`,
    /// `/dev/mapper/vg-root` has no plain mapping (its `dm-N` name is not in df) → `nil`.
    static func blockDevice(of filesystem: String) -> String? {
        guard filesystem.hasPrefix("/dev/") else { return nil }
        let name = filesystem.dropFirst(5)
        guard !name.contains("/") else { return nil }
        return String(name)
    }

    /// The probe's shell and every process under it (df in a subshell of a pipeline is the
    /// shell's grandchild): their work is the probe's, not the host's.
    static func probeProcesses(root: Int?, in processes: [ProcessSample]) -> Set<Int> {
        Set(probeProcessList(root: root, in: processes))
    }

    /// ``probeProcesses(root:in:)`` as a short array: a handful of pids, checked against every process.
    static func probeProcessList(root: Int?, in processes: [ProcessSample]) -> [Int] {
        guard let root else { return [] }
        var found = [root]
        // The probe's tree is two or three levels deep: a pass per level, no index built.
        var grew = true
        while grew {
            grew = false
            for process in processes where found.contains(process.ppid) && !found.contains(process.pid) {
                found.append(process.pid)
                grew = true
            }
        }
        return found
    }

    /// The processes using most CPU over the interval (then most memory, then the lowest pid), with
    /// the user and command line of the probe's process table joined by pid where it read them.
    ///
    /// The few kept are picked in one pass (a running list of the best `count`), and the earlier
    /// sample is looked up in its ``ProcessTickTable``: a host with thousands of processes costs a
    /// comparison or two per process, with no sort and no hashing.
    static func topProcessList(
        result: LinuxProbeResult, previous: LinuxCounterSample?, current: LinuxCounterSample, elapsed: Double?,
        totalMemory: UInt64?, count: Int, warnings: inout [String]
    ) -> [ProcessStats] {
        guard count > 0 else { return [] }
        let earlier = previous?.tickTable
        let processes = current.processes
        let listedRows = result.processTable
        // The proc probe lists owners and commands in the sample's own order; other tables are
        // joined by pid.
        let aligned =
            listedRows.map { rows in
                rows.count == processes.count && zip(rows, processes).allSatisfy { $0.pid == $1.pid }
            } ?? false
        let table =
            aligned || listedRows == nil
            ? [:] : Dictionary((listedRows ?? []).map { ($0.pid, $0) }, uniquingKeysWith: { first, _ in first })
        func listedRow(_ index: Int) -> ProcessStats? {
            guard let listedRows else { return nil }
            return aligned ? listedRows[index] : table[processes[index].pid]
        }
        typealias Ranked = (cpu: Double?, rss: UInt64?, pid: Int, index: Int)
        func precedes(_ left: Ranked, _ right: Ranked) -> Bool {
            let leftCPU = left.cpu ?? -1
            let rightCPU = right.cpu ?? -1
            if leftCPU != rightCPU { return leftCPU > rightCPU }
            if (left.rss ?? 0) != (right.rss ?? 0) { return (left.rss ?? 0) > (right.rss ?? 0) }
            return left.pid < right.pid
        }
        let probe = probeProcessList(root: result.probePID, in: processes)
        var best: [Ranked] = []
        best.reserveCapacity(count + 1)
        var ranked = 0
        for (index, sample) in processes.enumerated() where !probe.contains(sample.pid) {
            ranked += 1
            var cpu: Double?
            if let elapsed, let before = earlier?.ticks(of: sample.pid), before.startTimeTicks == sample.startTimeTicks,
                sample.cpuTicks >= before.cpuTicks
            {
                cpu = Double(sample.cpuTicks - before.cpuTicks) / ticksPerSecond / elapsed * 100
            }
            let rss =
                listedRows == nil
                ? ProcPidStatParser.rssBytes(sample, pageSize: result.pageSize, warnings: &warnings)
                : listedRow(index)?.rssBytes
            let candidate: Ranked = (cpu, rss, sample.pid, index)
            if best.count == count, let last = best.last, !precedes(candidate, last) { continue }
            var position = best.count
            while position > 0 && precedes(candidate, best[position - 1]) { position -= 1 }
            best.insert(candidate, at: position)
            if best.count > count { best.removeLast() }
        }
        if ranked == 0, let listed = result.processTable {
            // No /proc/PID/stat (a restricted /proc): fall back to ps alone, without CPU.
            let rows = listed.filter { $0.pid != result.probePID && $0.ppid != result.probePID }
            return Array(
                rows.sorted {
                    precedes(($0.cpuPercent, $0.rssBytes, $0.pid, 0), ($1.cpuPercent, $1.rssBytes, $1.pid, 0))
                }
                .prefix(count))
        }
        return best.map { entry in
            let sample = processes[entry.index]
            let listed = listedRow(entry.index)
            let command = listed.map(\.command).flatMap { $0.isEmpty ? nil : $0 } ?? "[\(sample.comm)]"
            return ProcessStats(
                pid: sample.pid, ppid: sample.ppid, user: listed?.user, cpuPercent: entry.cpu,
                memoryPercent: entry.rss.flatMap { rss in totalMemory.map { Double(rss) / Double($0) * 100 } },
                rssBytes: entry.rss, command: command)
        }
    }
}
