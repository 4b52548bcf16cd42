public import Foundation

/// Turns the files of a probe's last sample into ``NodeFigures``: each file through its parser, a
/// file the host did not have left out, a file that does not parse named once in `warnings`.
public enum NodeFiguresReader {
    /// The most `*.prom` files read from the textfile directory per tick.
    public static let textfileLimit = 64
    /// The most lines read of one `*.prom` file.
    public static let textfileLineLimit = 5000

    /// The figures of one sample's `files` (path → text), a `date +%s.%N` line where a probe printed
    /// one (`clock`) and the `stat -c '%Y %n'` lines of its `textfiles` section.
    ///
    /// The host's clock is `clockBase + uptime`: the connection's reading of the real-time clock
    /// against `/proc/uptime` (``HostPlatform/clockBase``), carried forward by the uptime of this
    /// sample, which the kernel advances at the same disciplined rate. awk's whole-second reading
    /// (`(clock)`) checks it: where the two differ by more than a second and a half, the clock was
    /// stepped since the connection began, and the whole seconds are given instead.
    public static func read(
        files: [String: String], clock: String?, textfiles: String?, pageSize: UInt64, clockBase: Double? = nil,
        uptime: Double? = nil, warnings: inout [String]
    ) -> NodeFigures {
        var node = NodeFigures()
        node.pageSize = pageSize
        func parsed<Value>(_ path: String, _ parse: (String) throws(ParseError) -> Value) -> Value? {
            guard let text = files[path] else { return nil }
            do { return try parse(text) } catch {
                warnings.append(error.description)
                return nil
            }
        }
        func collect<Value>(_ value: Parsed<Value>?) -> Value? {
            guard let value else { return nil }
            warnings += value.warnings
            return value.value
        }
        node.memory = collect(parsed("/proc/meminfo", ProcMemInfoFieldsParser.parse)) ?? []
        node.networkDevices = collect(parsed("/proc/net/dev", ProcNetDevColumnsParser.parse)) ?? []
        if node.networkDevices.count > NodeFigures.deviceLimit {
            warnings.append(
                "/proc/net/dev lists \(node.networkDevices.count) network devices: the figures of the first "
                    + "\(NodeFigures.deviceLimit) are kept")
            node.networkDevices.removeSubrange(NodeFigures.deviceLimit...)
        }
        node.activity = collect(parsed("/proc/stat", ProcStatActivityParser.parse))
        node.vmstat = collect(parsed("/proc/vmstat", ProcVmStatParser.parse)) ?? []
        for resource in ["cpu", "io", "memory"] {
            node.pressure +=
                parsed("/proc/pressure/\(resource)") { text throws(ParseError) in
                    try ProcPressureParser.parse(text, resource: resource)
                } ?? []
        }
        node.sockets =
            collect(parsed("/proc/net/sockstat") { text throws(ParseError) in try ProcSockstatParser.parse(text) })
            ?? []
        let sockets6 =
            collect(
                parsed("/proc/net/sockstat6") { text throws(ParseError) in
                    try ProcSockstatParser.parse(text, source: "/proc/net/sockstat6")
                }) ?? []
        node.sockets += sockets6
        node.sockets6 = Set(sockets6.map(\.name))
        for path in ["/proc/net/netstat", "/proc/net/snmp"] {
            node.netstat +=
                collect(parsed(path) { text throws(ParseError) in try ProcNetstatParser.parse(text, source: path) })
                ?? []
        }
        node.netstat += collect(parsed("/proc/net/snmp6", ProcNetstatParser.parseSNMP6)) ?? []
        if let handles = parsed("/proc/sys/fs/file-nr", KernelValueFilesParser.parseFileNr) {
            node.fileHandlesAllocated = handles.allocated
            node.fileHandlesMaximum = handles.maximum
        }
        func value(_ path: String) -> UInt64? {
            parsed(path) { text throws(ParseError) in try KernelValueFilesParser.parseValue(text, source: path) }
        }
        node.entropyAvailable = value("/proc/sys/kernel/random/entropy_avail")
        node.entropyPoolSize = value("/proc/sys/kernel/random/poolsize")
        node.conntrackEntries = value("/proc/sys/net/netfilter/nf_conntrack_count")
        node.conntrackLimit = value("/proc/sys/net/netfilter/nf_conntrack_max")
        node.conntrackStats = parsed("/proc/net/stat/nf_conntrack", ProcConntrackStatParser.parse) ?? []
        node.softnet = parsed("/proc/net/softnet_stat", ProcSoftnetParser.parse) ?? []
        for (path, ip) in [("/proc/net/udp", "v4"), ("/proc/net/udp6", "v6")] {
            if let queues = parsed(path, { text throws(ParseError) in try ProcNetUDPParser.parse(text, ip: ip) }) {
                node.udpQueues.append(queues)
            }
        }
        node.arpEntries = parsed("/proc/net/arp", ProcNetArpParser.parse) ?? []
        node.mounts = parsed("/proc/mounts", ProcMountsParser.parse) ?? []
        node.networkClass = networkState(files)
        node.addNoHandlerCounts()
        func seconds(_ text: String?) -> Double? {
            guard let text, let token = KernelFigureLines.words(text).first, let value = Double(token), value.isFinite,
                value > 0
            else { return nil }
            return value
        }
        let wholeSeconds = seconds(files["(clock)"])
        if let clockBase, let uptime {
            let anchored = clockBase + uptime
            node.hostClockSeconds = wholeSeconds.map { abs(anchored - ($0 + 0.5)) > 1.5 ? $0 : anchored } ?? anchored
        } else {
            node.hostClockSeconds = seconds(clock) ?? wholeSeconds
        }
        if let textfiles {
            node.textfiles = []
            var times: [String: Double] = [:]
            for line in TextScanning.lines(textfiles) {
                guard let space = line.firstIndex(of: " "), let seconds = Double(line[..<space]) else { continue }
                times[String(line[line.index(after: space)...])] = seconds
            }
            for path in times.keys.sorted() {
                guard let text = files[path] else {
                    node.textfileError = true
                    continue
                }
                node.textfiles?.append(TextfileRead(path: path, modifiedSeconds: times[path], text: text))
            }
            if let cut = files["(cut)"] {
                node.textfileError = true
                warnings.append(
                    "textfile directory: more than \(textfileLimit) *.prom files or \(textfileLineLimit) lines in "
                        + "one; left out: \(TextScanning.lines(cut).prefix(3).joined(separator: ", "))")
            }
        }
        return node
    }

