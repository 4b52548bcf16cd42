import Foundation

/// Spans of a time range, oldest first, fetched a page at a time as they are iterated.
public struct StoredSpans: AsyncSequence, Sendable {
    public typealias Element = StoredSpan
    public typealias Failure = StorageError

    let store: SpanStore
    let since: Date?
    let until: Date?
    let pageSize: Int

    /// An iterator that reads the first page when first asked for a span.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(sequence: self)
    }

    /// Holds one page and where the next one starts.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let sequence: StoredSpans
        private var buffer: [StoredSpan] = []
        private var index = 0
        private var cursor: SpanCursor?
        private var exhausted = false

        init(sequence: StoredSpans) {
            self.sequence = sequence
        }

        /// The next span, reading the next page when this one is used up.
        public mutating func next() async throws(StorageError) -> StoredSpan? {
            if index == buffer.count {
                guard !exhausted else { return nil }
                let page = try await sequence.store.page(
                    since: sequence.since, until: sequence.until, after: cursor, limit: sequence.pageSize)
                buffer = page.spans
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
