import Foundation

/// An annotation's text with Prometheus's template actions: `{{ $labels.mountpoint }}`, `{{ $value }}`,
/// a function of the value as a pipe or a call (`{{ $value | humanize }}`, `{{ humanizePercentage $value }}`),
/// and `{{ printf "%.2f" $value }}`.
///
/// Only these forms are read, so that the same text works in the Prometheus rules `hostscope alerts rules`
/// writes; anything else is refused when the rules are read, not when an alert fires.
public struct AlertTemplate: Sendable, Equatable {
    enum Part: Sendable, Equatable {
        case text(String)
        case value(Format)
        case label(String)
    }

    /// How a value is written.
    enum Format: Sendable, Equatable {
        case plain
        case humanize
        case humanize1024
        case humanizePercentage
        case humanizeDuration
        case fixed(Int)
    }

    let parts: [Part]
    /// The text as written.
    public let source: String

    /// Reads a template, or says in one phrase what does not parse.
    static func parse(_ source: String) -> Result<AlertTemplate, ConditionProblem> {
        var parts: [Part] = []
        var rest = Substring(source)
        while let open = rest.range(of: "{{") {
            if open.lowerBound > rest.startIndex { parts.append(.text(String(rest[..<open.lowerBound]))) }
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                return .failure(.init("has a '{{' without its '}}'"))
            }
            let action = rest[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            guard let part = Self.action(action) else {
                return .failure(
                    .init(
                        "has the action '{{ \(action) }}', which is none of {{ $value }}, {{ $labels.NAME }}, "
                            + "{{ $value | humanize }} (or humanize1024, humanizePercentage, humanizeDuration) and "
                            + "{{ printf \"%.2f\" $value }}"))
            }
            parts.append(part)
            rest = rest[close.upperBound...]
        }
        if rest.contains("}}") { return .failure(.init("has a '}}' without its '{{'")) }
        if !rest.isEmpty { parts.append(.text(String(rest))) }
        return .success(AlertTemplate(parts: parts, source: source))
    }

    private static let functions: [String: Format] = [
        "humanize": .humanize, "humanize1024": .humanize1024, "humanizePercentage": .humanizePercentage,
        "humanizeDuration": .humanizeDuration,
    ]

    private static func action(_ action: String) -> Part? {
        let words = action.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        func isValue(_ word: String) -> Bool { word == "$value" || word == ".Value" }
        func label(_ word: String) -> String? {
            for prefix in ["$labels.", ".Labels."] where word.hasPrefix(prefix) {
                let name = word.dropFirst(prefix.count)
                let valid = !name.isEmpty && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
                return valid ? String(name) : nil
            }
            return nil
        }
        switch words.count {
        case 1:
            if isValue(words[0]) { return .value(.plain) }
            return label(words[0]).map(Part.label)
        case 2:
            guard isValue(words[1]), let format = functions[words[0]] else { return nil }
            return .value(format)
        case 3:
            if isValue(words[0]), words[1] == "|", let format = functions[words[2]] { return .value(format) }
            if words[0] == "printf", isValue(words[2]) {
                // "%.Nf" only: the one printf form the shipped rules use.
                let format = words[1]
                guard format.hasPrefix("\"%."), format.hasSuffix("f\""), format.count >= 6,
                    let digits = Int(format.dropFirst(3).dropLast(2)), (0...9).contains(digits)
                else { return nil }
                return .value(.fixed(digits))
            }
            return nil
        default:
            return nil
        }
    }

    /// The text with the alert's labels and value filled in; a label the alert lacks is empty, as in
    /// Prometheus.
    public func render(labels: [String: String], value: Double) -> String {
        var out = ""
        for part in parts {
            switch part {
            case .text(let text): out += text
            case .label(let name): out += labels[name] ?? ""
            case .value(let format): out += AlertValueText.format(value, format)
            }
        }
        return out
    }
}

/// Values as alerts write them, in the forms of Prometheus's template functions.
public enum AlertValueText {
    /// A number as Go's templates print a float64: shortest form, no `.0` on whole numbers.
    public static func plain(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    static func format(_ value: Double, _ format: AlertTemplate.Format) -> String {
        switch format {
        case .plain: return plain(value)
        case .fixed(let digits): return String(format: "%.\(digits)f", value)
        case .humanize: return scaled(value, base: 1000, prefixes: ["", "k", "M", "G", "T", "P", "E"])
        case .humanize1024: return scaled(value, base: 1024, prefixes: ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"])
        case .humanizePercentage: return String(format: "%.4g%%", value * 100)
        case .humanizeDuration: return duration(value)
        }
    }

    private static func scaled(_ value: Double, base: Double, prefixes: [String]) -> String {
        var scaled = value
        var index = 0
        while abs(scaled) >= base && index < prefixes.count - 1 {
            scaled /= base
            index += 1
        }
        return String(format: "%.4g", scaled) + prefixes[index]
    }

    private static func duration(_ seconds: Double) -> String {
        guard abs(seconds) >= 1 else { return String(format: "%.4gs", seconds) }
        var rest = Int64(seconds.rounded(.towardZero))
        var out = rest < 0 ? "-" : ""
        rest = abs(rest)
        for (unit, size) in [("d", Int64(86_400)), ("h", 3600), ("m", 60)] where rest >= size {
            out += "\(rest / size)\(unit) "
            rest %= size
        }
        return out + "\(rest)s"
    }
}
