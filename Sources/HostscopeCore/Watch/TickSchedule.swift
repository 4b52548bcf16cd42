public import Foundation
import ValueFormats

/// When one host's ticks are due: every `interval`, at a fixed offset (its phase) within the
/// interval, counted from the Unix epoch.
///
/// A fleet whose hosts all ticked at the same instant would send every probe at once and
/// queue them on the client and the network; each host's phase comes from its name instead
/// (as Prometheus offsets each target's scrapes), so a fleet's probes arrive spread over the
/// interval, and a host keeps its slots from one run to the next. Pure: no clock inside.
public struct TickSchedule: Sendable, Equatable {
    public let interval: Duration
    /// The offset of every slot within the interval, in `0 ..< interval`.
    public let phase: Duration

    public init(interval: Duration, phase: Duration) {
        self.interval = interval
        let length = interval.wholeNanoseconds
        let offset = phase.wholeNanoseconds
        // The remainder, moved into `0 ..< length` without adding `length` to a positive one (which
        // overflows for an interval of centuries).
        let remainder = length > 0 ? offset % length : 0
        self.phase = .nanoseconds(remainder < 0 ? remainder + length : remainder)
    }

    /// The schedule of the host named `host`: its phase is a hash of the name (64-bit FNV-1a)
    /// modulo the interval.
    public init(interval: Duration, host: String) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in host.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let length = UInt64(max(1, interval.wholeNanoseconds))
        self.init(interval: interval, phase: .nanoseconds(Int64(hash % length)))
    }

    /// The first slot at or after `time`.
    public func firstSlot(atOrAfter time: Date) -> Date {
        let length = interval.wholeNanoseconds
        guard length > 0 else { return time }
        let now = Int64(clamping: time.timeIntervalSince1970 * 1e9, rounding: .up)
        let offset = phase.wholeNanoseconds
        // The smallest phase + k × interval that is >= now. An interval of centuries (`--every 15000w`)
        // takes the slot in floating point rather than overflowing.
        let (distance, under) = now.subtractingReportingOverflow(offset)
        guard !under else { return time }
        let (behind, rest) = distance.floorDividedWithRemainder(by: length)
        let steps = rest > 0 ? behind + 1 : behind
        let (product, overflow) = steps.multipliedReportingOverflow(by: length)
        let (slot, carry) = product.addingReportingOverflow(offset)
        guard !overflow, !carry else {
            return Date(timeIntervalSince1970: (Double(steps) * Double(length) + Double(offset)) / 1e9)
        }
        return Date(timeIntervalSince1970: Double(slot) / 1e9)
    }

    /// Whether a tick due at `slot` and reached only at `now` is past its own interval (its next slot is
    /// due too): the tick before it overran, and collecting for it would put the host further behind.
    public static func isOverrun(slot: Date, now: Date, interval: Duration) -> Bool {
        now.timeIntervalSince(slot) >= interval.inSeconds
    }

    /// The slot `index` intervals after `first`.
    public func slot(_ index: Int, after first: Date) -> Date {
        first.addingTimeInterval(interval.inSeconds * Double(index))
    }
}

extension Int64 {
    /// Division rounding towards minus infinity by a positive `divisor`, and the remainder left (from 0 up
    /// to the divisor).
    fileprivate func floorDividedWithRemainder(by divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let quotient = self / divisor
        let remainder = self % divisor
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }
}
