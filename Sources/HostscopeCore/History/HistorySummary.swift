public import Foundation
public import HostStats

/// The smallest, mean, largest and last value of one figure over a range of records; unknown values (a first
/// tick's rates, an error record's figures) are left out of all four.
public struct FigureSummary: Sendable, Equatable {
    /// How many records gave the figure.
    public private(set) var count = 0
    public private(set) var minimum: Double?
    public private(set) var maximum: Double?
    /// The value of the latest record that gave it.
    public private(set) var last: Double?
    private var sum = 0.0
    /// The values in at most ``trendCapacity`` consecutive buckets of equal length, for a sparkline.
    private var buckets: [(sum: Double, count: Int)] = []
    /// Values per bucket: doubles whenever the buckets fill up, so memory stays bounded however long the range.
    private var bucketLength = 1

    /// The most points ``trend`` has.
    public static let trendCapacity = 64

    public init() {}

    /// The arithmetic mean of the values, or `nil` when there were none.
    public var mean: Double? { count > 0 ? sum / Double(count) : nil }

    /// The course of the values, oldest first: the means of consecutive runs of equal length, at most
    /// ``trendCapacity`` of them (every value itself while there are no more).
    public var trend: [Double] { buckets.map { $0.sum / Double($0.count) } }

    /// Adds the value of the next record, oldest first; `nil` and values that are not finite are ignored.
    public mutating func add(_ value: Double?) {
        guard let value, value.isFinite else { return }
        count += 1
        sum += value
        minimum = Swift.min(minimum ?? value, value)
        maximum = Swift.max(maximum ?? value, value)
        last = value
        if let current = buckets.last, current.count < bucketLength {
            buckets[buckets.count - 1] = (current.sum + value, current.count + 1)
        } else {
            if buckets.count == Self.trendCapacity {
                // Full: each pair of buckets becomes one twice as long.
                var merged: [(sum: Double, count: Int)] = []
                for index in stride(from: 0, to: buckets.count, by: 2) {
                    let (first, second) = (buckets[index], buckets[index + 1])
                    merged.append((sum: first.sum + second.sum, count: first.count + second.count))
                }
                buckets = merged
                bucketLength *= 2
            }
            buckets.append((value, 1))
        }
    }

    public static func == (left: FigureSummary, right: FigureSummary) -> Bool {
        left.count == right.count && left.minimum == right.minimum && left.maximum == right.maximum
            && left.last == right.last && left.sum == right.sum && left.trend == right.trend
    }
}

/// What one host's records over a range add up to, as `history` shows it on a terminal.
public struct HostHistorySummary: Sendable, Equatable {
    /// The figures summarised, in the order they are shown.
    public enum Figure: String, Sendable, CaseIterable {
        /// CPU busy share, percent.
        case cpuBusy
        /// Memory used share, percent.
        case memoryUsed
        /// The 1-minute load average.
        case load1m
        /// The used share of the fullest filesystem, percent.
        case fullestDisk
        /// Bytes received per second over every interface but the loopback.
        case networkReceive
        /// Bytes sent per second over every interface but the loopback.
        case networkTransmit
    }

    public var host: String
    /// The first and last record's collection times.
    public private(set) var first: Date?
    public private(set) var last: Date?
    /// Records read: snapshots and error records.
    public private(set) var samples = 0
    /// Error records among them, and the latest.
    public private(set) var errors = 0
    public private(set) var lastError: CollectionFailure?
    public private(set) var figures: [Figure: FigureSummary] = [:]

    public init(host: String) {
        self.host = host
    }

    /// The summary of `figure` (empty when no record gave it).
    public subscript(figure: Figure) -> FigureSummary { figures[figure] ?? FigureSummary() }

    /// Adds the next record of the host, oldest first.
    public mutating func add(_ record: SnapshotRecord) {
        samples += 1
        first = first.map { Swift.min($0, record.collectedAt) } ?? record.collectedAt
        last = last.map { Swift.max($0, record.collectedAt) } ?? record.collectedAt
        switch record {
        case .failure(let failure):
            errors += 1
            lastError = failure
        case .snapshot(let snapshot):
            let values: [Figure: Double?] = [
                .cpuBusy: snapshot.cpu?.busyPercent, .memoryUsed: snapshot.memory?.usedPercent,
                .load1m: snapshot.load?.one, .fullestDisk: snapshot.fullestDiskUsedPercent,
                .networkReceive: snapshot.networkReceiveRate, .networkTransmit: snapshot.networkTransmitRate,
            ]
            for (figure, value) in values { figures[figure, default: FigureSummary()].add(value) }
        }
    }
}

/// `history`'s summary of a range: one ``HostHistorySummary`` per host, by host name.
public struct HistorySummary: Sendable, Equatable {
    public var hosts: [HostHistorySummary]
    /// Stored records whose JSON could not be read (left out).
    public var unreadable: Int

    public init(hosts: [HostHistorySummary], unreadable: Int = 0) {
        self.hosts = hosts
        self.unreadable = unreadable
    }
}
