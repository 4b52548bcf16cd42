import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A real `prometheus-node-exporter` (Debian's, default collectors) on a loopback port, stopped by
/// its pid.
final class RunningNodeExporter {
    let port: Int
    private let process: Process

    init() throws {
        port = try LoopbackListener.freePort()
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prometheus-node-exporter")
        process.arguments = ["--web.listen-address=127.0.0.1:\(port)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let response = try? CurlCommand.get("http://127.0.0.1:\(port)/metrics"), response.status == 200 {
                return
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
        stop()
        throw HarnessError(description: "prometheus-node-exporter did not answer on port \(port)")
    }

    func scrape() throws -> ExpositionText {
        ExpositionText(try CurlCommand.get("http://127.0.0.1:\(port)/metrics").body)
    }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
    }
}

/// The samples of a Prometheus text exposition, by family: each sample's labels (without `instance`)
/// and value; and the families' types.
struct ExpositionText {
    struct Sample: Hashable {
        var labels: [String: String]
        var value: Double
    }

    var families: [String: [Sample]] = [:]
    var types: [String: String] = [:]

    init(_ text: String) {
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                if parts.count == 4 { types[String(parts[2])] = String(parts[3]) }
                continue
            }
            if line.hasPrefix("#") { continue }
            guard let space = line.lastIndex(of: " "), let value = Self.number(line[line.index(after: space)...])
            else { continue }
            let series = line[..<space]
            var name = String(series)
            var labels: [String: String] = [:]
            if let brace = series.firstIndex(of: "{") {
                name = String(series[..<brace])
                labels = Self.labels(series[series.index(after: brace)...].dropLast())
            }
            labels["instance"] = nil
            families[name, default: []].append(Sample(labels: labels, value: value))
        }
    }

    static func number(_ text: Substring) -> Double? {
        switch text {
        case "+Inf": .infinity
        case "-Inf": -.infinity
        case "NaN": .nan
        default: Double(text)
        }
    }

    /// `a="x",b="y"` (values with `\"` and `\\` escapes).
    static func labels(_ text: Substring) -> [String: String] {
        var labels: [String: String] = [:]
        var index = text.startIndex
        while index < text.endIndex {
            guard let equals = text[index...].firstIndex(of: "=") else { break }
            let name = String(text[index..<equals]).trimmingCharacters(in: CharacterSet(charactersIn: ", "))
            var cursor = text.index(equals, offsetBy: 2)
            var value = ""
            while cursor < text.endIndex, text[cursor] != "\"" {
                if text[cursor] == "\\" { cursor = text.index(after: cursor) }
                if cursor < text.endIndex { value.append(text[cursor]) }
                cursor = text.index(after: cursor)
            }
            labels[name] = value
            index = cursor < text.endIndex ? text.index(after: cursor) : cursor
        }
        return labels
    }

    /// The sample of `family` with exactly these labels.
    func value(_ family: String, _ labels: [String: String]) -> Double? {
        families[family]?.first { $0.labels == labels }?.value
    }
}

/// hostscope's `/metrics` against a real node_exporter describing the same machine (the harness sshd
/// runs here): every family both give has node_exporter's label names and series, and values that
/// agree within the time between the reads.
@Suite(.serialized) struct NodeExporterParityTests {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "hostscope-parity-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// Families whose values move too fast between two reads a second apart on a busy machine to be
    /// compared (their series and labels still are): run queue lengths, I/Os in flight, sockets, connections
    /// and queues in use (other tests open and close SSH sessions all the time),
    /// memory that a compiler allocates and frees by the hundred megabytes.
    static let volatile: Set<String> = [
        "node_procs_running", "node_procs_blocked", "node_disk_io_now", "node_filefd_allocated",
        "node_entropy_available_bits",
        "node_udp_queues", "node_load1", "node_nf_conntrack_entries", "node_memory_Dirty_bytes",
        "node_memory_Writeback_bytes", "node_memory_MemFree_bytes", "node_memory_MemAvailable_bytes",
        "node_memory_Active_anon_bytes", "node_memory_AnonPages_bytes", "node_memory_Committed_AS_bytes",
        "node_memory_Active_bytes", "node_memory_Inactive_bytes", "node_memory_Inactive_anon_bytes",
        "node_memory_Mapped_bytes", "node_memory_PageTables_bytes", "node_memory_KernelStack_bytes",
        "node_memory_Percpu_bytes", "node_memory_Shmem_bytes", "node_memory_Unevictable_bytes",
        "node_memory_Mlocked_bytes", "node_memory_AnonHugePages_bytes", "node_netstat_Tcp_CurrEstab",
        "node_sockstat_sockets_used", "node_sockstat_TCP_inuse", "node_sockstat_TCP_alloc", "node_sockstat_TCP_tw",
        "node_sockstat_TCP_orphan", "node_sockstat_TCP_mem", "node_sockstat_TCP_mem_bytes", "node_sockstat_UDP_inuse",
        "node_sockstat_UDP_mem", "node_sockstat_UDP_mem_bytes",
    ]

