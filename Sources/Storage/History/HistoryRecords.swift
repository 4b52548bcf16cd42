/// The records of a history query, oldest first, fetched a page at a time as they are iterated.
public struct HistoryRecords: AsyncSequence, Sendable {
    public typealias Element = StoredRecord
    public typealias Failure = StorageError

    let store: HistoryStore
    let query: HistoryQuery
    let pageSize: Int

    /// An iterator that reads the first page when first asked for a record.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(store: store, query: query, pageSize: pageSize)
    }

    /// Holds one page and where the next one starts.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let store: HistoryStore
        let query: HistoryQuery
        let pageSize: Int
        private var buffer: [StoredRecord] = []
        private var index = 0
        private var cursor: HistoryCursor?
        private var exhausted = false

        init(store: HistoryStore, query: HistoryQuery, pageSize: Int) {
            self.store = store
            self.query = query
            self.pageSize = pageSize
        }

        /// The next record, reading the next page when this one is used up.
        public mutating func next() async throws(StorageError) -> StoredRecord? {
            if index == buffer.count {
                guard !exhausted else { return nil }
                let page = try await store.page(query, after: cursor, limit: pageSize)
                buffer = page.records
                index = 0
                cursor = page.next
                exhausted = page.next == nil
                guard !buffer.isEmpty else { return nil }
            }
            defer { index += 1 }
            return buffer[index]
        }
    }
}
