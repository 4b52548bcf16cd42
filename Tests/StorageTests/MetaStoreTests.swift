import Testing

@testable import Storage

@Suite struct MetaStoreTests {
    @Test func valuesKeepTheirType() async throws {
        let directory = try TemporaryDirectory()
        let meta = try await StorageDatabase.fresh(in: directory).meta
        try await meta.set("last_prune", "2026-11-21T19:22:00.123Z")
        try await meta.set("zip", "007")
        try await meta.set("dropped_spans", 12)
        #expect(try await meta.string("last_prune") == "2026-11-21T19:22:00.123Z")
        #expect(try await meta.string("zip") == "007", "text that looks numeric stays text")
        #expect(try await meta.integer("zip") == 7)
        #expect(try await meta.integer("dropped_spans") == 12)
        #expect(try await meta.string("dropped_spans") == "12")
        #expect(try await meta.integer("last_prune") == nil)
        #expect(try await meta.string("missing") == nil)
        #expect(try await meta.keys() == ["dropped_spans", "last_prune", "zip"])
    }

    @Test func concurrentIncrementsAreNotLost() async throws {
        let directory = try TemporaryDirectory()
        let database = try await StorageDatabase.fresh(in: directory)
        let other = try await StorageDatabase.open(at: database.path)
        #expect(try await database.meta.increment("ticks", by: 5) == 5)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for store in [database.meta, other.meta] {
                group.addTask {
                    for _ in 0..<100 { try await store.increment("ticks") }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await database.meta.integer("ticks") == 205)
    }
}
