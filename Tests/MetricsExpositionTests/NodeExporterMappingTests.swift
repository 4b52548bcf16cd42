import Foundation
import HostStats
import MetricsExposition
import TestSupport
import Testing

@Suite struct NodeExporterMappingTests {
    @Test func everyFamilyHasTheHelpAndTypeNodeExporterGivesIt() throws {
        let capture = String(
            decoding: try Data(
                contentsOf: Repository.fixtures.appendingPathComponent("node_exporter/help-and-type-1.5.0.txt")),
            as: UTF8.self)
        let captured = Set(
            capture.split(separator: "\n").filter { $0.hasPrefix("# HELP") || $0.hasPrefix("# TYPE") }
                .map(String.init))
        var ours: Set<String> = []
        for family in NodeExporterFamilies.all {
            ours.insert("# HELP \(family.name) \(family.help)")
            ours.insert("# TYPE \(family.name) \(family.type.rawValue)")
        }
        // Families only another kernel's files name (Cma*, HardwareCorrupted: not on the capture's machine).
        let otherKernels: Set<String> = ["CmaFree_bytes", "CmaTotal_bytes", "HardwareCorrupted_bytes"]
        let checked = ours.filter { line in !otherKernels.contains { line.contains("node_memory_\($0) ") } }
        #expect(checked.subtracting(captured).sorted() == [], "lines node_exporter does not write")
        let leftOut = Set(
            captured.subtracting(ours).compactMap { $0.split(separator: " ").dropFirst(2).first.map(String.init) })
        #expect(leftOut == Self.notGiven, "node_exporter families left out")
    }

    /// The families of node_exporter's default Linux collectors that hostscope does not give, and
    /// why (docs/serve.md says the same): about node_exporter itself, or from system calls a probe
    /// cannot make (the time zone, SELinux, the clock sources).
    static let notGiven: Set<String> = [
        "node_exporter_build_info", "node_scrape_collector_duration_seconds", "node_scrape_collector_success",
        "node_selinux_enabled", "node_time_clocksource_available_info", "node_time_clocksource_current_info",
        "node_time_zone_offset_seconds",
    ]

