public import OrderedJSON
import ValueFormats

// The snapshot JSON of DESIGN.md: snake_case keys in the documented order, bytes for sizes,
// percentages as 0–100 floats, `null` where a figure is unknown (a rate on the first sample).

extension Snapshot {
    /// The `hostscope.snapshot/1` object.
    public var jsonValue: JSONValue {
        var object = JSONObject()
        object.append("schema", .string(Self.schema))
        object.append("host", .string(host))
        object.append("collected_at", .string(RFC3339.format(collectedAt)))
        object.append("collector", .string(collector))
        object.append("duration_ms", .double(durationMs))
        object.append("os", .from(os, \.jsonValue))
        object.append("uptime_seconds", .from(uptimeSeconds, JSONValue.double))
        object.append("load", .from(load, \.jsonValue))
        object.append("cpu", .from(cpu, \.jsonValue))
        object.append("memory", .from(memory, \.jsonValue))
        object.append("disks", .array(disks.map(\.jsonValue)))
        object.append("network", .array(network.map(\.jsonValue)))
        object.append("processes", .array(processes.map(\.jsonValue)))
        object.append("warnings", .array(warnings.map(JSONValue.string)))
        // Added after the first release of the schema: last, and only on scheduled records.
        if let slot { object.append("slot", .string(RFC3339.format(slot))) }
        // Added later still: only where the collector read the host's kernel files.
        if let node { object.append("kernel", node.jsonValue) }
        return .object(object)
    }
}

extension SnapshotPart {
    /// Only the sections this part holds, in snapshot order; `warnings` when there are any.
    public var jsonValue: JSONValue {
        var object = JSONObject()
        if let os { object.append("os", os.jsonValue) }
        if let uptimeSeconds { object.append("uptime_seconds", .double(uptimeSeconds)) }
        if let load { object.append("load", load.jsonValue) }
        if let cpu { object.append("cpu", cpu.jsonValue) }
        if let memory { object.append("memory", memory.jsonValue) }
        if let disks { object.append("disks", .array(disks.map(\.jsonValue))) }
        if let network { object.append("network", .array(network.map(\.jsonValue))) }
        if let processes { object.append("processes", .array(processes.map(\.jsonValue))) }
        if let devices { object.append("devices", .array(devices.map(\.jsonValue))) }
        if !warnings.isEmpty { object.append("warnings", .array(warnings.map(JSONValue.string))) }
        return .object(object)
    }
}

extension CollectionFailure {
    /// `{"schema", "host", "collected_at", "error": {"kind", "message"}}`, and `slot` on a
    /// scheduled record.
    public var jsonValue: JSONValue {
        var object: JSONObject = [
            "schema": .string(Snapshot.schema),
            "host": .string(host),
            "collected_at": .string(RFC3339.format(collectedAt)),
            "error": .object(["kind": .string(kind.rawValue), "message": .string(message)]),
        ]
        if let slot { object.append("slot", .string(RFC3339.format(slot))) }
        return .object(object)
    }
}

extension SnapshotRecord {
    public var jsonValue: JSONValue {
        switch self {
        case .snapshot(let snapshot): snapshot.jsonValue
        case .failure(let failure): failure.jsonValue
        }
    }
}

extension OSInfo {
    public var jsonValue: JSONValue {
        .object([
            "family": .string(family), "name": .from(name, JSONValue.string),
            "kernel": .from(kernel, JSONValue.string), "arch": .from(arch, JSONValue.string),
        ])
    }
}

extension LoadAverage {
    public var jsonValue: JSONValue {
        .object(["1m": .double(one), "5m": .double(five), "15m": .double(fifteen)])
    }
}

extension CPUStats {
    public var jsonValue: JSONValue {
        .object([
            "cores": .from(cores, JSONValue.number),
            "sample_ms": .from(sampleMs, JSONValue.double),
            "busy_percent": .from(busyPercent, JSONValue.double),
            "active_percent": .from(activePercent, JSONValue.double),
            "user_percent": .from(userPercent, JSONValue.double),
            "nice_percent": .from(nicePercent, JSONValue.double),
            "system_percent": .from(systemPercent, JSONValue.double),
            "iowait_percent": .from(iowaitPercent, JSONValue.double),
            "irq_percent": .from(irqPercent, JSONValue.double),
            "softirq_percent": .from(softirqPercent, JSONValue.double),
            "steal_percent": .from(stealPercent, JSONValue.double),
            "idle_percent": .from(idlePercent, JSONValue.double),
            "per_core": .array(
                perCore.map {
                    .object(["core": .number($0.core), "busy_percent": .from($0.busyPercent, JSONValue.double)])
                }
            ),
        ])
    }
}

