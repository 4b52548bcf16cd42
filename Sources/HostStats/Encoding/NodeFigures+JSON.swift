public import OrderedJSON

// The snapshot JSON's `kernel` object (added to `hostscope.snapshot/1` after its first release: last
// in the record, and only where the collector read the host's kernel files): what a person would look
// up beside the snapshot's own figures: the kernel's activity counters, pressure stall figures, every
// /proc/meminfo field, file handles and the host's clock.

extension NodeFigures {
    /// The `kernel` object.
    public var jsonValue: JSONValue {
        var object = JSONObject()
        object.append("context_switches", .from(activity?.contextSwitches, JSONValue.uint))
        object.append("interrupts", .from(activity?.interrupts, JSONValue.uint))
        object.append("forks", .from(activity?.forks, JSONValue.uint))
        object.append("procs_running", .from(activity?.procsRunning, JSONValue.uint))
        object.append("procs_blocked", .from(activity?.procsBlocked, JSONValue.uint))
        var pressure = JSONObject()
        for resource in ["cpu", "io", "memory"] {
            var kinds = JSONObject()
            for stall in self.pressure where stall.resource == resource {
                kinds.append(
                    stall.kind,
                    .object([
                        "avg10": .double(stall.avg10), "avg60": .double(stall.avg60), "avg300": .double(stall.avg300),
                        "total_seconds": .double(Double(stall.totalMicroseconds) / 1_000_000),
                    ]))
            }
            if !kinds.isEmpty { pressure.append(resource, .object(kinds)) }
        }
        object.append("pressure", .object(pressure))
        var meminfo = JSONObject()
        for figure in memory {
            // Bytes and page counts, whole numbers as the kernel gives them.
            let whole = figure.value >= 0 && figure.value < 0x1p64 ? UInt64(exactly: figure.value) : nil
            meminfo.append(figure.name, whole.map(JSONValue.uint) ?? .double(figure.value))
        }
        object.append("meminfo", .object(meminfo))
        object.append("file_handles_allocated", .from(fileHandlesAllocated, JSONValue.uint))
        object.append("file_handles_maximum", .from(fileHandlesMaximum, JSONValue.uint))
        object.append("clock_seconds", .from(hostClockSeconds, JSONValue.double))
        object.append("clock_offset_seconds", .from(clockOffsetSeconds, JSONValue.double))
        if let timex { object.append("timex", timex.jsonValue) }
        return .object(object)
    }

    /// The figures of a `kernel` object; the rest of ``NodeFigures`` is not in the record.
    public init(json: JSONValue) {
        self.init()
        func count(_ key: String) -> UInt64? {
            json[key]?.doubleValue.flatMap { $0 >= 0 ? UInt64(exactly: $0.rounded()) : nil }
        }
        let activity = KernelActivity(
            contextSwitches: count("context_switches"), interrupts: count("interrupts"), forks: count("forks"),
            procsRunning: count("procs_running"), procsBlocked: count("procs_blocked"))
        self.activity = activity == KernelActivity() ? nil : activity
        for resource in ["cpu", "io", "memory"] {
            guard let kinds = json["pressure"]?[resource]?.objectValue else { continue }
            for (kind, value) in kinds {
                guard let avg10 = value["avg10"]?.doubleValue, let avg60 = value["avg60"]?.doubleValue,
                    let avg300 = value["avg300"]?.doubleValue, let total = value["total_seconds"]?.doubleValue
                else { continue }
                pressure.append(
                    PressureStall(
                        resource: resource, kind: kind, avg10: avg10, avg60: avg60, avg300: avg300,
                        totalMicroseconds: UInt64(max(0, (total * 1_000_000).rounded()))))
            }
        }
        for (name, value) in json["meminfo"]?.objectValue ?? [:] {
            if let number = value.doubleValue { memory.append(KernelFigure(name, number)) }
        }
        fileHandlesAllocated = count("file_handles_allocated")
        fileHandlesMaximum = count("file_handles_maximum")
        hostClockSeconds = json["clock_seconds"]?.doubleValue
        clockOffsetSeconds = json["clock_offset_seconds"]?.doubleValue
        timex = json["timex"].flatMap(KernelTimex.init(json:))
    }
}

extension KernelTimex {
    /// `struct timex`'s fields under their names in adjtimex(2), in the kernel's units, with the call's
    /// return value as `state` and `synchronised` (the state is not `TIME_ERROR`) for a reader.
    static var fieldNames: [(name: String, path: WritableKeyPath<KernelTimex, Int64>)] {
        [
            ("state", \.state), ("status", \.status), ("offset", \.offset), ("freq", \.frequency),
            ("maxerror", \.maxError), ("esterror", \.estimatedError), ("constant", \.constant),
            ("precision", \.precision), ("tolerance", \.tolerance), ("tick", \.tick), ("ppsfreq", \.ppsFrequency),
            ("jitter", \.jitter), ("shift", \.shift), ("stabil", \.stability), ("jitcnt", \.jitterCount),
            ("calcnt", \.calibrationCount), ("errcnt", \.errorCount), ("stbcnt", \.stabilityExceededCount),
            ("tai", \.taiOffset),
        ]
    }

    public var jsonValue: JSONValue {
        var object: JSONObject = ["synchronised": .bool(isSynchronised)]
        for (name, path) in Self.fieldNames { object.append(name, .int(self[keyPath: path])) }
        return .object(object)
    }

    /// The figures of a `timex` object; nil when a field is missing or not a whole number.
    public init?(json: JSONValue) {
        self.init(
            state: 0, offset: 0, frequency: 0, maxError: 0, estimatedError: 0, status: 0, constant: 0, precision: 0,
            tolerance: 0, tick: 0, ppsFrequency: 0, jitter: 0, shift: 0, stability: 0, jitterCount: 0,
            calibrationCount: 0, errorCount: 0, stabilityExceededCount: 0, taiOffset: 0)
        for (name, path) in Self.fieldNames {
            guard let value = json[name]?.doubleValue, let whole = Int64(exactly: value) else { return nil }
            self[keyPath: path] = whole
        }
    }
}
