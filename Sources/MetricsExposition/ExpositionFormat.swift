import Foundation

/// The two text formats a scraper can ask for.
public enum ExpositionFormat: Sendable, Equatable {
    /// The Prometheus text format, version 0.0.4.
    case prometheusText
    /// OpenMetrics 1.0.0 text.
    case openMetrics

    /// The `Content-Type` of a response in this format.
    public var contentType: String {
        switch self {
        case .prometheusText: "text/plain; version=0.0.4; charset=utf-8"
        case .openMetrics: "application/openmetrics-text; version=1.0.0; charset=utf-8"
        }
    }

    /// The format an `Accept` header asks for: OpenMetrics when it names
    /// `application/openmetrics-text` (version 1.0.0 or none) with a weight at least that of the
    /// text format or of `*/*`, else the Prometheus text format, which every scraper reads.
    ///
    /// Prometheus sends `application/openmetrics-text;version=1.0.0,…,text/plain;version=0.0.4;q=0.5,*/*;q=0.1`
    /// when its scrape protocols allow OpenMetrics.
    public static func negotiate(accept: String?) -> ExpositionFormat {
        guard let accept, !accept.isEmpty else { return .prometheusText }
        var openMetrics = -1.0
        var text = -1.0
        for item in accept.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let type = parts.first?.lowercased() else { continue }
            var weight = 1.0
            var version: String?
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { String($0) }
                guard pair.count == 2 else { continue }
                switch pair[0].lowercased() {
                case "q": weight = Double(pair[1]) ?? 0
                case "version": version = pair[1]
                default: break
                }
            }
            switch type {
            case "application/openmetrics-text" where version == nil || version == "1.0.0":
                openMetrics = max(openMetrics, weight)
            case "text/plain", "*/*":
                text = max(text, weight)
            default: break
            }
        }
        return openMetrics > 0 && openMetrics >= text ? .openMetrics : .prometheusText
    }
}
