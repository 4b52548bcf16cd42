/// A page of stored spans as `trace push` reads them: the OTLP protobuf encodings stored with them, back to
/// back in one buffer, so that a push copies bytes instead of decoding and encoding every span again.
///
/// Spans of hostscope's own export requests are not in it (when they were stored with their encoding; older
/// ones come as JSON like every older span, and the reader tells them apart).
public struct OTLPSpanPage: Sendable {
    /// The fields of the page's stored `Span` messages, one after the other.
    public var spanBytes: [UInt8] = []
    /// The distinct stored `Resource` messages (their fields) of the page's spans, in order of first appearance.
    public var resources: [[UInt8]] = []
    /// The page's spans, oldest first.
    public var entries: [Entry] = []
    /// Where the next page starts; `nil` after the last.
    public var next: SpanCursor?

    /// One span of a page.
    public enum Entry: Sendable, Equatable {
        /// A span stored with its encoding: where its `Span` message lies in ``spanBytes``, and the index of its
        /// resource in ``resources``.
        case encoded(Range<Int>, resource: Int)
        /// A span stored without one, by a hostscope before encodings were kept: its flat JSON.
        case flat(String)
    }

    public init() {}
}
