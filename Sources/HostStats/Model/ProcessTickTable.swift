/// What a later sample needs of a sample's processes to give each its CPU share: pid, start time and
/// CPU ticks, sorted by pid.
///
/// A watch keeps one sample per host between ticks; on a host with thousands of processes the whole
/// ``ProcessSample`` of each (88 bytes, names included) made most of a large fleet's memory, where
/// this keeps 24 bytes a process. Lookups are binary searches, with no hashing per process.
public struct ProcessTickTable: Sendable, Equatable {
    struct Entry: Equatable {
        var pid: Int
        var startTimeTicks: UInt64
        var cpuTicks: UInt64
    }

    /// Sorted by pid, each pid once.
    private(set) var entries: [Entry]

    /// The table of `processes`; a pid listed twice keeps its first line, as a reader of the sample
    /// would.
    public init(_ processes: [ProcessSample]) {
        var entries = processes.map { Entry(pid: $0.pid, startTimeTicks: $0.startTimeTicks, cpuTicks: $0.cpuTicks) }
        // Stable, so that the first of two lines of one pid stays first.
        var sorted = true
        for index in entries.indices.dropFirst() where entries[index - 1].pid >= entries[index].pid {
            sorted = false
            break
        }
        if !sorted {
            entries = entries.enumerated().sorted { ($0.element.pid, $0.offset) < ($1.element.pid, $1.offset) }
                .map(\.element)
            var unique: [Entry] = []
            unique.reserveCapacity(entries.count)
            for entry in entries where unique.last?.pid != entry.pid { unique.append(entry) }
            entries = unique
        }
        self.entries = entries
    }

    /// Processes in the table.
    public var count: Int { entries.count }

    /// The start time and CPU ticks of `pid`, if the sample had it.
    public func ticks(of pid: Int) -> (startTimeTicks: UInt64, cpuTicks: UInt64)? {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].pid < pid { low = middle + 1 } else { high = middle }
        }
        guard low < entries.count, entries[low].pid == pid else { return nil }
        return (entries[low].startTimeTicks, entries[low].cpuTicks)
    }
}
