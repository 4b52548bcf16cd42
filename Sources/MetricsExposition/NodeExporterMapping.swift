public import HostStats

/// A snapshot's figures as node_exporter's samples.
///
/// Counters are the host kernel's own, as read: hostscope never resets or adjusts them, so a
/// `rate()` over them is the host's real rate whatever happened to hostscope in between. Figures
/// the snapshot does not have are left out, never sent as zero. Which devices and filesystems are
/// shown follows node_exporter's default filters, so series line up with a node_exporter's.
public enum NodeExporterMapping {
    /// The node_exporter samples of one snapshot; the counter families (`node_cpu_seconds_total`,
    /// `node_disk_*_total`, `node_boot_time_seconds`) come from its ``Snapshot/counters``, when the collector
    /// read them.
    public static func samples(snapshot: Snapshot) -> [MetricSample] {
        let cpu = snapshot.counters?.cpu
        let disks = snapshot.counters?.disks ?? []
        let ticksPerSecond = snapshot.counters?.ticksPerSecond ?? 100
        var samples: [MetricSample] = []
        samples.reserveCapacity(64 + (cpu?.perCore.count ?? 0) * 10 + disks.count * 17)
        typealias F = NodeExporterFamilies
        typealias L = MetricSample.Label

        if let cpu {
            if let boot = cpu.bootTime { samples.append(MetricSample(F.bootTime, [], Double(boot))) }
            let hz = ticksPerSecond > 0 ? ticksPerSecond : 100
            for core in cpu.perCore {
                let name = String(core.core)
                let ticks = core.ticks
                // node_exporter's order of modes.
                let modes: [(String, UInt64)] = [
                    ("idle", ticks.idle), ("iowait", ticks.iowait), ("irq", ticks.irq), ("nice", ticks.nice),
                    ("softirq", ticks.softirq), ("steal", ticks.steal), ("system", ticks.system),
                    ("user", ticks.user),
                ]
                for (mode, value) in modes {
                    samples.append(MetricSample(F.cpuSeconds, [L("cpu", name), L("mode", mode)], Double(value) / hz))
                }
                samples.append(
                    MetricSample(F.cpuGuestSeconds, [L("cpu", name), L("mode", "nice")], Double(ticks.guestNice) / hz))
                samples.append(
                    MetricSample(F.cpuGuestSeconds, [L("cpu", name), L("mode", "user")], Double(ticks.guest) / hz))
            }
        }

        if let load = snapshot.load {
            samples.append(MetricSample(F.load1, [], load.one))
            samples.append(MetricSample(F.load5, [], load.five))
            samples.append(MetricSample(F.load15, [], load.fifteen))
        }

        if let memory = snapshot.memory {
            func add(_ family: MetricFamily, _ value: UInt64?) {
                if let value { samples.append(MetricSample(family, [], Double(value))) }
            }
            add(F.memTotal, memory.totalBytes)
            add(F.memFree, memory.freeBytes)
            add(F.memAvailable, memory.availableBytes)
            add(F.buffers, memory.buffersBytes)
            add(F.swapTotal, memory.swapTotalBytes)
            if let total = memory.swapTotalBytes, let used = memory.swapUsedBytes, total >= used {
                add(F.swapFree, total - used)
            }
        }

        for disk in snapshot.disks where showsFilesystem(disk) {
            let labels = [L("device", disk.filesystem), L("fstype", disk.type ?? ""), L("mountpoint", disk.mount)]
            func add(_ family: MetricFamily, _ value: UInt64?) {
                if let value { samples.append(MetricSample(family, labels, Double(value))) }
            }
            add(F.filesystemSize, disk.sizeBytes)
            // df's used is size − free blocks, so free blocks are size − used.
            if let size = disk.sizeBytes, let used = disk.usedBytes, size >= used { add(F.filesystemFree, size - used) }
            add(F.filesystemAvail, disk.availableBytes)
            add(F.filesystemFiles, disk.inodesTotal)
            if let total = disk.inodesTotal, let used = disk.inodesUsed, total >= used {
                add(F.filesystemFilesFree, total - used)
            }
        }

        for interface in snapshot.network {
            let labels = [L("device", interface.interface)]
            func add(_ family: MetricFamily, _ value: UInt64?) {
                if let value { samples.append(MetricSample(family, labels, Double(value))) }
            }
            add(F.networkReceiveBytes, interface.rxBytes)
            add(F.networkTransmitBytes, interface.txBytes)
            add(F.networkReceiveErrors, interface.rxErrors)
            add(F.networkTransmitErrors, interface.txErrors)
            add(F.networkReceiveDrop, interface.rxDropped)
            add(F.networkTransmitDrop, interface.txDropped)
        }

        for disk in disks where showsBlockDevice(disk.device) {
            let labels = [L("device", disk.device)]
            func add(_ family: MetricFamily, _ value: UInt64?, scale: Double = 1) {
                if let value { samples.append(MetricSample(family, labels, Double(value) * scale)) }
            }
            let milliseconds = 0.001
            add(F.diskReadsCompleted, disk.readsCompleted)
            add(F.diskReadsMerged, disk.readsMerged)
            add(F.diskReadBytes, disk.sectorsRead, scale: Double(DiskIOCounters.sectorBytes))
            add(F.diskReadTime, disk.readMilliseconds, scale: milliseconds)
            add(F.diskWritesCompleted, disk.writesCompleted)
            add(F.diskWritesMerged, disk.writesMerged)
            add(F.diskWrittenBytes, disk.sectorsWritten, scale: Double(DiskIOCounters.sectorBytes))
            add(F.diskWriteTime, disk.writeMilliseconds, scale: milliseconds)
            add(F.diskIONow, disk.inFlight)
            add(F.diskIOTime, disk.ioMilliseconds, scale: milliseconds)
            add(F.diskIOTimeWeighted, disk.weightedIOMilliseconds, scale: milliseconds)
            add(F.diskDiscardsCompleted, disk.discardsCompleted)
            add(F.diskDiscardsMerged, disk.discardsMerged)
            add(F.diskDiscardedSectors, disk.sectorsDiscarded)
            add(F.diskDiscardTime, disk.discardMilliseconds, scale: milliseconds)
            add(F.diskFlushRequests, disk.flushesCompleted)
            add(F.diskFlushRequestsTime, disk.flushMilliseconds, scale: milliseconds)
        }

        if let os = snapshot.os {
            var labels: [L] = []
            if let arch = os.arch { labels.append(L("machine", arch)) }
            if let kernel = os.kernel { labels.append(L("release", kernel)) }
            labels.append(L("sysname", unameSystemName(os.family)))
            samples.append(MetricSample(F.unameInfo, labels, 1))
            if let name = os.name { samples.append(MetricSample(F.osInfo, [L("pretty_name", name)], 1)) }
        }
        return samples
    }

