import Foundation
import HostscopeCore
import Testing
import ValueFormats

@Suite struct TickScheduleTests {
    @Test func slotsFallAtThePhasePlusWholeIntervalsSinceTheEpoch() {
        let schedule = TickSchedule(interval: .seconds(5), phase: .milliseconds(1250))
        let first = schedule.firstSlot(atOrAfter: Date(timeIntervalSince1970: 1_795_000_002))
        // Date keeps seconds since 2001 as a Double: equal to within a microsecond.
        #expect(abs(first.timeIntervalSince1970 - 1_795_000_006.25) < 1e-6)
        #expect(abs(schedule.slot(3, after: first).timeIntervalSince1970 - 1_795_000_021.25) < 1e-6)
        // A time on a slot is that slot.
        #expect(schedule.firstSlot(atOrAfter: first) == first)
    }

    @Test func aPhaseOutsideTheIntervalIsFoldedIntoIt() {
        #expect(TickSchedule(interval: .seconds(5), phase: .seconds(7)).phase == .seconds(2))
        #expect(TickSchedule(interval: .seconds(5), phase: .seconds(-1)).phase == .seconds(4))
    }

    @Test func aHostKeepsItsPhaseAndAFleetsPhasesSpreadOverTheInterval() {
        let interval = Duration.seconds(5)
        #expect(TickSchedule(interval: interval, host: "web1") == TickSchedule(interval: interval, host: "web1"))
        let phases = (0..<300).map { index in
            TickSchedule(interval: interval, host: String(format: "fleet-%03d", index)).phase
        }
        #expect(phases.allSatisfy { $0 >= .zero && $0 < interval })
        // Spread: each of ten half-second bins of the interval gets some of the 300 hosts, none most.
        var bins = [Int](repeating: 0, count: 10)
        for phase in phases {
            bins[Int(phase.inSeconds * 2)] += 1
        }
        #expect(bins.allSatisfy { $0 >= 10 && $0 <= 60 }, "\(bins)")
    }

    @Test(arguments: ["15250w", "1e11s", "999999999999s"])
    func anIntervalOfCenturiesGivesASlotInsteadOfOverflowing(every: String) throws {
        let interval = try #require(DurationText.parse(every))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let schedule = TickSchedule(interval: interval, host: "web1")
        #expect(schedule.firstSlot(atOrAfter: now) >= now)
    }

    @Test func aTickIsOverrunOnceItsWholeIntervalHasPassed() {
        let slot = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(!TickSchedule.isOverrun(slot: slot, now: slot, interval: .seconds(1)))
        #expect(!TickSchedule.isOverrun(slot: slot, now: slot.addingTimeInterval(0.999), interval: .seconds(1)))
        #expect(TickSchedule.isOverrun(slot: slot, now: slot.addingTimeInterval(1), interval: .seconds(1)))
        #expect(TickSchedule.isOverrun(slot: slot, now: slot.addingTimeInterval(7), interval: .seconds(1)))
    }
}
