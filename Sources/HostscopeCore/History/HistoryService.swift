public import Foundation
public import Storage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `history`: the records `watch` stored, read back a page at a time.
public struct HistoryService: Sendable {
    private let access: StoreAccess
    /// When set, only these hosts are read (the hosts of a fleet file with some labels, `--label`).
    private var restriction: [String]?

    /// Reads the database of `settings`, opened for each call.
    public init(settings: CoreSettings) {
        access = StoreAccess(settings: settings) { "no history yet at \($0): run `hostscope watch` first" }
    }

    /// Reads an open database (a long-running service's), which the caller closes.
    public init(database: StorageDatabase) {
        access = .shared(database)
    }

    /// This service reading only the hosts called `names` (the hosts `--label` selects from a fleet file); a
    /// host argument then narrows them further.
    public func restricted(to names: [String]) -> HistoryService {
        var service = self
        service.restriction = names
        return service
    }

    /// The records of `host` (a name as watch stored it, a glob such as `db-*`, `all`, or `nil` for all)
    /// collected in [`since`, `until`], oldest first, handed to `page` at most `pageSize` at a time so that a
    /// long history is never held whole.
    ///
    /// - Throws: ``CoreError``: `notFound` when there is no database yet; `failed` when a named host or
    ///   pattern has no records (the sentence lists the hosts that do), or the database fails.
    public func read(
        host: String?, since: Date? = nil, until: Date? = nil, pageSize: Int = 500,
        _ page: ([StoredRecord]) async -> Void
    ) async throws(CoreError) {
        let filter = Self.filter(host, within: restriction)
        let query = HistoryQuery(hosts: filter, since: since, until: until)
        let path = access.path
        try await access.with { database throws(CoreError) in
            do {
                if filter != .all, try await database.history.count(HistoryQuery(hosts: filter)) == 0 {
                    throw CoreError(.failed, try await Self.unknownHost(host, filter: filter, in: database, path: path))
                }
                var cursor: HistoryCursor?
                repeat {
                    let next = try await database.history.page(query, after: cursor, limit: max(1, pageSize))
                    await page(next.records)
                    cursor = next.next
                } while cursor != nil
            } catch let error as CoreError {
                throw error
            } catch let error as StorageError {
                throw CoreError(.failed, error.message)
            } catch {
                throw CoreError(.failed, "\(error)")
            }
        }
    }

    /// The records of `host` (as ``read(host:since:until:pageSize:_:)`` selects them) summarised per host: the
    /// smallest, mean, largest and last of each figure, the samples and the errors. Memory stays bounded by the
    /// number of hosts, however long the range.
    ///
    /// - Throws: ``CoreError`` as ``read(host:since:until:pageSize:_:)``.
    public func summarize(host: String?, since: Date? = nil, until: Date? = nil) async throws(CoreError)
        -> HistorySummary
    {
        var hosts: [String: HostHistorySummary] = [:]
        var unreadable = 0
        try await read(host: host, since: since, until: until) { page in
            for stored in page {
                guard let record = try? stored.record() else {
                    unreadable += 1
                    continue
                }
                hosts[stored.host, default: HostHistorySummary(host: stored.host)].add(record)
            }
        }
        return HistorySummary(hosts: hosts.values.sorted { $0.host < $1.host }, unreadable: unreadable)
    }

    /// The records of `host` (as ``read(host:since:until:pageSize:_:)`` selects them) rolled up into steps of
    /// `length` per host, handed to `steps` as they complete (a page at a time); returns how many stored records
    /// could not be read and were left out. Memory stays bounded by the number of hosts.
    ///
    /// - Throws: ``CoreError`` as ``read(host:since:until:pageSize:_:)``.
    public func steps(
        host: String?, since: Date? = nil, until: Date? = nil, length: Duration, pageSize: Int = 500,
        _ steps: ([HistoryStep]) async -> Void
    ) async throws(CoreError) -> Int {
        var stepper = HistoryStepper(length: length)
        var unreadable = 0
        try await read(host: host, since: since, until: until, pageSize: pageSize) { page in
            var completed: [HistoryStep] = []
            for stored in page {
                guard let record = try? stored.record() else {
                    unreadable += 1
                    continue
                }
                if let step = stepper.add(record) { completed.append(step) }
            }
            if !completed.isEmpty { await steps(completed) }
        }
        let rest = stepper.finish()
        if !rest.isEmpty { await steps(rest) }
        return unreadable
    }

    /// Every host with history, with its first and last record.
    public func hosts() async throws(CoreError) -> [HostSummary] {
        try await access.with { database throws(CoreError) in
            do {
                return try await database.history.hosts()
            } catch {
                throw CoreError(.failed, (error as? StorageError)?.message ?? "\(error)")
            }
        }
    }

    /// The hosts `host` selects, within `restriction` when there is one.
    static func filter(_ host: String?, within restriction: [String]?) -> HostFilter {
        let filter = HostFilter(argument: host)
        guard let restriction else { return filter }
        switch filter {
        case .all: return .exact(restriction)
        case .exact(let names): return .exact(names.filter(restriction.contains))
        case .pattern(let pattern):
            return .exact(restriction.filter { fnmatch(pattern, $0, 0) == 0 })
        }
    }

    private static func unknownHost(
        _ host: String?, filter: HostFilter, in database: StorageDatabase, path: String
    ) async throws(StorageError) -> String {
        let known = try await database.history.hosts().map(\.host)
        var subject = "no history for \(host ?? "")"
        if case .pattern(let pattern) = filter { subject = "no host matching '\(pattern)'" }
        guard !known.isEmpty else { return "\(subject) at \(path): the database holds no records yet" }
        let listed = known.prefix(20).joined(separator: ", ") + (known.count > 20 ? ", …" : "")
        return "\(subject) at \(path); hosts with history: \(listed)"
    }
}
