import GRDB

/// Small named values kept beside the data: counters (dropped spans), marks (last prune).
public struct MetaStore: Sendable {
    let database: StorageDatabase

    /// The value under `key` as text (an integer reads as its decimal digits).
    public func string(_ key: String) async throws(StorageError) -> String? {
        try await database.read { db in
            switch try Self.value(db, key: key)?.storage {
            case .int64(let number): String(number)
            case .double(let number): String(number)
            case .string(let text): text
            case .blob(let data): String(decoding: data, as: UTF8.self)
            case .null, nil: nil
            }
        }
    }

    /// The value under `key` as an integer, `nil` when missing or not a whole number.
    public func integer(_ key: String) async throws(StorageError) -> Int64? {
        try await database.read { db in
            switch try Self.value(db, key: key)?.storage {
            case .int64(let number): number
            case .double(let number): Int64(exactly: number)
            case .string(let text): Int64(text)
            default: nil
            }
        }
    }

    /// Stores `value` under `key`, replacing what was there.
    public func set(_ key: String, _ value: String) async throws(StorageError) {
        try await database.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", arguments: [key, value])
        }
    }

    /// Stores the integer `value` under `key`, replacing what was there.
    public func set(_ key: String, _ value: Int64) async throws(StorageError) {
        try await database.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", arguments: [key, value])
        }
    }

    /// Adds `amount` to the counter under `key` (a missing counter counts from 0) and returns the new total.
    @discardableResult
    public func increment(_ key: String, by amount: Int64 = 1) async throws(StorageError) -> Int64 {
        try await database.write { db in try Self.increment(db, key: key, by: amount) }
    }

    /// All keys, sorted.
    public func keys() async throws(StorageError) -> [String] {
        try await database.read { db in try String.fetchAll(db, sql: "SELECT key FROM meta ORDER BY key") }
    }

    @discardableResult
    static func increment(_ db: Database, key: String, by amount: Int64) throws -> Int64 {
        try Int64.fetchOne(
            db,
            sql: """
                INSERT INTO meta (key, value) VALUES (?, ?)
                ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + excluded.value
                RETURNING value
                """, arguments: [key, amount]) ?? amount
    }

    private static func value(_ db: Database, key: String) throws -> DatabaseValue? {
        try DatabaseValue.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [key])
    }
}