    /// The per-tick `/sys/class/net/DEVICE/{operstate,carrier,carrier_*}` files, by device.
    static func networkState(_ files: [String: String]) -> [NetworkDeviceClass] {
        var lines = ""
        for (path, text) in files where path.hasPrefix("/sys/class/net/") {
            lines += path + ":" + (TextScanning.lines(text).first.map(String.init) ?? "") + "\n"
        }
        return NetClassParser.parse(lines).sorted { $0.device < $1.device }
    }
}

extension NodeFigures {
    /// `/sys/class/net/DEVICE/statistics/rx_nohandler` as the device's `receive_nohandler` counter
    /// (node_exporter reads it through netlink; `/proc/net/dev` has no such column), unless
    /// `/proc/net/dev` gave one; the attribute itself is dropped from ``networkClass``.
    mutating func addNoHandlerCounts() {
        let attribute = "statistics/rx_nohandler"
        var counts: [String: Double] = [:]
        for index in networkClass.indices {
            if let text = networkClass[index].attributes.removeValue(forKey: attribute),
                let value = TextScanning.counter(Substring(text))
            {
                counts[networkClass[index].device] = Double(value)
            }
        }
        guard !counts.isEmpty else { return }
        for index in networkDevices.indices {
            guard let value = counts[networkDevices[index].device],
                !networkDevices[index].counters.contains(where: { $0.name == "receive_nohandler" })
            else { continue }
            networkDevices[index].counters.append(KernelFigure("receive_nohandler", value))
        }
    }

    /// Adds what a connection learnt once (`/sys/class/net`'s fixed attributes, under this tick's
    /// state ones) and the host's clock offset.
    ///
    /// The probe reads the clock just before its last sample, after `waited` seconds of sampling:
    /// the collector's clock at that moment is taken as halfway through the rest of the round trip,
    /// so the offset is good to within half of it (a few milliseconds on a LAN).
    public mutating func withConnectionFigures(
        _ networkClass: [NetworkDeviceClass], sent: Date, received: Date, waited: Double
    ) {
        var state = Dictionary(self.networkClass.map { ($0.device, $0.attributes) }, uniquingKeysWith: { a, _ in a })
        var merged: [NetworkDeviceClass] = []
        for device in networkClass {
            var attributes = device.attributes
            attributes.merge(state.removeValue(forKey: device.device) ?? [:]) { _, tick in tick }
            merged.append(NetworkDeviceClass(device: device.device, attributes: attributes))
        }
        for device in self.networkClass where state[device.device] != nil { merged.append(device) }
        if merged.count > NodeFigures.deviceLimit { merged.removeSubrange(NodeFigures.deviceLimit...) }
        self.networkClass = merged
        if let host = hostClockSeconds {
            let roundTrip = received.timeIntervalSince(sent)
            let reference = sent.timeIntervalSince1970 + waited + max(0, roundTrip - waited) / 2
            clockOffsetSeconds = host - reference
        }
    }
}
