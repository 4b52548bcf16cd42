import Foundation
import HostStats
import MetricsExposition
import TestSupport
import Testing

@Suite struct ExpositionWriterTests {
    static let recording = ProcessInfo.processInfo.environment["HOSTSCOPE_RECORD_GOLDENS"] == "1"

    @Test(arguments: [("debian12-local.prom", ExpositionFormat.prometheusText), ("debian12-local.om", .openMetrics)])
    func aSnapshotRendersToItsGolden(file: String, format: ExpositionFormat) throws {
        let text = String(decoding: try ExpositionFixture.debian12().document(format), as: UTF8.self)
        let url = Repository.fixtures.appendingPathComponent("exposition/\(file)")
        if Self.recording {
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        let golden = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        #expect(
            text == golden, "Fixtures/exposition/\(file) differs; rerun with HOSTSCOPE_RECORD_GOLDENS=1 if intended")
    }

    @Test func promtoolFindsNothingWrongWithTheTextFormat() throws {
        let report = try ExpositionValidation.promtool(try ExpositionFixture.debian12().document(.prometheusText))
        #expect(report.passesPromtool, "\(report.status): \(report.output)")
        // The only findings are node_exporter's own meminfo names, which node_exporter also gets.
        #expect(report.findings.count == 5)
    }

    @Test func theOpenMetricsParserReadsEveryFamily() throws {
        let bytes = try ExpositionFixture.debian12().document(.openMetrics)
        let report = try ExpositionValidation.openMetrics(bytes)
        #expect(report.status == 0, "\(report.output)")
        // One line per family: counters named without _total, as OpenMetrics wants.
        #expect(report.output.contains("node_cpu_seconds counter"))
        #expect(report.output.contains("node_memory_MemTotal_bytes gauge"))
        #expect(String(decoding: bytes, as: UTF8.self).hasSuffix("# EOF\n"))
    }

    @Test func aBrokenExpositionIsCaughtByBothCheckers() throws {
        // The checkers themselves must fail on bad input, or the two tests above prove nothing.
        let broken = Array("# TYPE x counter\nx_total{a=\"b} 1\n".utf8)
        #expect(try !ExpositionValidation.promtool(broken).passesPromtool)
        let snake = Array(
            "# HELP x_total A count.\n# TYPE x_total counter\nx_total{a=\"b\"} 1\n# HELP myValue Camel.\n# TYPE myValue gauge\nmyValue 1\n"
                .utf8)
        #expect(try !ExpositionValidation.promtool(snake).passesPromtool)
        #expect(try ExpositionValidation.openMetrics(broken).status != 0)
    }

