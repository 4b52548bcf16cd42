import Foundation
import ValueFormats

/// One comparison of a rule: a figure (or the linear prediction of a figure `horizon` ahead, fitted over
/// `window`, as PromQL's `predict_linear`) against a threshold.
///
/// Written as `filesystem_avail_percent < 5` or `predict_linear(filesystem_avail_bytes[6h], 24h) < 0`.
public struct AlertCondition: Sendable, Equatable {
    /// A comparison, as PromQL writes it.
    public enum Comparison: String, Sendable, CaseIterable {
        case greater = ">"
        case greaterOrEqual = ">="
        case less = "<"
        case lessOrEqual = "<="
        case equal = "=="
        case notEqual = "!="

        func holds(_ value: Double, _ threshold: Double) -> Bool {
            switch self {
            case .greater: value > threshold
            case .greaterOrEqual: value >= threshold
            case .less: value < threshold
            case .lessOrEqual: value <= threshold
            case .equal: value == threshold
            case .notEqual: value != threshold
            }
        }
    }

    /// A linear prediction: the figure's least-squares line over `window`, read `horizon` after now.
    public struct Trend: Sendable, Hashable {
        public var window: Duration
        public var horizon: Duration
    }

    public var figure: String
    public var trend: Trend?
    public var comparison: Comparison
    public var threshold: Double

    /// The condition as written in a rules file.
    public var text: String {
        let threshold = AlertValueText.plain(threshold)
        guard let trend else { return "\(figure) \(comparison.rawValue) \(threshold)" }
        return "predict_linear(\(figure)[\(DurationText.format(trend.window))], \(DurationText.format(trend.horizon))) "
            + "\(comparison.rawValue) \(threshold)"
    }

    /// Reads a condition, or says in one phrase what is wrong with it (the caller adds file and line).
    static func parse(_ text: String) -> Result<AlertCondition, ConditionProblem> {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        // The comparison: the first of its characters outside the brackets of a prediction.
        guard let start = trimmed.firstIndex(where: { "<>=!".contains($0) }) else {
            return .failure(.init("has no comparison (one of >, >=, <, <=, ==, !=)"))
        }
        let operatorText = String(trimmed[start...].prefix { "<>=!".contains($0) })
        guard let comparison = Comparison(rawValue: operatorText) else {
            return .failure(.init("has the comparison '\(operatorText)', which is none of >, >=, <, <=, ==, !="))
        }
        let left = trimmed[..<start].trimmingCharacters(in: .whitespaces)
        let right = trimmed[start...].dropFirst(operatorText.count).trimmingCharacters(in: .whitespaces)
        guard let threshold = Double(right), threshold.isFinite else {
            return .failure(.init("compares with '\(right)', which is not a number"))
        }
        var figure = left
        var trend: Trend?
        if left.hasPrefix("predict_linear(") {
            // predict_linear(FIGURE[WINDOW], HORIZON)
            guard left.hasSuffix(")"), let open = left.firstIndex(of: "["), let close = left.firstIndex(of: "]"),
                open < close, let comma = left[close...].firstIndex(of: ",")
            else {
                return .failure(.init("has a prediction that is not predict_linear(figure[window], horizon)"))
            }
            figure = left[left.index(left.startIndex, offsetBy: 15)..<open].trimmingCharacters(in: .whitespaces)
            let windowText = String(left[left.index(after: open)..<close])
            let horizonText = String(left[left.index(after: comma)..<left.index(before: left.endIndex)])
            guard let window = DurationText.parse(windowText), window > .zero else {
                return .failure(
                    .init("has the window '\(windowText)', which is no duration above zero: \(DurationText.syntax)"))
            }
            guard let horizon = DurationText.parse(horizonText) else {
                return .failure(
                    .init(
                        "has the horizon '\(horizonText.trimmingCharacters(in: .whitespaces))', which is no duration: \(DurationText.syntax)"
                    ))
            }
            trend = Trend(window: window, horizon: horizon)
        }
        guard let known = AlertFigure.all[figure] else {
            let names = AlertFigure.catalog.map(\.name)
            let hint = NameSuggestion.closest(to: figure, among: names).map { " (did you mean \($0)?)" } ?? ""
            return .failure(.init("reads the unknown figure '\(figure)'\(hint); `hostscope alerts figures` lists them"))
        }
        if trend != nil && known.scope == .collection {
            return .failure(.init("predicts \(figure), which counts collections and has no trend"))
        }
        if trend == nil && !known.range.contains(threshold) {
            return .failure(
                .init(
                    "compares \(figure) with \(AlertValueText.plain(threshold)), outside its range "
                        + "\(AlertValueText.plain(known.range.lowerBound))…\(AlertValueText.plain(known.range.upperBound))"
                ))
        }
        return .success(AlertCondition(figure: figure, trend: trend, comparison: comparison, threshold: threshold))
    }
}

/// What is wrong with a condition, as a phrase that follows "the condition '…'".
struct ConditionProblem: Error {
    var phrase: String
    init(_ phrase: String) { self.phrase = phrase }
}
