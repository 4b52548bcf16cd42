/// Reads a `*.prom` file of the textfile directory (the Prometheus text format, as node_exporter's
/// textfile collector takes it) into samples to pass on with the host's own.
///
/// `# HELP` and `# TYPE` give a family its help and type (`counter`, `gauge`; any other type is
/// passed on as `untyped`, each sample name its own family); a sample with a timestamp, a line that
/// is not the format, or a value that is not a number fails the whole file, as in node_exporter,
/// which then sets `node_textfile_scrape_error`.
public enum TextfileExposition {
    /// A file that is not the text format.
    public struct FormatError: Error, Sendable, Equatable, CustomStringConvertible {
        public var line: Int
        public var message: String
        public var description: String { "textfile line \(line): \(message)" }
    }

    public static func samples(_ text: String) throws(FormatError) -> [MetricSample] {
        var help: [String: String] = [:]
        var types: [String: MetricType] = [:]
        var samples: [MetricSample] = []
        var families: [String: MetricFamily] = [:]
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.drop { $0 == " " || $0 == "\t" }
            if line.isEmpty { continue }
            if line.hasPrefix("#") {
                let parts = line.dropFirst().split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
                guard parts.count >= 2 else { continue }
                let name = String(parts[1])
                let rest = parts.count > 2 ? String(parts[2]) : ""
                if parts[0] == "HELP" {
                    help[name] = rest.replacingEscapes()
                } else if parts[0] == "TYPE" {
                    types[name] = rest == "counter" ? .counter : rest == "gauge" ? .gauge : .untyped
                }
                continue
            }
            let (name, labels, valueText) = try sampleParts(line, line: index + 1)
            let fields = valueText.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 1 else {
                throw FormatError(
                    line: index + 1,
                    message: fields.isEmpty ? "no value" : "a sample with a timestamp, which textfiles may not have")
            }
            guard let value = number(fields[0]) else {
                throw FormatError(line: index + 1, message: "`\(fields[0])` is not a number")
            }
            let family =
                families[name]
                ?? MetricFamily(name, types[name] ?? .untyped, help: help[name] ?? "Metric read from a textfile.")
            families[name] = family
            samples.append(MetricSample(family, labels, value))
        }
        return samples
    }

    /// `name{a="b",…} rest` → name, labels, rest.
    static func sampleParts(_ line: Substring, line number: Int) throws(FormatError) -> (
        String, [MetricSample.Label], Substring
    ) {
        let nameEnd = line.firstIndex { !($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") } ?? line.endIndex
        let name = String(line[..<nameEnd])
        guard let first = name.first, !first.isNumber, first.isASCII else {
            throw FormatError(line: number, message: "no metric name")
        }
        var labels: [MetricSample.Label] = []
        var index = nameEnd
        if index < line.endIndex, line[index] == "{" {
            index = line.index(after: index)
            while true {
                while index < line.endIndex, line[index] == " " || line[index] == "," {
                    index = line.index(after: index)
                }
                guard index < line.endIndex else { throw FormatError(line: number, message: "labels not closed") }
                if line[index] == "}" {
                    index = line.index(after: index)
                    break
                }
                let labelEnd = line[index...].firstIndex(of: "=") ?? line.endIndex
                let labelName = line[index..<labelEnd].trimmingCharacters(in: " ")
                guard labelEnd < line.endIndex, line.index(after: labelEnd) < line.endIndex,
                    line[line.index(after: labelEnd)] == "\"", !labelName.isEmpty
                else { throw FormatError(line: number, message: "a label without `=\"value\"`") }
                index = line.index(labelEnd, offsetBy: 2)
                var value = ""
                var closed = false
                while index < line.endIndex {
                    let character = line[index]
                    index = line.index(after: index)
                    if character == "\\", index < line.endIndex {
                        let next = line[index]
                        value.append(next == "n" ? "\n" : next)
                        index = line.index(after: index)
                    } else if character == "\"" {
                        closed = true
                        break
                    } else {
                        value.append(character)
                    }
                }
                guard closed else { throw FormatError(line: number, message: "a label value not closed") }
                // The host's own `instance` wins; a file's is kept as `exported_instance`, as
                // Prometheus keeps a target's clashing labels.
                let kept = labelName == "instance" ? "exported_instance" : labelName
                labels.append(MetricSample.Label(kept, value))
            }
        }
        return (name, labels, line[index...])
    }

    static func number(_ text: Substring) -> Double? {
        switch text {
        case "+Inf", "Inf": return .infinity
        case "-Inf": return -.infinity
        case "NaN": return .nan
        default: return Double(text)
        }
    }
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        String(drop { $0 == set }.reversed().drop { $0 == set }.reversed())
    }

    /// HELP text's `\\` and `\n` escapes, undone.
    fileprivate func replacingEscapes() -> String {
        var result = ""
        var escaped = false
        for character in self {
            if escaped {
                result.append(character == "n" ? "\n" : character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.append(character)
            }
        }
        return result
    }
}
