/// One host's sample lines, rendered once when its record arrives and copied into every scrape.
///
/// A scrape of a few hundred hosts is then a concatenation of ready bytes rather than tens of
/// thousands of numbers formatted and label values escaped again.
public struct RenderedSeries: Sendable {
    /// The sample lines of each family the host has samples of.
    public let lines: [MetricFamily: [UInt8]]

    /// The lines of `samples`, with `leadingLabels` (such as `instance`) and then `targetLabels` (a fleet
    /// file's labels of the host) before each sample's own.
    ///
    /// A target label named as one of the sample's own labels (`device`, `cpu`, `mountpoint`…) is written as
    /// `exported_NAME` on that sample, as Prometheus renames a label that collides with a target label; here
    /// the sample's own keeps its name, so that node_exporter's dashboards read it unchanged.
    public init(
        _ samples: [MetricSample], leadingLabels: [MetricSample.Label] = [], targetLabels: [MetricSample.Label] = []
    ) {
        var lines: [MetricFamily: [UInt8]] = [:]
        let plain = leadingLabels + targetLabels
        for sample in samples {
            var leading = plain
            // A sample has a few labels of its own: a scan is cheaper than a set per sample.
            if !targetLabels.isEmpty, !sample.labels.isEmpty,
                targetLabels.contains(where: { target in sample.labels.contains { $0.name == target.name } })
            {
                leading =
                    leadingLabels
                    + targetLabels.map { target in
                        sample.labels.contains { $0.name == target.name }
                            ? MetricSample.Label("exported_" + target.name, target.value) : target
                    }
            }
            ExpositionWriter.appendSample(sample, leadingLabels: leading, into: &lines[sample.family, default: []])
        }
        self.lines = lines
        unlisted = lines.keys.filter { !FleetExposition.listedFamilies.contains($0) }.sorted { $0.name < $1.name }
    }

    /// The families of these samples that no fixed list names (a meminfo field only a newer kernel has,
    /// a textfile's metrics), by name: a document writes them after its listed families.
    public let unlisted: [MetricFamily]

    /// The number of bytes of sample lines.
    public var byteCount: Int { lines.values.reduce(0) { $0 + $1.count } }
}

/// Writes the Prometheus text format 0.0.4 and OpenMetrics 1.0.0.
///
/// The two differ only in the metadata: OpenMetrics names a counter family without `_total`,
/// states units, and ends with `# EOF`. Sample lines are the same in both.
public enum ExpositionWriter {
    /// A whole exposition: for each family of `families` that any of `series` has samples of, its
    /// `# HELP` and `# TYPE` lines (and `# UNIT` in OpenMetrics), then every series' lines of it.
    public static func document(families: [MetricFamily], series: [RenderedSeries], format: ExpositionFormat)
        -> [UInt8]
    {
        var size = 64
        for item in series { size += item.byteCount }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size + families.count * 120)
        for family in families {
            var headerWritten = false
            for item in series {
                guard let lines = item.lines[family], !lines.isEmpty else { continue }
                if !headerWritten {
                    appendHeader(family, format: format, into: &bytes)
                    headerWritten = true
                }
                bytes.append(contentsOf: lines)
            }
        }
        // Families no list names, each once, in name order; most hosts have none, and cost nothing here.
        var extra: [String: MetricFamily] = [:]
        for item in series {
            for family in item.unlisted where extra[family.name] == nil { extra[family.name] = family }
        }
        if !extra.isEmpty {
            let listed = Set(families)
            for name in extra.keys.sorted() where !listed.contains(extra[name]!) {
                appendHeader(extra[name]!, format: format, into: &bytes)
                for item in series { if let lines = item.lines[extra[name]!] { bytes.append(contentsOf: lines) } }
            }
        }
        if format == .openMetrics { bytes.append(contentsOf: "# EOF\n".utf8) }
        return bytes
    }

    /// `# HELP`, `# TYPE` and, in OpenMetrics, `# UNIT` lines of a family.
    static func appendHeader(_ family: MetricFamily, format: ExpositionFormat, into bytes: inout [UInt8]) {
        let name = format == .openMetrics ? family.openMetricsName : family.name
        bytes.append(contentsOf: "# HELP \(name) ".utf8)
        appendEscaped(family.help, quotes: format == .openMetrics, into: &bytes)
        let type = format == .openMetrics ? family.type.openMetricsName : family.type.rawValue
        bytes.append(contentsOf: "\n# TYPE \(name) \(type)\n".utf8)
        if format == .openMetrics, let unit = family.unit {
            bytes.append(contentsOf: "# UNIT \(name) \(unit)\n".utf8)
        }
    }

    /// `name{label="value",…} value` and a newline.
    static func appendSample(_ sample: MetricSample, leadingLabels: [MetricSample.Label], into bytes: inout [UInt8]) {
        bytes.append(contentsOf: sample.family.name.utf8)
        if !leadingLabels.isEmpty || !sample.labels.isEmpty {
            bytes.append(UInt8(ascii: "{"))
            var first = true
            for label in leadingLabels + sample.labels {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                bytes.append(contentsOf: label.name.utf8)
                bytes.append(contentsOf: "=\"".utf8)
                appendEscaped(label.value, quotes: true, into: &bytes)
                bytes.append(UInt8(ascii: "\""))
            }
            bytes.append(UInt8(ascii: "}"))
        }
        bytes.append(UInt8(ascii: " "))
        appendValue(sample.value, into: &bytes)
        bytes.append(UInt8(ascii: "\n"))
    }

    /// Backslash and newline escaped (and double quotes, in label values and OpenMetrics help); every
    /// other C0 control character, DEL and every C1 control (U+0080–U+009F) replaced by U+FFFD.
    ///
    /// Both formats would carry them raw, but a label value is host text (a process started with
    /// `exec -a $'\e]52;c;…\a'` names itself with a terminal's escape sequence), and `curl …/metrics`
    /// on a terminal would let that host set the clipboard or the title. U+FFFD keeps the value valid
    /// UTF-8 in both formats and shows that something was there.
    static func appendEscaped(_ text: String, quotes: Bool, into bytes: inout [UInt8]) {
        var previous: UInt8 = 0
        for byte in text.utf8 {
            defer { previous = byte }
            switch byte {
            case UInt8(ascii: "\\"): bytes.append(contentsOf: "\\\\".utf8)
            case UInt8(ascii: "\n"): bytes.append(contentsOf: "\\n".utf8)
            case UInt8(ascii: "\""): bytes.append(contentsOf: quotes ? "\\\"".utf8 : "\"".utf8)
            case 0x00..<0x20, 0x7F: bytes.append(contentsOf: replacement)
            // A C1 control is U+0080–U+009F: 0xC2 then 0x80–0x9F. The 0xC2 was written already.
            case 0x80...0x9F where previous == 0xC2:
                bytes.removeLast()
                bytes.append(contentsOf: replacement)
            default: bytes.append(byte)
            }
        }
    }

    /// U+FFFD REPLACEMENT CHARACTER, in UTF-8.
    static let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]

    /// A value as both formats read it: integers without a fraction (exact below 2^53), others in
    /// the shortest form that reads back the same, `+Inf`, `-Inf`, `NaN`.
    static func appendValue(_ value: Double, into bytes: inout [UInt8]) {
        if value.isNaN {
            bytes.append(contentsOf: "NaN".utf8)
        } else if value.isInfinite {
            bytes.append(contentsOf: (value > 0 ? "+Inf" : "-Inf").utf8)
        } else if value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
            bytes.append(contentsOf: String(Int64(value)).utf8)
        } else {
            bytes.append(contentsOf: value.description.utf8)
        }
    }
}
