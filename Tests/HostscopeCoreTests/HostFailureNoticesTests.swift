import Foundation
import HostStats
import HostscopeCore
import Testing

@Suite struct HostFailureNoticesTests {
    static func failure(_ message: String, kind: FailureKind = .connect) -> SnapshotRecord {
        .failure(CollectionFailure(host: "web1", collectedAt: Date(), kind: kind, message: message))
    }

    static let snapshot = SnapshotRecord.snapshot(Snapshot(host: "web1", collectedAt: Date(), collector: "proc"))

    @Test func aHostIsSaidOnceItFailsTwiceInARowThenOnlyWhenItsFailureChangesAndWhenItAnswers() {
        var notices = HostFailureNotices()
        #expect(notices.notice(for: Self.failure("connection refused")) == nil, "one failed tick is no news")
        #expect(
            notices.notice(for: Self.failure("connection refused"))
                == "web1 failed (connect): connection refused; the watch goes on trying it every tick")
        #expect(notices.notice(for: Self.failure("connection refused")) == nil)
        #expect(
            notices.notice(for: Self.failure("not connected after 5 s", kind: .timeout))?.hasPrefix(
                "web1 failed (timeout): not connected after 5 s") == true)
        #expect(notices.notice(for: Self.snapshot) == "web1 answers again")
        #expect(notices.notice(for: Self.snapshot) == nil)
        // A single failed tick between answers is left to the records.
        #expect(notices.notice(for: Self.failure("connection refused")) == nil)
        #expect(notices.notice(for: Self.snapshot) == nil)
    }
}