    /// node_exporter families that describe node_exporter itself or that hostscope leaves out (see
    /// docs/serve.md); every other node_ family must be in hostscope's exposition.
    static func outOfScope(_ family: String) -> Bool {
        family.hasPrefix("node_scrape_") || family.hasPrefix("node_exporter_")
            || family.hasPrefix("node_time_clocksource")
            || ["node_selinux_enabled", "node_time_zone_offset_seconds"].contains(family)
    }

    @Test func everyNodeExporterFamilyHasHostscopesSeriesWithTheSameLabelsAndCloseValues() async throws {
        let server = try SSHTestServer.shared()
        let serve = try RunningServe(
            [server.target, "--every", "1s", "--listen", "127.0.0.1:0"] + CLI.harnessArguments(server),
            directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        let exporter = try RunningNodeExporter()
        defer { exporter.stop() }
        _ = try serve.waitFor("/metrics") { $0.body.contains("node_context_switches_total") }

        // node_exporter before and after hostscope's latest tick: a counter of hostscope's lies between
        // the two reads, a gauge near them.
        let before = try exporter.scrape()
        try await Task.sleep(for: .milliseconds(1500))
        let ours = ExpositionText(try serve.get("/metrics").body)
        let after = try exporter.scrape()

        // The host is this machine: its clock and serve's are the same one.
        let offset = try #require(ours.families["hostscope_clock_offset_seconds"]?.first?.value)
        #expect(abs(offset) < 0.5, "clock offset \(offset) s against the same clock")

        let theirs = before.families.keys.filter { $0.hasPrefix("node_") && !Self.outOfScope($0) }.sorted()
        let missing = theirs.filter { ours.families[$0] == nil }
        #expect(missing == [], "families node_exporter gives and hostscope does not")
        // conntrack's statistics, where this kernel has the module's file (compared with the rest below).
        if FileManager.default.fileExists(atPath: "/proc/net/stat/nf_conntrack") {
            #expect(theirs.contains("node_nf_conntrack_stat_found"))
            #expect(ours.families["node_nf_conntrack_stat_search_restart"]?.count == 1)
        } else {
            print("this kernel has no /proc/net/stat/nf_conntrack (no conntrack module): its families are not compared")
        }

        // Network devices that came or went between the reads (other tests' namespaces) are not compared.
        func devices(_ text: ExpositionText) -> Set<String> {
            Set((text.families["node_network_receive_bytes_total"] ?? []).compactMap { $0.labels["device"] })
        }
        let unstable = devices(before).symmetricDifference(devices(after)).union(
            devices(before).symmetricDifference(devices(ours)))

        var differences: [String] = []
        var compared = 0
        for family in theirs where ours.families[family] != nil {
            let ourLabelNames = Set(ours.families[family]!.map { $0.labels.keys.sorted() })
            let theirLabelNames = Set(before.families[family]!.map { $0.labels.keys.sorted() })
            if ourLabelNames != theirLabelNames {
                differences.append("\(family): labels \(ourLabelNames) against node_exporter's \(theirLabelNames)")
                continue
            }
            for sample in before.families[family]! {
                if let device = sample.labels["device"], unstable.contains(device) { continue }
                guard let value = ours.value(family, sample.labels) else {
                    differences.append("\(family)\(sample.labels): no such series")
                    continue
                }
                guard !Self.volatile.contains(family), let later = after.value(family, sample.labels) else { continue }
                compared += 1
                let low = min(sample.value, later)
                let high = max(sample.value, later)
                let isCounter = before.types[family] == "counter"
                // A counter is read up to a tick before the scrape; a gauge may move a little either way.
                let slack =
                    family == "node_time_seconds"
                    ? 5 : isCounter ? (high - low) + 0.05 * abs(high) + 5 : 0.1 * abs(high) + 2
                if value < low - slack || value > high + slack {
                    differences.append("\(family)\(sample.labels): \(value), node_exporter \(sample.value)…\(later)")
                }
            }
        }
        #expect(differences == [], "\(differences.count) series differ")
        // Most of node_exporter's families, and hundreds of series, were compared by value.
        #expect(theirs.count > 200 && compared > 250, "\(theirs.count) families, \(compared) series compared")
    }
}

/// The same comparison through a real Prometheus scraping both: the node-mixin's filesystem and
/// network alert expressions and the dashboard's host picker evaluate alike on both jobs.
@Suite(.serialized) struct NodeExporterPromQLParityTests {
    @Test func nodeMixinExpressionsAndTheHostPickerEvaluateOnHostscopeAsOnNodeExporter() async throws {
        let directory = NSTemporaryDirectory() + "hostscope-promql-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let server = try SSHTestServer.shared()
        let serve = try RunningServe(
            [server.target, "--every", "1s", "--listen", "127.0.0.1:0"] + CLI.harnessArguments(server),
            directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        let exporter = try RunningNodeExporter()
        defer { exporter.stop() }
        let prometheus = try PrometheusServer.start(
            configuration: """
                global:
                  scrape_interval: 1s
                  scrape_timeout: 1s
                scrape_configs:
                  - job_name: hostscope
                    honor_labels: true
                    static_configs:
                      - targets: ['127.0.0.1:\(serve.port)']
                  - job_name: node
                    static_configs:
                      - targets: ['127.0.0.1:\(exporter.port)']
                """)
        defer { prometheus.stop() }

        /// The number of series `expression` gives for each job.
        func counts(_ expression: String) throws -> (hostscope: Int, node: Int) {
            var byJob: [String: Int] = [:]
            for result in try prometheus.query("count by (job) (\(expression))") {
                if let job = (result["metric"] as? [String: String])?["job"],
                    let value = ((result["value"] as? [Any])?.last as? String).flatMap(Double.init)
                {
                    byJob[job] = Int(value)
                }
            }
            return (byJob["hostscope"] ?? 0, byJob["node"] ?? 0)
        }
        // The node-mixin's (monitoring/node-mixin, alerts.libsonnet) NodeFilesystemSpaceFillingUp
        // selector, its network error alert's rate, and the dashboard's host picker.
        let expressions = [
            "node_filesystem_avail_bytes{fstype!=\"\"} / node_filesystem_size_bytes{fstype!=\"\"} * 100 < 101 "
                + "and node_filesystem_readonly{fstype!=\"\"} == 0",
            "rate(node_network_receive_errs_total[15s]) >= 0",
            "rate(node_network_receive_packets_total[15s]) >= 0",
            "node_uname_info{nodename!=\"\"}",
            "rate(node_context_switches_total[15s]) > 0",
            "node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes * 100 > 0",
            "rate(node_vmstat_pgmajfault[15s]) >= 0",
            "node_filefd_allocated / node_filefd_maximum * 100 >= 0",
            "rate(node_pressure_cpu_waiting_seconds_total[15s]) >= 0",
        ]
        var results: [String: (hostscope: Int, node: Int)] = [:]
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            for expression in expressions { results[expression] = try counts(expression) }
            if results.values.allSatisfy({ $0.hostscope > 0 && $0.hostscope >= $0.node }) { break }
            try await Task.sleep(for: .seconds(1))
        }
        for expression in expressions {
            let result = try #require(results[expression])
            #expect(result.node > 0, "node_exporter gives nothing for \(expression)")
            #expect(result.hostscope >= result.node, "\(expression): \(result.hostscope) series against \(result.node)")
        }
        let names = try prometheus.query("node_uname_info").compactMap {
            ($0["metric"] as? [String: String])?["nodename"]
        }
        #expect(names.count == 2 && Set(names).count == 1, "nodename \(names)")
    }
}
