import Foundation
import ServeAPI
import Testing

@Suite struct ProbeAdmissionsTests {
    let start = ContinuousClock.now

    @Test func atMostTheLimitIsAdmittedAndAHostAdmittedBeforeStaysAdmitted() {
        let admissions = ProbeAdmissions(maximumHosts: 2, minimumExpiry: .seconds(3))
        #expect(admissions.admit("web-1", now: start))
        #expect(admissions.admit("web-2", now: start))
        #expect(!admissions.admit("web-3", now: start))
        #expect(admissions.admit("web-1", now: start + .seconds(1)))
        #expect(admissions.count == 2)
        #expect(!ProbeAdmissions(maximumHosts: 0, minimumExpiry: .seconds(3)).admit("web-1", now: start))
    }

    @Test func aHostNotProbedForThreeOfItsIntervalsExpiresAndFreesItsPlace() {
        let admissions = ProbeAdmissions(maximumHosts: 1, minimumExpiry: .seconds(3))
        #expect(admissions.admit("web-1", now: start))
        // Probed every 10 s: kept 30 s after its last probe.
        #expect(admissions.admit("web-1", now: start + .seconds(10)))
        #expect(admissions.expire(now: start + .seconds(39)).isEmpty)
        #expect(admissions.expire(now: start + .seconds(41)) == ["web-1"])
        #expect(admissions.count == 0)
        #expect(admissions.admit("web-2", now: start + .seconds(41)))
    }

    @Test func aHostProbedOnceIsKeptLongerThanTheMinimumAndTouchLeavesOthersAlone() {
        let admissions = ProbeAdmissions(maximumHosts: 10, minimumExpiry: .seconds(3))
        #expect(admissions.admit("web-1", now: start))
        admissions.touch("db-1", now: start)
        #expect(admissions.count == 1)
        #expect(admissions.expire(now: start + ProbeAdmissions.firstProbeExpiry - .seconds(1)).isEmpty)
        admissions.touch("web-1", now: start + .seconds(100))
        // Its interval is now 100 s: kept 300 s from the last probe.
        #expect(admissions.expire(now: start + .seconds(399)).isEmpty)
        #expect(admissions.expire(now: start + .seconds(401)) == ["web-1"])
    }

    @Test func probesAMomentApartSayNothingOfTheInterval() {
        let admissions = ProbeAdmissions(maximumHosts: 10, minimumExpiry: .seconds(3))
        #expect(admissions.admit("web-1", now: start))
        #expect(admissions.admit("web-1", now: start + .milliseconds(10)))
        // Still kept as a host probed once.
        #expect(admissions.expire(now: start + .seconds(60)).isEmpty)
    }
}
