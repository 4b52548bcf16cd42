import Foundation
import HostStats

@testable import Storage

/// A directory under the system temp directory, removed when the test is done with it.
final class TemporaryDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "hostscope-storage-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Snapshot and error records with varied, recognisable figures.
enum Records {
    static let epoch = Date(timeIntervalSince1970: 1_795_000_000)

    /// A full snapshot of `host` collected `seconds` after ``epoch``; `processes` adds bulk.
    static func snapshot(_ host: String, at seconds: Double, busy: Double = 12.5, processes: Int = 3) -> SnapshotRecord
    {
        var snapshot = Snapshot(
            host: host, collectedAt: epoch.addingTimeInterval(seconds), collector: "proc", durationMs: 4.25,
            os: OSInfo(
                family: "linux", name: "Debian GNU/Linux 12 (bookworm)", kernel: "6.1.0-18-amd64", arch: "x86_64"),
            uptimeSeconds: 86_400, load: LoadAverage(one: 0.12, five: 0.2, fifteen: 0.31),
            cpu: CPUStats(
                cores: 2, sampleMs: 250, busyPercent: busy, activePercent: busy + 0.5, userPercent: 9, nicePercent: 0,
                systemPercent: 3.5, iowaitPercent: 0.5, irqPercent: 0, softirqPercent: 0, stealPercent: 0,
                idlePercent: 100 - busy - 0.5,
                perCore: [CoreStats(core: 0, busyPercent: 10), CoreStats(core: 1, busyPercent: nil)]),
            memory: MemoryStats(
                totalBytes: 8_000_000_000, usedBytes: 2_000_000_000, availableBytes: 6_000_000_000,
                freeBytes: 1_000_000_000, buffersBytes: 100, cachedBytes: 200, usedPercent: 25, swapTotalBytes: 0,
                swapUsedBytes: 0, definition: "total-available"),
            disks: [
                DiskStats(
                    filesystem: "/dev/vda1", type: "ext4", mount: "/", sizeBytes: 100, usedBytes: 40,
                    availableBytes: 60, usedPercent: 40, inodesTotal: 10, inodesUsed: 1, readBytesPerSecond: nil,
                    writeBytesPerSecond: 3.5)
            ],
            network: [NetworkInterfaceStats(interface: "eth0", rxBytes: 1, txBytes: 2, rxBytesPerSecond: nil)],
            warnings: ["a warning with \"quotes\" and ünïcode"])
        snapshot.processes = (0..<processes).map { index in
            ProcessStats(
                pid: index + 1, ppid: 0, user: "root", cpuPercent: 0.1, memoryPercent: 0.3, rssBytes: 4096,
                command: "/usr/bin/worker --id \(index) --label some-longer-argument-text")
        }
        return .snapshot(snapshot)
    }

    static func failure(_ host: String, at seconds: Double, kind: FailureKind = .timeout) -> SnapshotRecord {
        .failure(
            CollectionFailure(
                host: host, collectedAt: epoch.addingTimeInterval(seconds), kind: kind,
                message: "\(host) did not answer within 10s"))
    }

    static func at(_ seconds: Double) -> Date { epoch.addingTimeInterval(seconds) }
}

extension StorageDatabase {
    /// Opens a fresh database in `directory`.
    static func fresh(
        in directory: TemporaryDirectory, name: String = "hostscope.sqlite", options: Options = Options()
    ) async throws -> StorageDatabase {
        try await open(at: directory.file(name), options: options)
    }
}
