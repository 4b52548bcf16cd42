import Foundation
import HostStats
import HostscopeCore
import OrderedJSON
import TerminalUI
import TestSupport
import Testing

@Suite struct SnapshotTableTests {
    @Test func aMacSnapshotShowsOnlyTheCPUSharesMacOSReports() throws {
        let url = Repository.fixtures.appendingPathComponent("probes/macos-14.4.1-apple-silicon/snapshot.json")
        let record = try SnapshotRecord(json: JSONParser.parse(String(contentsOf: url, encoding: .utf8)))
        let table = SnapshotTable.render(record)
        #expect(table.contains("macOS 14.4.1 · kernel 23.4.0 arm64"))
        #expect(table.contains("(user 21.4, system 9.5) · 10 cores · over 1000 ms"))
        #expect(!table.contains("iowait"))
    }

    /// Pressure stall shares and the run queue under the memory line, where the kernel gives them.
    @Test func pressureAndTheRunQueueShowWhereTheKernelGivesThem() throws {
        guard case .snapshot(var snapshot) = try Self.containerHost() else { return }
        var node = NodeFigures()
        node.activity = KernelActivity(procsRunning: 3, procsBlocked: 1)
        #expect(!SnapshotTable.render(.snapshot(snapshot)).contains("PSI "))
        node.pressure = [
            PressureStall(resource: "cpu", kind: "some", avg10: 12.34, avg60: 0, avg300: 0, totalMicroseconds: 1),
            PressureStall(resource: "io", kind: "some", avg10: 3.3, avg60: 0, avg300: 0, totalMicroseconds: 1),
            PressureStall(resource: "io", kind: "full", avg10: 0.7, avg60: 0, avg300: 0, totalMicroseconds: 1),
        ]
        snapshot.node = node
        let table = SnapshotTable.render(.snapshot(snapshot), width: 120)
        #expect(table.contains("PSI   cpu 12.3% some · io 3.3% some 0.7% full · 3 running, 1 blocked"), "\(table)")
    }

    /// `--sample 0`: one read, no window; the CPU line says why it has no busy share.
    @Test func aSnapshotWithoutASamplingWindowSaysItsCPUWasNotMeasured() throws {
        guard case .snapshot(var snapshot) = try Self.containerHost() else { return }
        let cores = snapshot.cpu?.cores
        snapshot.cpu = CPUStats(cores: cores)
        let table = SnapshotTable.render(.snapshot(snapshot))
        #expect(table.contains("CPU   busy not measured (one read, no sampling window)"), "\(table)")
        #expect(!table.contains("- busy"))
    }

    /// The BusyBox capture with the filesystems a container host has: overlay mounts with long paths, a device
    /// mapper volume, a FUSE type, and busy disks whose rates need their widest units.
    static func containerHost() throws -> SnapshotRecord {
        let url = Repository.fixtures.appendingPathComponent("probes/busybox-1.35.0-debian12/snapshot.json")
        let record = try SnapshotRecord(json: JSONParser.parse(String(contentsOf: url, encoding: .utf8)))
        guard case .snapshot(var snapshot) = record else { throw HarnessError(description: "not a snapshot") }
        snapshot.disks += [
            DiskStats(
                filesystem: "overlay", type: "overlay",
                mount:
                    "/var/lib/docker/overlay2/3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f/merged",
                sizeBytes: 270_553_174_016, usedBytes: 17_321_459_712, availableBytes: 84_121_726_976,
                usedPercent: 17.075035078771837, readBytesPerSecond: 123_456.7, writeBytesPerSecond: 987_654_321),
            DiskStats(
                filesystem: "/dev/mapper/vg0-srv--data--volume", type: "xfs", mount: "/srv/data",
                sizeBytes: 4_398_046_511_104, usedBytes: 3_848_290_697_216, availableBytes: 549_755_813_888,
                usedPercent: 87.5, readBytesPerSecond: 104_857_600, writeBytesPerSecond: 1023),
            DiskStats(
                filesystem: "me@backup.example.com:/export/home/me", type: "fuse.sshfs", mount: "/home/me/mnt/backup",
                sizeBytes: 1_000_000_000_000, usedBytes: 999_999_000_000, availableBytes: 1_000_000,
                usedPercent: 99.9999),
        ]
        return .snapshot(snapshot)
    }

    @Test func theTableListsRealFilesystemsFullestFirstAndLeavesPseudoOnesAndVirtualInterfacesToAll() throws {
        let record = try Self.containerHost()
        let mounts = { (table: String) in
            table.split(separator: "\n").compactMap { line -> String? in
                line.hasPrefix("/") ? String(line.split(separator: " ")[0]) : nil
            }
        }
        let table = SnapshotTable.render(record, width: 240)
        #expect(mounts(table) == ["/home/me/mnt/backup", "/srv/data", "/"], "\(table)")
        let interfaces = table.split(separator: "\n").filter { line in
            ["lo ", "ifb0 ", "ifb1 ", "eth0 "].contains { line.hasPrefix($0) }
        }
        #expect(interfaces.map { String($0.split(separator: " ")[0]) } == ["eth0"], "\(table)")
        #expect(table.contains("5 pseudo filesystems and 3 virtual interfaces not shown; --all shows them"), "\(table)")

        let all = SnapshotTable.render(record, width: 240, all: true)
        #expect(Array(mounts(all).prefix(3)) == ["/home/me/mnt/backup", "/srv/data", "/"], "\(all)")
        #expect(
            Set(mounts(all).dropFirst(3)) == [
                "/var/lib/docker/overlay2/3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f/merged",
                "/dev", "/dev/shm", "/srv/archive/volumes/shared/readonly/stor", "/sys/fs/cgroup",
            ])
        #expect(!all.contains("not shown"))
        // The JSON keeps every entry.
        guard case .snapshot(let snapshot) = record else { return }
        #expect(snapshot.disks.count == 8 && snapshot.network.count == 4)
    }

    @Test(arguments: [80, 120])
    func theTableMatchesItsGoldenAndFitsTheWidth(_ width: Int) throws {
        let table = SnapshotTable.render(try Self.containerHost(), width: width)
        for line in table.split(separator: "\n") {
            #expect(line.count <= width, "\(line.count) columns: \(line)")
        }
        #expect(table == (try golden("terminal/snapshot-\(width).txt", recording: table)))
    }

    @Test func atEightyColumnsLongNamesAreShortenedWhereTheyTellLeastAndFiguresTakeDfsUnits() throws {
        let lines = SnapshotTable.render(try Self.containerHost(), width: 80, all: true).split(separator: "\n").map(
            String.init)
        // The mount point keeps its start and its end, the filesystem its end.
        let overlay = try #require(lines.first { $0.hasPrefix("/var/li…merged ") })
        #expect(overlay.contains(" overlay "))
        let volume = try #require(lines.first { $0.hasPrefix("/srv/data ") })
        #expect(volume.contains(" …a--volume "))
        #expect(volume.contains("4.0T") && volume.contains("3.5T") && volume.contains("512G"))
        #expect(volume.contains("100M/s") && volume.contains("1023B/s"))
        // Where the whole names and the binary units fit, both are shown.
        let wide = SnapshotTable.render(try Self.containerHost(), width: 240, all: true)
        #expect(wide.contains("/overlay2/3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f/merged "))
        #expect(wide.contains("4.0 TiB") && wide.contains("100.0 MiB/s"))
    }
}
