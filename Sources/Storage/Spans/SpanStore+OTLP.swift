public import Foundation
import GRDB

#if canImport(Glibc)
    import Glibc
#endif

extension SpanStore {
    /// Up to `limit` spans that started in [`since`, `until`], oldest first, after `cursor`, as a push reads
    /// them (``OTLPSpanPage``): stored encodings copied into one buffer, no JSON read unless a span has none.
    public func otlpPage(
        since: Date? = nil, until: Date? = nil, after cursor: SpanCursor? = nil, limit: Int
    ) async throws(StorageError) -> OTLPSpanPage {
        try checkPageLimit(limit)
        return try await database.read { db in
            var (conditions, arguments) = Self.rangeConditions(since: since, until: until, after: cursor)
            conditions.insert("export_request = 0", at: 0)
            arguments += [limit]
            let statement = try db.cachedStatement(
                sql: """
                    SELECT id, start_unix_nano, otlp_span, otlp_resource, json FROM span
                    WHERE \(conditions.joined(separator: " AND ")) ORDER BY start_unix_nano, id LIMIT ?
                    """)
            var page = OTLPSpanPage()
            page.entries.reserveCapacity(limit)
            page.spanBytes.reserveCapacity(limit * 640)
            var rows = 0
            var last: (id: Int64, start: Int64) = (0, 0)
            let cursor = try Row.fetchCursor(statement, arguments: arguments)
            while let row = try cursor.next() {
                rows += 1
                last = (row[0], row[1])
                if let entry = try Self.encodedEntry(row, into: &page) {
                    page.entries.append(entry)
                } else {
                    page.entries.append(.flat(row[4]))
                }
            }
            if rows == limit { page.next = SpanCursor(startUnixNano: last.start, id: last.id) }
            return page
        }
    }

    /// Copies the row's stored encoding into the page and says where it went; `nil` when the row has none.
    /// The row's blobs are read in place, without a copy of their own.
    private static func encodedEntry(_ row: Row, into page: inout OTLPSpanPage) throws -> OTLPSpanPage.Entry? {
        let start = page.spanBytes.count
        let copied = try row.withUnsafeData(atIndex: 2) { data -> Bool in
            guard let data, !data.isEmpty else { return false }
            data.withUnsafeBytes { page.spanBytes.append(contentsOf: $0) }
            return true
        }
        guard copied else { return nil }
        let resource = try row.withUnsafeData(atIndex: 3) { data -> Int? in
            guard let data, !data.isEmpty else { return nil }
            return data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Int in
                // Nearly every span of a page has the resource of the one before.
                for index in page.resources.indices.reversed() where Self.equal(page.resources[index], bytes) {
                    return index
                }
                page.resources.append(Array(bytes))
                return page.resources.count - 1
            }
        }
        guard let resource else {
            page.spanBytes.removeSubrange(start...)
            return nil
        }
        return .encoded(start..<page.spanBytes.count, resource: resource)
    }

    private static func equal(_ stored: [UInt8], _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard stored.count == bytes.count else { return false }
        return stored.withUnsafeBytes { memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }
    }
}
