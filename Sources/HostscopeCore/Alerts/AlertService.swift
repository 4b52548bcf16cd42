public import Foundation
public import Storage

/// `alerts`: the alerts a `watch` or `serve` keeps in the history database, read back.
public struct AlertService: Sendable {
    private let access: StoreAccess

    /// Reads the database of `settings`, opened for each call.
    public init(settings: CoreSettings) {
        access = StoreAccess(settings: settings) {
            "no alerts yet at \($0): run `hostscope watch --rules FILE` or `hostscope serve` first"
        }
    }

    /// Reads an open database (a long-running service's), which the caller closes.
    public init(database: StorageDatabase) {
        access = .shared(database)
    }

    /// The pending and firing alerts as last stored, by name, host and device.
    ///
    /// - Throws: ``CoreError``: `notFound` when there is no database yet; `failed` when it cannot be read.
    public func current() async throws(CoreError) -> [StoredAlert] {
        try await access.with { database throws(CoreError) in
            do throws(StorageError) {
                return try await database.alerts.current()
            } catch {
                throw CoreError(.failed, error.message)
            }
        }
    }

    /// The transitions since `since` (all when nil) of `host` (all when nil), oldest first, at most the newest
    /// `limit`.
    ///
    /// - Throws: ``CoreError`` as ``current()``.
    public func history(since: Date?, host: String?, limit: Int) async throws(CoreError) -> [StoredAlertTransition] {
        try await access.with { database throws(CoreError) in
            do throws(StorageError) {
                return try await database.alerts.transitions(since: since, host: host, limit: limit)
            } catch {
                throw CoreError(.failed, error.message)
            }
        }
    }
}
