import Foundation
import GRDB
import HostStats
import HostscopeCore
import OrderedJSON
import Testing

@testable import Storage

@Suite struct HistoryStoreTests {
    @Test func recordsReadBackAsTheExactJSONWatchProduced() async throws {
        let directory = try TemporaryDirectory()
        let database = try await StorageDatabase.fresh(in: directory)
        let records = [
            Records.snapshot("web1", at: 0.125, busy: 33.25), Records.failure("web2", at: 0.5, kind: .hostKey),
        ]
        try await database.history.append(records)

        let stored = try await database.history.page(HistoryQuery(), limit: 10).records
        #expect(stored.map(\.json) == records.map(\.jsonValue.jsonString))
        #expect(try stored.map { try $0.record() } == records)
        #expect(try stored.map { try $0.jsonValue().jsonString } == stored.map(\.json))

        #expect(stored[0].kind == .snapshot)
        #expect(stored[0].errorKind == nil)
        #expect(stored[0].cpuBusyPercent == 33.25)
        #expect(stored[0].memoryUsedPercent == 25)
        #expect(stored[0].collectedAt == Records.at(0.125))
        #expect(stored[1].kind == .error)
        #expect(stored[1].errorKind == "host_key")
        #expect(stored[1].cpuBusyPercent == nil)
        #expect(stored[1].host == "web2")
    }

