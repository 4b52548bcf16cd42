import Foundation
import HostStats
import TestSupport
import Testing

@testable import MetricsExposition

/// node_exporter's other families, from the kernel files captured on Linux 6.18 as the probe reads them.
@Suite struct NodeFiguresMappingTests {
    static func files() throws -> [String: String] {
        let root = Repository.fixtures.appendingPathComponent("captured/node-files-6.18")
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: root.path) where name.hasPrefix("proc_") {
            var path = "/" + name.dropLast(4).replacingOccurrences(of: "_", with: "/")
            for (wrong, right) in [
                ("file-nr", "file-nr"), ("entropy/avail", "entropy_avail"),
                ("nf/conntrack/count", "nf_conntrack_count"),
                ("nf/conntrack/max", "nf_conntrack_max"), ("softnet/stat", "softnet_stat"),
            ] {
                path = path.replacingOccurrences(of: wrong, with: right)
            }
            files[path] = try String(contentsOf: root.appendingPathComponent(name), encoding: .utf8)
        }
        return files
    }

    static func snapshot(textfiles: String? = nil, extra: [String: String] = [:]) throws -> Snapshot {
        var warnings: [String] = []
        var node = NodeFiguresReader.read(
            files: try files().merging(extra) { _, new in new }, clock: "1795921229.929\n", textfiles: textfiles,
            pageSize: 4096, warnings: &warnings)
        node.clockOffsetSeconds = 0.25
        var snapshot = try ExpositionFixture.debian12().snapshot
        snapshot.node = node
        snapshot.disks = [DiskStats(filesystem: "/dev/vda", type: "ext4", mount: "/", sizeBytes: 100, usedBytes: 10)]
        snapshot.warnings = warnings
        return snapshot
    }

    func samples(_ snapshot: Snapshot) -> [MetricSample] { NodeExporterMapping.samples(snapshot: snapshot) }

    @Test func theNewFamiliesComeWithNodeExportersNamesLabelsAndUnits() throws {
        let snapshot = try Self.snapshot()
        #expect(snapshot.warnings == [])
        let samples = samples(snapshot)
        func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
            samples.first { sample in
                sample.family.name == name && labels.allSatisfy { sample.label($0.key) == $0.value }
            }?.value
        }
        #expect(value("node_memory_Active_anon_bytes") != nil)
        #expect(value("node_memory_HugePages_Total") == 0)
        #expect(value("node_network_receive_packets_total", ["device": "eth0"]) != nil)
        #expect(value("node_network_transmit_colls_total", ["device": "lo"]) == 0)
        #expect(value("node_pressure_io_stalled_seconds_total") == 12.308005)
        #expect(value("node_sockstat_TCP_mem_bytes") == Double(327 * 4096))
        #expect(value("node_sockstat_TCP6_inuse") != nil && value("node_sockstat_TCP6_mem_bytes") == nil)
        #expect(value("node_filefd_maximum") == 2_466_170)
        #expect(value("node_entropy_pool_size_bits") == 256)
        #expect(value("node_softnet_processed_total", ["cpu": "1"]) == 0x155e)
        #expect(value("node_udp_queues", ["ip": "v6", "queue": "rx"]) == 0)
        #expect(value("node_arp_entries", ["device": "eth0"]) == 1)
        #expect(value("node_filesystem_readonly", ["mountpoint": "/"]) == 0)
        #expect(value("node_filesystem_device_error", ["mountpoint": "/"]) == 0)
        #expect(value("node_time_seconds") == 1_795_921_229.929)
        #expect(value("hostscope_clock_offset_seconds") == 0.25)
        #expect(value("node_netstat_Tcp_CurrEstab") != nil)
        #expect(samples.first { $0.family.name == "node_netstat_Tcp_CurrEstab" }?.family.type == .untyped)
        #expect(value("node_context_switches_total").map { $0 > 0 } == true)
        // No textfile directory: neither the error nor mtimes.
        #expect(value("node_textfile_scrape_error") == nil)
    }

    @Test func aHostWithoutPressureFilesHasNoPressureSeriesRatherThanZeros() throws {
        var snapshot = try Self.snapshot()
        snapshot.node?.pressure = []
        #expect(!samples(snapshot).contains { $0.family.name.hasPrefix("node_pressure_") })
        var warnings: [String] = []
        let node = NodeFiguresReader.read(
            files: ["/proc/pressure/cpu": "garbage\n"], clock: nil, textfiles: nil, pageSize: 4096, warnings: &warnings)
        #expect(node.pressure.isEmpty && node.hostClockSeconds == nil)
        #expect(warnings.count == 1 && warnings[0].contains("/proc/pressure/cpu"))
    }

    @Test func netclassGivesInfoUpSpeedAndLeavesOutWhatTheKernelRefused() {
        let device = NetworkDeviceClass(
            device: "eth0",
            attributes: [
                "address": "02:fc:00:00:00:01", "broadcast": "ff:ff:ff:ff:ff:ff", "duplex": "full", "ifalias": "",
                "operstate": "up", "mtu": "1500", "speed": "1000", "flags": "0x1003", "carrier": "1",
                "carrier_changes": "2",
            ])
        let samples = NodeExporterMapping.networkClassSamples(device)
        func value(_ name: String) -> Double? { samples.first { $0.family.name == name }?.value }
        #expect(value("node_network_speed_bytes") == 125_000_000)
        #expect(value("node_network_flags") == 4099)
        #expect(value("node_network_up") == 1)
        #expect(value("node_network_carrier_changes_total") == 2)
        let info = samples.first { $0.family.name == "node_network_info" }
        #expect(info?.labels.map(\.name) == ["address", "broadcast", "device", "duplex", "ifalias", "operstate"])
        var down = device
        down.attributes["speed"] = nil
        down.attributes["operstate"] = "down"
        let downSamples = NodeExporterMapping.networkClassSamples(down)
        #expect(!downSamples.contains { $0.family.name == "node_network_speed_bytes" })
        #expect(downSamples.first { $0.family.name == "node_network_up" }?.value == 0)
    }

    @Test func timexIsConvertedAsNodeExporterConvertsIt() throws {
        var timex = try TimexParser.parse(
            "0 0 -1500 6553600 250000 1200 1 7 1 32768000 1795934223 450531 10000 65536 20 2 131072 1 2 3 4 37")
        let values = Dictionary(
            uniqueKeysWithValues: NodeExporterMapping.timexSamples(timex).map { ($0.family.name, $0.value) })
        #expect(abs(values["node_timex_offset_seconds"]! + 0.0015) < 1e-12)
        #expect(abs(values["node_timex_frequency_adjustment_ratio"]! - 1.0001) < 1e-12)
        #expect(values["node_timex_maxerror_seconds"] == 0.25)
        #expect(abs(values["node_timex_tick_seconds"]! - 0.01) < 1e-12)
        #expect(abs(values["node_timex_pps_jitter_seconds"]! - 0.00002) < 1e-15)
        #expect(values["node_timex_pps_stability_hertz"] == 131_072 / (65_536.0 * 1_000_000))
        #expect(values["node_timex_pps_stability_exceeded_total"] == 4)
        #expect(values["node_timex_tai_offset_seconds"] == 37)
        #expect(values["node_timex_sync_status"] == 1)
        #expect(values.count == 17)
        // STA_NANO: the offset is in nanoseconds; state 5 is TIME_ERROR.
        timex.status |= 0x2000
        timex.state = 5
        let nano = Dictionary(
            uniqueKeysWithValues: NodeExporterMapping.timexSamples(timex).map { ($0.family.name, $0.value) })
        #expect(abs(nano["node_timex_offset_seconds"]! + 0.0000015) < 1e-15)
        #expect(nano["node_timex_sync_status"] == 0)
    }

    @Test func unameAndOSInfoCarryEveryLabelNodeExporterGives() throws {
        var snapshot = try Self.snapshot()
        snapshot.os?.nodename = "web1"
        snapshot.os?.domainname = "(none)"
        snapshot.os?.kernelVersion = "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1"
        snapshot.os?.release = ["ID": "debian", "NAME": "Debian GNU/Linux", "VERSION_ID": "12", "PRETTY_NAME": "x"]
        let samples = samples(snapshot)
        let uname = try #require(samples.first { $0.family.name == "node_uname_info" })
        #expect(uname.labels.map(\.name) == ["domainname", "machine", "nodename", "release", "sysname", "version"])
        #expect(uname.label("nodename") == "web1")
        let os = try #require(samples.first { $0.family.name == "node_os_info" })
        #expect(os.labels.count == 12 && os.label("version_codename") == "" && os.label("id") == "debian")
        #expect(samples.first { $0.family.name == "node_os_version" }?.value == 12)
    }

    @Test func textfilesArePassedOnWithTheirTimesAndABrokenFileSetsTheError() throws {
        let directory = "/var/lib/prometheus/node-exporter/"
        let snapshot = try Self.snapshot(
            textfiles: "1795921000 \(directory)a.prom\n1795921100 \(directory)b.prom\n",
            extra: [
                directory + "a.prom":
                    "# HELP backup_ok Whether it went well.\n# TYPE backup_ok gauge\nbackup_ok{job=\"x\",instance=\"y\"} 1\n",
                directory + "b.prom": "broken{ 1\n",
            ])
        let samples = samples(snapshot)
        let backup = try #require(samples.first { $0.family.name == "backup_ok" })
        #expect(backup.family.type == .gauge && backup.family.help == "Whether it went well.")
        #expect(backup.labels.map(\.name) == ["job", "exported_instance"])
        #expect(samples.first { $0.family.name == "node_textfile_scrape_error" }?.value == 1)
        let times = samples.filter { $0.family.name == "node_textfile_mtime_seconds" }
        #expect(times.map { $0.label("file") } == [directory + "a.prom"])
        // A family no list names is written after the listed ones, once.
        let series = RenderedSeries(samples, leadingLabels: [MetricSample.Label("instance", "web1")])
        let text = String(
            decoding: ExpositionWriter.document(
                families: FleetExposition.families, series: [series, series], format: .prometheusText),
            as: UTF8.self)
        #expect(text.components(separatedBy: "# TYPE backup_ok gauge\n").count == 2)
        #expect(text.contains("backup_ok{instance=\"web1\",job=\"x\",exported_instance=\"y\"} 1\n"))
    }

    @Test func hundredsOfInterfacesAreCutOnceWithAWarning() throws {
        var text = "Inter-|   Receive |  Transmit\n face |bytes packets|bytes packets\n"
        for index in 0..<(NodeFigures.deviceLimit + 88) { text += "veth\(index): 1 2 3 4\n" }
        var warnings: [String] = []
        let node = NodeFiguresReader.read(
            files: ["/proc/net/dev": text], clock: nil, textfiles: nil, pageSize: 4096, warnings: &warnings)
        #expect(node.networkDevices.count == NodeFigures.deviceLimit)
        #expect(warnings.count == 1 && warnings[0].contains("600 network devices"))
    }
}
