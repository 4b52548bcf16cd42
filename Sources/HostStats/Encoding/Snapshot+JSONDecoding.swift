import Foundation
public import OrderedJSON
import ValueFormats

/// A snapshot JSON object that does not have the shape of `hostscope.snapshot/1`.
public struct SnapshotDecodingError: Error, Sendable, CustomStringConvertible {
    public var description: String
}

// Reading snapshot JSON back (from the history database, or a file a user feeds in). Unknown
// keys are ignored so that a newer minor revision of the schema still reads.

extension SnapshotRecord {
    public init(json: JSONValue) throws(SnapshotDecodingError) {
        guard let object = json.objectValue else { throw SnapshotDecodingError(description: "not a JSON object") }
        guard let host = object["host"]?.stringValue else {
            throw SnapshotDecodingError(description: "missing \"host\"")
        }
        guard let stamp = object["collected_at"]?.stringValue, let collectedAt = RFC3339.parse(stamp) else {
            throw SnapshotDecodingError(description: "missing or invalid \"collected_at\"")
        }
        let slot = object["slot"]?.stringValue.flatMap(RFC3339.parse)
        if let error = object["error"], !error.isNull {
            let kind = error["kind"]?.stringValue.flatMap(FailureKind.init(rawValue:)) ?? .command
            var failure = CollectionFailure(
                host: host, collectedAt: collectedAt, kind: kind, message: error["message"]?.stringValue ?? "")
            failure.slot = slot
            self = .failure(failure)
            return
        }
        var snapshot = Snapshot(
            host: host, collectedAt: collectedAt, collector: object["collector"]?.stringValue ?? "unknown",
            durationMs: object["duration_ms"]?.doubleValue ?? 0)
        snapshot.slot = slot
        if let os = object["os"]?.objectValue, let family = os["family"]?.stringValue {
            snapshot.os = OSInfo(
                family: family, name: os["name"]?.stringValue, kernel: os["kernel"]?.stringValue,
                arch: os["arch"]?.stringValue)
        }
        snapshot.uptimeSeconds = object["uptime_seconds"]?.doubleValue
        if let load = object["load"]?.objectValue, let one = load["1m"]?.doubleValue,
            let five = load["5m"]?.doubleValue, let fifteen = load["15m"]?.doubleValue
        {
            snapshot.load = LoadAverage(one: one, five: five, fifteen: fifteen)
        }
        if let cpu = object["cpu"]?.objectValue {
            snapshot.cpu = CPUStats(
                cores: cpu["cores"]?.intValue, sampleMs: cpu["sample_ms"]?.doubleValue,
                busyPercent: cpu["busy_percent"]?.doubleValue, activePercent: cpu["active_percent"]?.doubleValue,
                userPercent: cpu["user_percent"]?.doubleValue, nicePercent: cpu["nice_percent"]?.doubleValue,
                systemPercent: cpu["system_percent"]?.doubleValue, iowaitPercent: cpu["iowait_percent"]?.doubleValue,
                irqPercent: cpu["irq_percent"]?.doubleValue, softirqPercent: cpu["softirq_percent"]?.doubleValue,
                stealPercent: cpu["steal_percent"]?.doubleValue, idlePercent: cpu["idle_percent"]?.doubleValue,
                perCore: (cpu["per_core"]?.arrayValue ?? []).compactMap { core in
                    core["core"]?.intValue.map { CoreStats(core: $0, busyPercent: core["busy_percent"]?.doubleValue) }
                })
        }
        if let memory = object["memory"]?.objectValue {
            snapshot.memory = MemoryStats(
                totalBytes: memory["total_bytes"]?.uint64Value, usedBytes: memory["used_bytes"]?.uint64Value,
                availableBytes: memory["available_bytes"]?.uint64Value, freeBytes: memory["free_bytes"]?.uint64Value,
                buffersBytes: memory["buffers_bytes"]?.uint64Value, cachedBytes: memory["cached_bytes"]?.uint64Value,
                usedPercent: memory["used_percent"]?.doubleValue,
                swapTotalBytes: memory["swap_total_bytes"]?.uint64Value,
                swapUsedBytes: memory["swap_used_bytes"]?.uint64Value, definition: memory["definition"]?.stringValue)
        }
        snapshot.disks = (object["disks"]?.arrayValue ?? []).compactMap { disk in
            guard let filesystem = disk["filesystem"]?.stringValue, let mount = disk["mount"]?.stringValue else {
                return nil
            }
            return DiskStats(
                filesystem: filesystem, type: disk["type"]?.stringValue, mount: mount,
                sizeBytes: disk["size_bytes"]?.uint64Value, usedBytes: disk["used_bytes"]?.uint64Value,
                availableBytes: disk["available_bytes"]?.uint64Value, usedPercent: disk["used_percent"]?.doubleValue,
                inodesTotal: disk["inodes_total"]?.uint64Value, inodesUsed: disk["inodes_used"]?.uint64Value,
                readBytesPerSecond: disk["read_bytes_per_second"]?.doubleValue,
                writeBytesPerSecond: disk["write_bytes_per_second"]?.doubleValue)
        }
        snapshot.network = (object["network"]?.arrayValue ?? []).compactMap { interface in
            guard let name = interface["interface"]?.stringValue else { return nil }
            return NetworkInterfaceStats(
                interface: name, rxBytes: interface["rx_bytes"]?.uint64Value,
                txBytes: interface["tx_bytes"]?.uint64Value,
                rxBytesPerSecond: interface["rx_bytes_per_second"]?.doubleValue,
                txBytesPerSecond: interface["tx_bytes_per_second"]?.doubleValue,
                rxErrors: interface["rx_errors"]?.uint64Value, txErrors: interface["tx_errors"]?.uint64Value,
                rxDropped: interface["rx_dropped"]?.uint64Value, txDropped: interface["tx_dropped"]?.uint64Value)
        }
        snapshot.processes = (object["processes"]?.arrayValue ?? []).compactMap { process in
            guard let pid = process["pid"]?.intValue else { return nil }
            return ProcessStats(
                pid: pid, ppid: process["ppid"]?.intValue, user: process["user"]?.stringValue,
                cpuPercent: process["cpu_percent"]?.doubleValue, memoryPercent: process["memory_percent"]?.doubleValue,
                rssBytes: process["rss_bytes"]?.uint64Value, command: process["command"]?.stringValue ?? "")
        }
        snapshot.warnings = (object["warnings"]?.arrayValue ?? []).compactMap(\.stringValue)
        if let kernel = object["kernel"], kernel.objectValue != nil { snapshot.node = NodeFigures(json: kernel) }
        self = .snapshot(snapshot)
    }
}

extension JSONValue {
    /// The value as a `UInt64` when it is a non-negative integer.
    var uint64Value: UInt64? {
        switch self {
        case .int(let value): UInt64(exactly: value)
        case .uint(let value): value
        case .double(let value): UInt64(exactly: value)
        default: nil
        }
    }
}
