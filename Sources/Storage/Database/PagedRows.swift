/// Rows of a query in order, fetched a page at a time as they are iterated: a long history or span table
/// is never held in memory whole, and each page is its own short read.
public struct PagedRows<Row: Sendable, Cursor: Sendable>: AsyncSequence, Sendable {
    public typealias Element = Row
    public typealias Failure = StorageError

    /// Reads the page after a cursor (from the start for `nil`): its rows, and where the next one starts
    /// (`nil` after the last).
    let fetch: @Sendable (Cursor?) async throws(StorageError) -> (rows: [Row], next: Cursor?)

    /// An iterator that reads the first page when first asked for a row.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(fetch: fetch)
    }

    /// Holds one page and where the next one starts.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let fetch: @Sendable (Cursor?) async throws(StorageError) -> (rows: [Row], next: Cursor?)
        private var buffer: [Row] = []
        private var index = 0
        private var cursor: Cursor?
        private var exhausted = false

        init(fetch: @escaping @Sendable (Cursor?) async throws(StorageError) -> (rows: [Row], next: Cursor?)) {
            self.fetch = fetch
        }

        /// The next row, reading the next page when this one is used up.
        public mutating func next() async throws(StorageError) -> Row? {
            while index == buffer.count {
                guard !exhausted else { return nil }
                let page = try await fetch(cursor)
                buffer = page.rows
                index = 0
                cursor = page.next
                exhausted = page.next == nil
            }
            defer { index += 1 }
            return buffer[index]
        }
    }
}