    @Test func labelValuesAndHelpAreEscaped() {
        let family = MetricFamily("test_value", .gauge, help: "Back\\slash and\nnewline.")
        let sample = MetricSample(family, [MetricSample.Label("path", "C:\\dir \"quoted\"\nnext")], 1.5)
        let text = String(
            decoding: ExpositionWriter.document(
                families: [family], series: [RenderedSeries([sample])],
                format: .prometheusText), as: UTF8.self)
        #expect(
            text == """
                # HELP test_value Back\\\\slash and\\nnewline.
                # TYPE test_value gauge
                test_value{path="C:\\\\dir \\"quoted\\"\\nnext"} 1.5

                """)
    }

    @Test func controlCharactersInLabelValuesBecomeTheReplacementCharacterInBothFormats() throws {
        // What a process started with `exec -a $'\e]52;c;…\a\e]0;owned\a'` is named: a terminal showing it
        // would set its clipboard and title. C1 controls (U+009B is CSI) and DEL too.
        let hostile = "\u{1B}]52;c;b3duZWQ=\u{07}\u{1B}]0;owned\u{07}tab\there\u{7F}\u{9B}31m\u{85}é✓"
        let family = MetricFamily("test_info", .gauge, help: "Hostile names.")
        let sample = MetricSample(family, [MetricSample.Label("command", hostile)], 1)
        for format in [ExpositionFormat.prometheusText, .openMetrics] {
            let bytes = ExpositionWriter.document(
                families: [family],
                series: [RenderedSeries([sample], leadingLabels: [.init("instance", "h\u{1B}[2J")])],
                format: format)
            let text = String(decoding: bytes, as: UTF8.self)
            // No control character but the line ends; no C1 control (0xC2 0x80–0x9F) either.
            #expect(!bytes.contains { $0 < 0x20 && $0 != 0x0A || $0 == 0x7F })
            #expect(!zip(bytes, bytes.dropFirst()).contains { $0 == 0xC2 && (0x80...0x9F).contains($1) })
            #expect(
                text.contains(
                    "test_info{instance=\"h\u{FFFD}[2J\",command=\"\u{FFFD}]52;c;b3duZWQ=\u{FFFD}\u{FFFD}]0;owned\u{FFFD}"
                        + "tab\u{FFFD}here\u{FFFD}\u{FFFD}31m\u{FFFD}é✓\"} 1\n"), "\(text)")
        }
        let text = ExpositionWriter.document(
            families: [family], series: [RenderedSeries([sample])], format: .prometheusText)
        #expect(try ExpositionValidation.promtool(text).passesPromtool)
        let openMetrics = ExpositionWriter.document(
            families: [family], series: [RenderedSeries([sample])], format: .openMetrics)
        #expect(try ExpositionValidation.openMetrics(openMetrics).status == 0)
    }

    @Test(arguments: [
        (0.0, "0"), (42.0, "42"), (1e20, "1e+20"), (0.25, "0.25"), (-3.0, "-3"), (Double.infinity, "+Inf"),
        (-Double.infinity, "-Inf"), (Double.nan, "NaN"), (1795581007.0, "1795581007"),
    ])
    func valuesAreWrittenAsBothFormatsReadThem(value: Double, text: String) {
        let family = MetricFamily("v", .gauge, help: "v")
        let rendered = String(decoding: RenderedSeries([MetricSample(family, [], value)]).lines[family]!, as: UTF8.self)
        #expect(rendered == "v \(text)\n")
    }

    @Test(arguments: [
        (nil, ExpositionFormat.prometheusText),
        ("text/plain;version=0.0.4", .prometheusText),
        (
            "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
                + "text/plain;version=0.0.4;q=0.5,*/*;q=0.1", .openMetrics
        ),
        ("application/openmetrics-text; version=0.0.1", .prometheusText),
        ("application/openmetrics-text", .openMetrics),
        ("text/plain;q=1,application/openmetrics-text;q=0.5", .prometheusText),
        ("application/openmetrics-text;q=0", .prometheusText),
        ("*/*", .prometheusText),
        (";;;,=,q=", .prometheusText),
    ])
    func theAcceptHeaderChoosesTheFormat(accept: String?, format: ExpositionFormat) {
        #expect(ExpositionFormat.negotiate(accept: accept) == format)
    }

    @Test func familiesFromSeveralHostsAreListedOnceWithEveryHostsSamples() throws {
        let fixture = try ExpositionFixture.debian12()
        var second = fixture.summary
        second.host = "web2"
        let series = [fixture.summary, second].map { summary in
            RenderedSeries(
                FleetExposition.samples(for: summary, topProcesses: 3),
                leadingLabels: [MetricSample.Label("instance", summary.host)])
        }
        let text = String(
            decoding: ExpositionWriter.document(
                families: FleetExposition.families, series: series,
                format: .prometheusText), as: UTF8.self)
        #expect(text.components(separatedBy: "# TYPE node_load1 gauge").count == 2)
        #expect(text.contains("node_load1{instance=\"web1\"}"))
        #expect(text.contains("node_load1{instance=\"web2\"}"))
        #expect(try ExpositionValidation.promtool(Array(text.utf8)).passesPromtool)
    }
}
