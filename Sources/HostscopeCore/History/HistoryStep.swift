public import Foundation
public import HostStats
public import OrderedJSON
import ValueFormats

/// One host's records over one step of `history --step` (`1m`: 12:00:00 to 12:01:00, steps counted from the
/// Unix epoch): how many, how many failed, and the mean of each figure.
public struct HistoryStep: Sendable, Equatable {
    /// When the step begins (included) and ends (not included).
    public var start: Date
    public var end: Date
    /// The host's records in the step, summarised; ``HostHistorySummary/subscript(_:)`` gives each figure's mean.
    public var summary: HostHistorySummary

    public var host: String { summary.host }

    /// The step of `length` that holds `date`.
    public static func start(of date: Date, length: Duration) -> Date {
        let seconds = length.inSeconds
        return Date(timeIntervalSince1970: (date.timeIntervalSince1970 / seconds).rounded(.down) * seconds)
    }

    /// The JSON keys of the figures, in ``HostHistorySummary/Figure`` order; CSV's columns too.
    public static let figureKeys: [(HostHistorySummary.Figure, String)] = [
        (.cpuBusy, "cpu_busy_percent"), (.memoryUsed, "memory_used_percent"), (.load1m, "load_1m"),
        (.fullestDisk, "fullest_disk_used_percent"), (.networkReceive, "network_receive_bytes_per_second"),
        (.networkTransmit, "network_transmit_bytes_per_second"),
    ]

    /// `hostscope.history-step/1`: host, start, end, samples, errors, then each figure's mean (`null` when no
    /// record of the step gave it).
    public var jsonValue: JSONValue {
        var object = JSONObject()
        object.append("schema", "hostscope.history-step/1")
        object.append("host", .string(host))
        object.append("start", .string(RFC3339.format(start)))
        object.append("end", .string(RFC3339.format(end)))
        object.append("samples", .int(Int64(summary.samples)))
        object.append("errors", .int(Int64(summary.errors)))
        for (figure, key) in Self.figureKeys {
            object.append(key, summary[figure].mean.map { .double(Self.rounded($0)) } ?? .null)
        }
        return .object(object)
    }

    /// The CSV header of steps.
    public static let csvHeader =
        (["start", "end", "host", "samples", "errors"] + figureKeys.map(\.1)).joined(separator: ",") + "\r\n"

    /// The step as one CSV row (CRLF, as `watch`'s CSV); figures to two decimals, empty when unknown.
    public var csvRow: String {
        let figures = Self.figureKeys.map { figure, _ in SnapshotCSV.fixed(summary[figure].mean, 2) }
        return
            ([RFC3339.format(start), RFC3339.format(end), SnapshotCSV.field(host), String(summary.samples)]
            + [String(summary.errors)] + figures).joined(separator: ",") + "\r\n"
    }

    /// A mean to the precision it means: two decimals, as the CSV figures of records.
    static func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }
}

/// Rolls records (oldest first, any hosts) up into ``HistoryStep``s: a host's step is complete once a record of a
/// later step of that host arrives. Memory stays bounded by the number of hosts.
public struct HistoryStepper: Sendable {
    public let length: Duration
    private var open: [String: HistoryStep] = [:]

    public init(length: Duration) {
        self.length = length
    }

    /// Adds `record`; the step it completes, if any.
    public mutating func add(_ record: SnapshotRecord) -> HistoryStep? {
        let start = HistoryStep.start(of: record.collectedAt, length: length)
        var completed: HistoryStep?
        if let current = open[record.host], current.start != start {
            completed = current
            open[record.host] = nil
        }
        var step =
            open[record.host]
            ?? HistoryStep(
                start: start, end: start.addingTimeInterval(length.inSeconds),
                summary: HostHistorySummary(host: record.host))
        step.summary.add(record)
        open[record.host] = step
        return completed
    }

    /// The steps still open, by host then time; the stepper is empty after.
    public mutating func finish() -> [HistoryStep] {
        defer { open = [:] }
        return open.values.sorted { ($0.host, $0.start) < ($1.host, $1.start) }
    }
}