    @Test func cpuCountersBecomeSecondsPerCPUAndModeAsTheKernelCountsThem() throws {
        let fixture = try ExpositionFixture.debian12()
        let samples = fixture.samples()
        let cpuSeconds = samples.filter { $0.family == NodeExporterFamilies.cpuSeconds }
        // proc_stat.txt: cpu0 11995 0 1265 28698 335 0 26 15 0 0 (USER_HZ 100).
        func value(_ cpu: String, _ mode: String) -> Double? {
            cpuSeconds.first { $0.label("cpu") == cpu && $0.label("mode") == mode }?.value
        }
        #expect(value("0", "user") == 119.95)
        #expect(value("0", "idle") == 286.98)
        #expect(value("0", "iowait") == 3.35)
        #expect(value("0", "softirq") == 0.26)
        #expect(value("0", "steal") == 0.15)
        #expect(value("1", "system") == 12.03)
        #expect(cpuSeconds.count == fixture.cpu.perCore.count * 8)
        #expect(
            samples.contains {
                $0.family == NodeExporterFamilies.bootTime && $0.value == Double(fixture.cpu.bootTime ?? -1)
            })
    }

    @Test func memoryFiltersystemAndNetworkFiguresKeepNodeExporterLabels() throws {
        let fixture = try ExpositionFixture.debian12()
        let samples = fixture.samples()
        let memory = try #require(fixture.snapshot.memory)
        #expect(samples.first { $0.family == NodeExporterFamilies.memTotal }?.value == Double(memory.totalBytes ?? 0))
        #expect(
            samples.first { $0.family == NodeExporterFamilies.memAvailable }?.value
                == Double(memory.availableBytes ?? 0))

        let avail = samples.filter { $0.family == NodeExporterFamilies.filesystemAvail }
        let root = try #require(avail.first { $0.label("mountpoint") == "/" })
        #expect(root.labels.map(\.name) == ["device", "fstype", "mountpoint"])
        #expect(root.label("device") == "/dev/vda")
        #expect(root.value == 82_591_440 * 1024)
        let size = try #require(
            samples.first {
                $0.family == NodeExporterFamilies.filesystemSize && $0.label("mountpoint") == "/"
            })
        let free = try #require(
            samples.first {
                $0.family == NodeExporterFamilies.filesystemFree && $0.label("mountpoint") == "/"
            })
        #expect(size.value - free.value == 16_474_172 * 1024)
        // /dev, /dev/shm and /sys/fs/cgroup are left out by node_exporter's default mount point filter.
        #expect(
            avail.allSatisfy {
                !$0.label("mountpoint")!.hasPrefix("/dev") && !$0.label("mountpoint")!.hasPrefix("/sys")
            })

        let received = samples.filter { $0.family == NodeExporterFamilies.networkReceiveBytes }
        #expect(received.count == fixture.snapshot.network.count)
        #expect(received.allSatisfy { $0.labels.map(\.name) == ["device"] })
    }

    @Test func diskCountersAreBytesAndSecondsOfWholeDisksOnly() throws {
        let fixture = try ExpositionFixture.debian12()
        let samples = fixture.samples()
        let readBytes = samples.filter { $0.family == NodeExporterFamilies.diskReadBytes }
        let shown = fixture.disks.filter { NodeExporterMapping.showsBlockDevice($0.device) }
        #expect(readBytes.count == shown.count)
        for disk in shown {
            #expect(readBytes.first { $0.label("device") == disk.device }?.value == Double(disk.sectorsRead * 512))
            if let ms = disk.ioMilliseconds {
                #expect(
                    samples.first { $0.family == NodeExporterFamilies.diskIOTime && $0.label("device") == disk.device }?
                        .value == Double(ms) / 1000)
            }
        }
    }

    @Test(arguments: [
        ("sda", true), ("sda1", false), ("vda", true), ("vda15", false), ("xvdb3", false), ("nvme0n1", true),
        ("nvme0n1p2", false), ("loop7", false), ("ram0", false), ("zram0", true), ("dm-0", true), ("md127", true),
        ("fd0", false), ("sr0", true), ("loop", true),
    ])
    func blockDevicesFollowNodeExporterDefaultExcludes(device: String, shown: Bool) {
        #expect(NodeExporterMapping.showsBlockDevice(device) == shown)
    }

    @Test(arguments: [
        ("/", "ext4", true), ("/proc", "proc", false), ("/dev/shm", "tmpfs", false), ("/run", "tmpfs", true),
        ("/var/lib/docker/overlay2/x/merged", "xfs", false), ("/var/lib/docker", "ext4", true),
        ("/snap/core/1", "squashfs", false), ("/run/credentials/x.service", "ramfs", false), ("/devices", "ext4", true),
    ])
    func filesystemsFollowNodeExporterDefaultExcludes(mount: String, type: String, shown: Bool) {
        #expect(NodeExporterMapping.showsFilesystem(DiskStats(filesystem: "x", type: type, mount: mount)) == shown)
    }

    @Test func aFailingHostHasNoNodeFiguresAndUpIsZero() {
        let failure = CollectionFailure(host: "db1", collectedAt: Date(), kind: .connect, message: "refused")
        let summary = HostCollectionSummary(
            host: "db1", latest: .failure(failure), lastSuccess: Date(timeIntervalSince1970: 100), collections: 3,
            errors: [.connect: 1])
        let samples = FleetExposition.samples(for: summary, topProcesses: 5)
        #expect(samples.first { $0.family == HostscopeFamilies.up }?.value == 0)
        #expect(samples.first { $0.family == HostscopeFamilies.lastSuccess }?.value == 100)
        #expect(samples.filter { $0.family == HostscopeFamilies.errors }.count == FailureKind.allCases.count)
        #expect(samples.first { $0.family == HostscopeFamilies.errors && $0.label("kind") == "connect" }?.value == 1)
        #expect(!samples.contains { $0.family.name.hasPrefix("node_") })
    }

    @Test func topProcessesAreBoundedAndNamedByTheirExecutableOnly() throws {
        let fixture = try ExpositionFixture.debian12()
        let info = fixture.samples(topProcesses: 1).filter { $0.family == HostscopeFamilies.topProcessInfo }
        #expect(info.count == 1)
        #expect(info.first?.label("command") == "postgres")
        #expect(info.first?.label("rank") == "1")
        let all = fixture.samples(topProcesses: 500).filter { $0.family == HostscopeFamilies.topProcessInfo }
        #expect(all.count == min(fixture.snapshot.processes.count, HostscopeFamilies.topProcessLimit))
        #expect(all.contains { $0.label("command") == "[kthreadd]" })
        let text = String(decoding: fixture.document(.prometheusText), as: UTF8.self)
        #expect(!text.contains("hunter2"))
    }
}
