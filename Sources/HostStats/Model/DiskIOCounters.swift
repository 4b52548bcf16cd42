/// The cumulative I/O counters of one block device, as one line of `/proc/diskstats` gives them.
///
/// Sectors are always 512 bytes in this file, whatever the device's real sector size. Fields
/// that the running kernel does not print (discards before 4.18, flushes before 5.5) are `nil`.
public struct DiskIOCounters: Sendable, Equatable {
    public var major: Int
    public var minor: Int
    public var device: String
    public var readsCompleted: UInt64
    public var readsMerged: UInt64?
    public var sectorsRead: UInt64
    public var readMilliseconds: UInt64?
    public var writesCompleted: UInt64
    public var writesMerged: UInt64?
    public var sectorsWritten: UInt64
    public var writeMilliseconds: UInt64?
    public var inFlight: UInt64?
    public var ioMilliseconds: UInt64?
    public var weightedIOMilliseconds: UInt64?
    public var discardsCompleted: UInt64?
    public var discardsMerged: UInt64?
    public var sectorsDiscarded: UInt64?
    public var discardMilliseconds: UInt64?
    public var flushesCompleted: UInt64?
    public var flushMilliseconds: UInt64?

    /// The kernel's fixed sector unit for this file.
    public static let sectorBytes: UInt64 = 512

    public init(
        major: Int, minor: Int, device: String, readsCompleted: UInt64, readsMerged: UInt64? = nil,
        sectorsRead: UInt64, readMilliseconds: UInt64? = nil, writesCompleted: UInt64, writesMerged: UInt64? = nil,
        sectorsWritten: UInt64, writeMilliseconds: UInt64? = nil, inFlight: UInt64? = nil,
        ioMilliseconds: UInt64? = nil, weightedIOMilliseconds: UInt64? = nil, discardsCompleted: UInt64? = nil,
        discardsMerged: UInt64? = nil, sectorsDiscarded: UInt64? = nil, discardMilliseconds: UInt64? = nil,
        flushesCompleted: UInt64? = nil, flushMilliseconds: UInt64? = nil
    ) {
        self.major = major
        self.minor = minor
        self.device = device
        self.readsCompleted = readsCompleted
        self.readsMerged = readsMerged
        self.sectorsRead = sectorsRead
        self.readMilliseconds = readMilliseconds
        self.writesCompleted = writesCompleted
        self.writesMerged = writesMerged
        self.sectorsWritten = sectorsWritten
        self.writeMilliseconds = writeMilliseconds
        self.inFlight = inFlight
        self.ioMilliseconds = ioMilliseconds
        self.weightedIOMilliseconds = weightedIOMilliseconds
        self.discardsCompleted = discardsCompleted
        self.discardsMerged = discardsMerged
        self.sectorsDiscarded = sectorsDiscarded
        self.discardMilliseconds = discardMilliseconds
        self.flushesCompleted = flushesCompleted
        self.flushMilliseconds = flushMilliseconds
    }

    /// Bytes read since boot, or `nil` when the sector count times 512 is past 2^64.
    public var readBytes: UInt64? { sectorsRead.checkedMultiplied(by: Self.sectorBytes) }
    /// Bytes written since boot, or `nil` when the sector count times 512 is past 2^64.
    public var writtenBytes: UInt64? { sectorsWritten.checkedMultiplied(by: Self.sectorBytes) }
}