    /// `uname -s` as the kernel spells it (`Linux`, `Darwin`, `FreeBSD`) from the lower-cased family.
    static func unameSystemName(_ family: String) -> String {
        switch family {
        case "linux": "Linux"
        case "darwin": "Darwin"
        case "freebsd": "FreeBSD"
        case "openbsd": "OpenBSD"
        case "netbsd": "NetBSD"
        default: family
        }
    }

    /// node_exporter's default `--collector.diskstats.device-exclude`,
    /// `^(ram|loop|fd|(h|s|v|xv)d[a-z]|nvme\d+n\d+p)\d+$`: partitions and RAM, loop and floppy
    /// devices are left out, whole disks (and `dm-N`, `md0`, `zram0`) are shown.
    public static func showsBlockDevice(_ device: String) -> Bool {
        let bytes = Array(device.utf8)
        func digits(from start: Int) -> Int {
            var index = start
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 { index += 1 }
            return index
        }
        func endsInDigitsOnly(after start: Int) -> Bool {
            start < bytes.count && digits(from: start) == bytes.count
        }
        func isLetter(_ index: Int) -> Bool { index < bytes.count && bytes[index] >= 97 && bytes[index] <= 122 }
        for prefix in ["ram", "loop", "fd"] where device.hasPrefix(prefix) {
            if endsInDigitsOnly(after: prefix.utf8.count) { return false }
        }
        for prefix in ["hd", "sd", "vd", "xvd"] where device.hasPrefix(prefix) {
            let letter = prefix.utf8.count
            if isLetter(letter), endsInDigitsOnly(after: letter + 1) { return false }
        }
        if device.hasPrefix("nvme") {
            // nvme\d+n\d+p\d+
            let afterController = digits(from: 4)
            if afterController > 4, afterController < bytes.count, bytes[afterController] == UInt8(ascii: "n") {
                let afterNamespace = digits(from: afterController + 1)
                if afterNamespace > afterController + 1, afterNamespace < bytes.count,
                    bytes[afterNamespace] == UInt8(ascii: "p"), endsInDigitsOnly(after: afterNamespace + 1)
                {
                    return false
                }
            }
        }
        return true
    }

    /// node_exporter's default filesystem filters: mount points under `/dev`, `/proc`, `/sys`,
    /// `/run/credentials/…`, `/var/lib/docker/…` and `/var/lib/containers/storage/…`, and the
    /// pseudo and read-only image filesystem types of `--collector.filesystem.fs-types-exclude`,
    /// are left out.
    public static func showsFilesystem(_ disk: DiskStats) -> Bool {
        let mount = disk.mount
        for root in ["/dev", "/proc", "/sys"] where mount == root || mount.hasPrefix(root + "/") { return false }
        for parent in ["/run/credentials/", "/var/lib/docker/", "/var/lib/containers/storage/"]
        where mount.hasPrefix(parent) && mount.utf8.count > parent.utf8.count {
            return false
        }
        if let type = disk.type, excludedFilesystemTypes.contains(type) { return false }
        return true
    }

    static let excludedFilesystemTypes: Set<String> = [
        "autofs", "binfmt_misc", "bpf", "cgroup", "cgroup2", "configfs", "debugfs", "devpts", "devtmpfs", "fusectl",
        "hugetlbfs", "iso9660", "mqueue", "nsfs", "overlay", "proc", "procfs", "pstore", "rpc_pipefs", "securityfs",
        "selinuxfs", "squashfs", "sysfs", "tracefs",
    ]
}