    @Test func scalarColumnsHoldTheFiguresWorthQuerying() async throws {
        let directory = try TemporaryDirectory()
        let database = try await StorageDatabase.fresh(in: directory)
        try await database.history.append([Records.snapshot("web1", at: 0, busy: 70)])
        let row = try await database.pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT kind, error_kind, cpu_busy_percent, memory_used_percent, load_1m, disk_max_used_percent,
                           collected_at FROM snapshot_record
                    """
            ).map { Array($0.databaseValues) }
        }
        let values = try #require(row)
        #expect(String.fromDatabaseValue(values[0]) == "snapshot")
        #expect(values[1].isNull)
        #expect(Double.fromDatabaseValue(values[2]) == 70)
        #expect(Double.fromDatabaseValue(values[3]) == 25)
        #expect(Double.fromDatabaseValue(values[4]) == 0.12)
        #expect(Double.fromDatabaseValue(values[5]) == 40)
        #expect(Int64.fromDatabaseValue(values[6]) == 1_795_000_000_000)
    }

    @Test func queriesSelectHostsAndAnInclusiveTimeRangeInTimeOrder() async throws {
        let directory = try TemporaryDirectory()
        let database = try await StorageDatabase.fresh(in: directory)
        // Appended newest first, to show that order comes from the query, not insertion.
        for second in (0..<10).reversed() {
            try await database.history.append(
                ["web1", "web2", "db-1", "db-2"].map { Records.snapshot($0, at: Double(second)) })
        }
        let history = database.history

        let range = try await history.page(
            HistoryQuery(hosts: .exact(["web1"]), since: Records.at(3), until: Records.at(6)), limit: 100)
        #expect(range.records.map(\.collectedAt) == [3, 4, 5, 6].map { Records.at($0) })
        #expect(range.records.allSatisfy { $0.host == "web1" })
        #expect(range.next == nil)

        let pattern = try await history.page(HistoryQuery(hosts: .pattern("db-*"), since: Records.at(8)), limit: 100)
        #expect(Set(pattern.records.map(\.host)) == ["db-1", "db-2"])
        #expect(pattern.records.count == 4)

        let all = try await history.page(HistoryQuery(until: Records.at(1)), limit: 100).records
        #expect(all.count == 8)
        #expect(all.map(\.collectedAt) == all.map(\.collectedAt).sorted())

        #expect(try await history.count(HistoryQuery(hosts: .exact(["web1", "db-2"]))) == 20)
        #expect(try await history.count(HistoryQuery(hosts: .exact([]))) == 0)
        #expect(try await history.count(HistoryQuery(hosts: .exact(["nobody"]))) == 0)
        #expect(try await history.count(HistoryQuery(since: Records.at(9.5))) == 0)
    }

    @Test func aStepKeepsTheLastRecordOfEachIntervalPerHostAndPagesOverThem() async throws {
        let directory = try TemporaryDirectory()
        let database = try await StorageDatabase.fresh(in: directory)
        // Ticks every 2 s for 60 s on two hosts; the epoch is a whole multiple of 10 s.
        for second in stride(from: 0, to: 60, by: 2) {
            try await database.history.append(
                ["web1", "web2"].map { Records.snapshot($0, at: Double(second), busy: Double(second)) })
        }
        let query = HistoryQuery(hosts: .exact(["web1"]), since: Records.at(10), stepMilliseconds: 10_000)
        let page = try await database.history.page(query, limit: 100)
        #expect(page.records.map(\.collectedAt) == [18, 28, 38, 48, 58].map { Records.at($0) })
        #expect(page.records.map(\.cpuBusyPercent) == [18, 28, 38, 48, 58])
        #expect(page.records.allSatisfy { $0.host == "web1" })

        var seen: [Date] = []
        var cursor: HistoryCursor?
        repeat {
            let next = try await database.history.page(query, after: cursor, limit: 2)
            seen += next.records.map(\.collectedAt)
            cursor = next.next
        } while cursor != nil
        #expect(seen == page.records.map(\.collectedAt))
        #expect(try await database.history.count(HistoryQuery(stepMilliseconds: 10_000)) == 12)
        #expect(try await database.history.count(HistoryQuery(stepMilliseconds: 0)) == 60)
    }

    @Test func aHostArgumentMeansAllAPatternOrOneHost() {
        #expect(HostFilter(argument: nil) == .all)
        #expect(HostFilter(argument: "all") == .all)
        #expect(HostFilter(argument: "") == .all)
        #expect(HostFilter(argument: "db-*") == .pattern("db-*"))
        #expect(HostFilter(argument: "web?") == .pattern("web?"))
        #expect(HostFilter(argument: "ann@web1:2222") == .exact(["ann@web1:2222"]))
    }

    @Test func pagesWalkALargeHistoryWithoutRepeatsOrGaps() async throws {
        let directory = try TemporaryDirectory()
        let database = try await StorageDatabase.fresh(in: directory)
        // Many records share a timestamp, so pages must break ties by row id.
        var records: [SnapshotRecord] = []
        for index in 0..<1_234 {
            records.append(Records.failure("host\(index % 7)", at: Double(index / 10)))
        }
        try await database.history.append(records)

        var seen: [StoredRecord] = []
        for try await record in database.history.records(HistoryQuery(), pageSize: 100) {
            seen.append(record)
        }
        #expect(seen.count == 1_234)
        #expect(Set(seen.map(\.id)).count == 1_234)
        #expect(seen.map(\.id) == seen.map(\.id).sorted(), "inserted in time order, so ids ascend too")
        #expect(seen.map(\.collectedAt) == records.map(\.collectedAt))

        var pages = 0
        var cursor: HistoryCursor?
        repeat {
            let page = try await database.history.page(HistoryQuery(hosts: .exact(["host3"])), after: cursor, limit: 50)
            #expect(page.records.allSatisfy { $0.host == "host3" })
            cursor = page.next
            pages += 1
        } while cursor != nil
        #expect(pages == 4, "177 records of host3: three full pages and a partial one")

        var exactPages: [Int] = []
        var exactCursor: HistoryCursor?
        repeat {
            let page = try await database.history.page(
                HistoryQuery(until: Records.at(9.9)), after: exactCursor, limit: 50)
            exactPages.append(page.records.count)
            exactCursor = page.next
        } while exactCursor != nil
        #expect(exactPages == [50, 50, 0], "a full last page is followed by an empty one")
    }

    @Test func hostsListFirstAndLastTimesWithCounts() async throws {
        let directory = try TemporaryDirectory()
        let database = try await StorageDatabase.fresh(in: directory)
        try await database.history.append([
            Records.snapshot("web1", at: 5), Records.failure("web1", at: 10), Records.snapshot("web1", at: 7),
            Records.snapshot("db", at: 1),
        ])
        let hosts = try await database.history.hosts()
        #expect(
            hosts == [
                HostSummary(
                    host: "db", firstCollectedAt: Records.at(1), lastCollectedAt: Records.at(1), recordCount: 1,
                    errorCount: 0),
                HostSummary(
                    host: "web1", firstCollectedAt: Records.at(5), lastCollectedAt: Records.at(10), recordCount: 3,
                    errorCount: 1),
            ])
    }

    @Test func pruneRemovesExactlyTheRowsOlderThanTheCutoff() async throws {
        let directory = try TemporaryDirectory()
        let database = try await StorageDatabase.fresh(in: directory)
        // More old rows than one prune transaction takes, to cross a chunk boundary.
        let old = (0..<(HistoryStore.pruneChunk * 2 + 17)).map { Records.failure("h\($0 % 3)", at: Double($0) / 1000) }
        let kept = (0..<40).map { Records.snapshot("h\($0 % 3)", at: 100 + Double($0)) }
        try await database.history.append(old + kept + [Records.snapshot("edge", at: 99.999)])

        let removed = try await database.history.prune(olderThan: Records.at(99.999))
        #expect(removed == old.count)
        var remaining: [Date] = []
        for try await record in database.history.records(HistoryQuery()) { remaining.append(record.collectedAt) }
        // Dates built in different ways differ below the microsecond; the stored millisecond is what counts.
        #expect(
            remaining.first.map(HistoryStore.milliseconds) == HistoryStore.milliseconds(Records.at(99.999)),
            "a record exactly at the cutoff stays")
        #expect(remaining.count == kept.count + 1)
        #expect(try await database.history.prune(olderThan: Records.at(99.999)) == 0)
        #expect(try await database.integrityCheck().isOK)
    }

    @Test func aReaderAndTwoWritersOnSeparateConnectionsNeverSeeAPartialBatch() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("shared.sqlite")
        // Separate StorageDatabase values are separate SQLite connections, locked as two processes would be.
        let writerA = try await StorageDatabase.open(at: path)
        let writerB = try await StorageDatabase.open(at: path)
        let reader = try await StorageDatabase.open(at: path, mode: .existingOnly)
        let batches = 60
        let batchSize = 10

        async let wroteA: Void = {
            for batch in 0..<batches {
                try await writerA.history.append(
                    (0..<batchSize).map { Records.snapshot("a\($0)", at: Double(batch), processes: 20) })
            }
        }()
        async let wroteB: Void = {
            for batch in 0..<batches {
                try await writerB.history.append(
                    (0..<batchSize).map { Records.failure("b\($0)", at: Double(batch) + 0.5) })
            }
        }()
        var observed: [Int] = []
        while observed.last != 2 * batches * batchSize {
            let count = try await reader.history.count()
            #expect(count % batchSize == 0, "a reader saw half a batch: \(count) rows")
            observed.append(count)
            if observed.count > 100_000 { break }
        }
        try await wroteA
        try await wroteB
        #expect(observed == observed.sorted())
        #expect(try await reader.history.count(HistoryQuery(hosts: .pattern("a*"))) == batches * batchSize)
        #expect(try await reader.history.count(HistoryQuery(hosts: .pattern("b*"))) == batches * batchSize)
        #expect(try await reader.integrityCheck().isOK)
    }
}
