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

        let node = snapshot.node
        if let node { samples += nodeSamples(node, snapshot: snapshot) }

        for interface in snapshot.network where node?.networkDevices.isEmpty ?? true {
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
            // udev's model, serial and the like are not read: their labels are empty, as node_exporter
            // leaves them where /run/udev is not there.
            samples.append(
                MetricSample(
                    F.diskInfo,
                    [
                        L("device", disk.device), L("major", String(disk.major)), L("minor", String(disk.minor)),
                        L("model", ""), L("path", ""), L("revision", ""), L("serial", ""), L("wwn", ""),
                    ], 1))
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
            if let domain = os.domainname { labels.append(L("domainname", domain)) }
            if let arch = os.arch { labels.append(L("machine", arch)) }
            if let nodename = os.nodename { labels.append(L("nodename", nodename)) }
            if let kernel = os.kernel { labels.append(L("release", kernel)) }
            labels.append(L("sysname", unameSystemName(os.family)))
            if let version = os.kernelVersion { labels.append(L("version", version)) }
            samples.append(MetricSample(F.unameInfo, labels, 1))
            samples += osSamples(os)
        }
        return samples
    }

    /// The os-release labels node_exporter's os collector carries, each `""` when the file lacks it.
    static let osReleaseLabels: [(label: String, key: String)] = [
        ("build_id", "BUILD_ID"), ("id", "ID"), ("id_like", "ID_LIKE"), ("image_id", "IMAGE_ID"),
        ("image_version", "IMAGE_VERSION"), ("name", "NAME"), ("pretty_name", "PRETTY_NAME"), ("variant", "VARIANT"),
        ("variant_id", "VARIANT_ID"), ("version", "VERSION"), ("version_codename", "VERSION_CODENAME"),
        ("version_id", "VERSION_ID"),
    ]

    /// `node_os_info` with every label where os-release was read (only `pretty_name` on macOS, from
    /// `sw_vers`), and `node_os_version`: the `major.minor` of `VERSION_ID`.
    static func osSamples(_ os: OSInfo) -> [MetricSample] {
        typealias L = MetricSample.Label
        guard !os.release.isEmpty else {
            return os.name.map { [MetricSample(NodeExporterFamilies.osInfo, [L("pretty_name", $0)], 1)] } ?? []
        }
        var samples = [
            MetricSample(
                NodeExporterFamilies.osInfo, osReleaseLabels.map { L($0.label, os.release[$0.key] ?? "") }, 1)
        ]
        if let versionID = os.release["VERSION_ID"] {
            let parts = versionID.split(separator: ".", omittingEmptySubsequences: false)
            let major = parts.first.flatMap { Int($0) }
            let minor = parts.count > 1 ? parts[1].prefix(while: \.isNumber) : ""
            if let major, let value = Double(minor.isEmpty ? "\(major)" : "\(major).\(minor)") {
                let labels = [
                    L("id", os.release["ID"] ?? ""), L("id_like", os.release["ID_LIKE"] ?? ""),
                    L("name", os.release["NAME"] ?? ""),
                ]
                samples.append(MetricSample(NodeExporterFamilies.osVersion, labels, value))
            }
        }
        return samples
    }

    /// The samples of node_exporter's other collectors, from the snapshot's ``NodeFigures``.
    static func nodeSamples(_ node: NodeFigures, snapshot: Snapshot) -> [MetricSample] {
        typealias F = NodeExporterFamilies
        typealias L = MetricSample.Label
        var samples: [MetricSample] = []
        samples.reserveCapacity(
            node.memory.count + node.netstat.count + node.sockets.count + node.networkDevices.count * 16
                + node.networkClass.count * 20 + node.softnet.count * 3 + 40)
        func add(_ family: MetricFamily, _ labels: [L] = [], _ value: UInt64?) {
            if let value { samples.append(MetricSample(family, labels, Double(value))) }
        }
        for figure in node.memory { samples.append(MetricSample(F.memory(figure.name), [], figure.value)) }
        for device in node.networkDevices {
            let labels = [L("device", device.device)]
            for counter in device.counters {
                samples.append(MetricSample(F.network(counter.name), labels, counter.value))
            }
        }
        if let activity = node.activity {
            add(F.contextSwitches, [], activity.contextSwitches)
            add(F.interrupts, [], activity.interrupts)
            add(F.forks, [], activity.forks)
            add(F.procsRunning, [], activity.procsRunning)
            add(F.procsBlocked, [], activity.procsBlocked)
        }
        for figure in node.vmstat { samples.append(MetricSample(F.vmstat(figure.name), [], figure.value)) }
        for stall in node.pressure {
            let family: MetricFamily? =
                switch (stall.resource, stall.kind) {
                case ("cpu", "some"): F.pressureCPUWaiting
                case ("io", "some"): F.pressureIOWaiting
                case ("io", "full"): F.pressureIOStalled
                case ("memory", "some"): F.pressureMemoryWaiting
                case ("memory", "full"): F.pressureMemoryStalled
                default: nil
                }
            if let family { samples.append(MetricSample(family, [], Double(stall.totalMicroseconds) / 1_000_000)) }
        }
        let pageSize = Double(node.pageSize)
        for figure in node.sockets {
            samples.append(MetricSample(F.sockstat(figure.name), [], figure.value))
            // node_exporter gives `mem` (pages) in bytes too, for sockstat and not sockstat6.
            if figure.name.hasSuffix("_mem"), !node.sockets6.contains(figure.name) {
                samples.append(MetricSample(F.sockstat(figure.name + "_bytes"), [], figure.value * pageSize))
            }
        }
        for figure in node.netstat { samples.append(MetricSample(F.netstat(figure.name), [], figure.value)) }
        add(F.filefdAllocated, [], node.fileHandlesAllocated)
        add(F.filefdMaximum, [], node.fileHandlesMaximum)
        add(F.entropyAvailable, [], node.entropyAvailable)
        add(F.entropyPoolSize, [], node.entropyPoolSize)
        add(F.conntrackEntries, [], node.conntrackEntries)
        add(F.conntrackLimit, [], node.conntrackLimit)
        for figure in node.conntrackStats {
            samples.append(MetricSample(F.conntrackStat(figure.name), [], figure.value))
        }
        for cpu in node.softnet {
            let labels = [L("cpu", String(cpu.cpu))]
            add(F.softnetDropped, labels, cpu.dropped)
            add(F.softnetProcessed, labels, cpu.processed)
            add(F.softnetSqueezed, labels, cpu.timeSqueezed)
        }
        for queues in node.udpQueues {
            add(F.udpQueues, [L("ip", queues.ip), L("queue", "rx")], queues.receiveBytes)
            add(F.udpQueues, [L("ip", queues.ip), L("queue", "tx")], queues.transmitBytes)
        }
        for entry in node.arpEntries {
            samples.append(MetricSample(F.arpEntries, [L("device", entry.name)], entry.value))
        }
        for device in node.networkClass { samples += networkClassSamples(device) }
        if let clock = node.hostClockSeconds { samples.append(MetricSample(F.timeSeconds, [], clock)) }
        if let timex = node.timex { samples += timexSamples(timex) }
        if let offset = node.clockOffsetSeconds {
            samples.append(MetricSample(HostscopeFamilies.clockOffset, [], offset))
        }
        if !node.mounts.isEmpty {
            // The last mount at a point is the one df saw (a later mount hides an earlier one).
            var readOnly: [String: Bool] = [:]
            for mount in node.mounts { readOnly[mount.mountPoint] = mount.readOnly }
            for disk in snapshot.disks where showsFilesystem(disk) {
                let labels = [L("device", disk.filesystem), L("fstype", disk.type ?? ""), L("mountpoint", disk.mount)]
                samples.append(MetricSample(F.filesystemDeviceError, labels, 0))
                if let flag = readOnly[disk.mount] {
                    samples.append(MetricSample(F.filesystemReadonly, labels, flag ? 1 : 0))
                }
            }
        }
        if let textfiles = node.textfiles {
            var failed = node.textfileError
            for file in textfiles {
                do {
                    samples += try TextfileExposition.samples(file.text)
                    if let modified = file.modifiedSeconds {
                        samples.append(MetricSample(F.textfileMtime, [L("file", file.path)], modified))
                    }
                } catch {
                    failed = true
                }
            }
            samples.append(MetricSample(F.textfileScrapeError, [], failed ? 1 : 0))
        }
        return samples
    }

    /// node_exporter's timex samples, converted as it converts them: offsets and jitter from
    /// micro- or nanoseconds (`STA_NANO`), errors and the tick from microseconds, frequencies from
    /// 2^-16 ppm; `sync_status` 0 when the clock state is `TIME_ERROR`.
    static func timexSamples(_ timex: KernelTimex) -> [MetricSample] {
        typealias F = NodeExporterFamilies
        let unit = timex.isNanoseconds ? 1e-9 : 1e-6
        let ppm16 = 65_536.0 * 1_000_000
        return [
            MetricSample(F.timexOffset, [], Double(timex.offset) * unit),
            MetricSample(F.timexFrequency, [], 1 + Double(timex.frequency) / ppm16),
            MetricSample(F.timexMaxError, [], Double(timex.maxError) * 1e-6),
            MetricSample(F.timexEstimatedError, [], Double(timex.estimatedError) * 1e-6),
            MetricSample(F.timexStatus, [], Double(timex.status)),
            MetricSample(F.timexConstant, [], Double(timex.constant)),
            MetricSample(F.timexTick, [], Double(timex.tick) * 1e-6),
            MetricSample(F.timexPPSFrequency, [], Double(timex.ppsFrequency) / ppm16),
            MetricSample(F.timexPPSJitter, [], Double(timex.jitter) * unit),
            MetricSample(F.timexPPSShift, [], Double(timex.shift)),
            MetricSample(F.timexPPSStability, [], Double(timex.stability) / ppm16),
            MetricSample(F.timexPPSJitterCount, [], Double(timex.jitterCount)),
            MetricSample(F.timexPPSCalibrationCount, [], Double(timex.calibrationCount)),
            MetricSample(F.timexPPSErrorCount, [], Double(timex.errorCount)),
            MetricSample(F.timexPPSStabilityExceededCount, [], Double(timex.stabilityExceededCount)),
            MetricSample(F.timexTAIOffset, [], Double(timex.taiOffset)),
            MetricSample(F.timexSyncStatus, [], timex.isSynchronised ? 1 : 0),
        ]
    }

    /// node_exporter's netclass samples of one device: its numeric properties, `node_network_info`,
    /// `node_network_up` and the speed in bytes (`speed` Mbit/s × 125000; `-1`, an unknown speed,
    /// gives -125000 as node_exporter's default does).
    static func networkClassSamples(_ device: NetworkDeviceClass) -> [MetricSample] {
        typealias F = NodeExporterFamilies
        typealias L = MetricSample.Label
        let labels = [L("device", device.device)]
        let attributes = device.attributes
        var samples: [MetricSample] = []
        func number(_ attribute: String) -> Double? {
            guard let text = attributes[attribute] else { return nil }
            if text.hasPrefix("0x") { return UInt64(text.dropFirst(2), radix: 16).map { Double($0) } }
            return Double(text)
        }
        for (attribute, property) in F.networkGaugeProperties {
            if let value = number(attribute) {
                samples.append(MetricSample(F.networkProperty(property), labels, value))
            }
        }
        for (attribute, property) in F.networkCounterProperties {
            if let value = number(attribute) {
                samples.append(MetricSample(F.networkProperty(property, .counter), labels, value))
            }
        }
        if let speed = number("speed") {
            samples.append(MetricSample(F.networkProperty("speed_bytes"), labels, speed * 125_000))
        }
        if let operstate = attributes["operstate"] {
            samples.append(MetricSample(F.networkUp, labels, operstate == "up" ? 1 : 0))
        }
        if attributes["address"] != nil || attributes["operstate"] != nil {
            let info = [
                L("address", attributes["address"] ?? ""), L("broadcast", attributes["broadcast"] ?? ""),
                L("device", device.device), L("duplex", attributes["duplex"] ?? ""),
                L("ifalias", attributes["ifalias"] ?? ""), L("operstate", attributes["operstate"] ?? ""),
            ]
            samples.append(MetricSample(F.networkInfo, info, 1))
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