extension MemoryStats {
    public var jsonValue: JSONValue {
        .object([
            "total_bytes": .from(totalBytes, JSONValue.uint),
            "used_bytes": .from(usedBytes, JSONValue.uint),
            "available_bytes": .from(availableBytes, JSONValue.uint),
            "free_bytes": .from(freeBytes, JSONValue.uint),
            "buffers_bytes": .from(buffersBytes, JSONValue.uint),
            "cached_bytes": .from(cachedBytes, JSONValue.uint),
            "used_percent": .from(usedPercent, JSONValue.double),
            "swap_total_bytes": .from(swapTotalBytes, JSONValue.uint),
            "swap_used_bytes": .from(swapUsedBytes, JSONValue.uint),
            "definition": .from(definition, JSONValue.string),
        ])
    }
}

extension DiskStats {
    public var jsonValue: JSONValue {
        .object([
            "filesystem": .string(filesystem),
            "type": .from(type, JSONValue.string),
            "mount": .string(mount),
            "size_bytes": .from(sizeBytes, JSONValue.uint),
            "used_bytes": .from(usedBytes, JSONValue.uint),
            "available_bytes": .from(availableBytes, JSONValue.uint),
            "used_percent": .from(usedPercent, JSONValue.double),
            "inodes_total": .from(inodesTotal, JSONValue.uint),
            "inodes_used": .from(inodesUsed, JSONValue.uint),
            "read_bytes_per_second": .from(readBytesPerSecond, JSONValue.double),
            "write_bytes_per_second": .from(writeBytesPerSecond, JSONValue.double),
        ])
    }
}

extension NetworkInterfaceStats {
    public var jsonValue: JSONValue {
        .object([
            "interface": .string(interface),
            "rx_bytes": .from(rxBytes, JSONValue.uint),
            "tx_bytes": .from(txBytes, JSONValue.uint),
            "rx_bytes_per_second": .from(rxBytesPerSecond, JSONValue.double),
            "tx_bytes_per_second": .from(txBytesPerSecond, JSONValue.double),
            "rx_errors": .from(rxErrors, JSONValue.uint),
            "tx_errors": .from(txErrors, JSONValue.uint),
            "rx_dropped": .from(rxDropped, JSONValue.uint),
            "tx_dropped": .from(txDropped, JSONValue.uint),
        ])
    }
}

extension BlockDeviceStats {
    /// `{"device", "read_bytes", "write_bytes", "reads", "writes", "read_bytes_per_second", …}`.
    public var jsonValue: JSONValue {
        .object([
            "device": .string(device),
            "read_bytes": .from(readBytes, JSONValue.uint),
            "write_bytes": .from(writeBytes, JSONValue.uint),
            "reads": .from(reads, JSONValue.uint),
            "writes": .from(writes, JSONValue.uint),
            "read_bytes_per_second": .from(readBytesPerSecond, JSONValue.double),
            "write_bytes_per_second": .from(writeBytesPerSecond, JSONValue.double),
            "reads_per_second": .from(readsPerSecond, JSONValue.double),
            "writes_per_second": .from(writesPerSecond, JSONValue.double),
            "utilization_percent": .from(utilizationPercent, JSONValue.double),
            "bytes_per_second": .from(bytesPerSecond, JSONValue.double),
            "transfers_per_second": .from(transfersPerSecond, JSONValue.double),
        ])
    }
}

extension ProcessStats {
    public var jsonValue: JSONValue {
        .object([
            "pid": .number(pid),
            "ppid": .from(ppid, JSONValue.number),
            "user": .from(user, JSONValue.string),
            "cpu_percent": .from(cpuPercent, JSONValue.double),
            "memory_percent": .from(memoryPercent, JSONValue.double),
            "rss_bytes": .from(rssBytes, JSONValue.uint),
            "command": .string(command),
        ])
    }
}
