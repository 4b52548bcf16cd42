import MetricsExposition
import Testing

/// A fleet file's labels as target labels: after `instance` on every sample, and renamed `exported_NAME` on a
/// sample that has a label of that name itself.
@Suite struct TargetLabelTests {
    @Test func targetLabelsFollowInstanceAndGiveWayToASamplesOwnLabel() {
        let samples = [
            MetricSample(HostscopeFamilies.up, [], 1),
            MetricSample(
                NodeExporterFamilies.filesystemSize, [.init("device", "/dev/vda1"), .init("fstype", "ext4")], 10),
        ]
        let series = RenderedSeries(
            samples, leadingLabels: [.init("instance", "web1")],
            targetLabels: [.init("device", "rack7"), .init("env", "prod")])
        let text = String(
            decoding: ExpositionWriter.document(
                families: [HostscopeFamilies.up, NodeExporterFamilies.filesystemSize], series: [series],
                format: .prometheusText), as: UTF8.self)
        #expect(text.contains("hostscope_up{instance=\"web1\",device=\"rack7\",env=\"prod\"} 1\n"), "\(text)")
        #expect(
            text.contains(
                "node_filesystem_size_bytes{instance=\"web1\",exported_device=\"rack7\",env=\"prod\",device=\"/dev/vda1\","
                    + "fstype=\"ext4\"} 10\n"), "\(text)")
    }
}
