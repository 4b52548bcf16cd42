/// Spans already in OTLP protobuf form, waiting to be put into requests by
/// ``OTLPProtobufEncoder/encodeCounted(_:droppedSpanCount:emit:)``: each span's `Span` message and the
/// `Resource` message of the process that recorded it.
///
/// `trace push` fills it with the encodings the database stored with each span
/// (``OTLPProtobufEncoder/encodedSpan(_:)``, ``OTLPProtobufEncoder/encodedResource(_:)``), so a push copies
/// bytes instead of decoding and encoding every span again; spans in memory are appended with
/// ``append(_:)``, which encodes them. The messages are held back to back in one buffer: appending a span
/// allocates nothing once the buffer has grown to the batch's size.
public struct OTLPEncodedSpans: Sendable {
    /// The fields of the spans' `Span` messages, one after the other.
    private(set) var bytes: [UInt8] = []
    /// The fields of the distinct `Resource` messages added, in the order they were added.
    private(set) var resources: [[UInt8]] = []
    /// Each span: where its message lies in ``bytes`` and the index of its resource in ``resources``.
    private(set) var spans: [Entry] = []
    /// The resource of the last span appended with ``append(_:)`` and its index, so that a run of spans of one
    /// process is encoded and looked up once.
    private var lastResource: (resource: TraceResource, index: Int)?

    struct Entry {
        var start: Int
        var end: Int
        var resource: Int
    }

    /// An empty batch with room for `spans` spans of about `bytesPerSpan` bytes each.
    public init(capacity spans: Int = 0, bytesPerSpan: Int = 640) {
        self.spans.reserveCapacity(spans)
        bytes.reserveCapacity(spans * bytesPerSpan)
    }

    /// How many spans the batch holds.
    public var count: Int { spans.count }

    /// Whether the batch holds no span.
    public var isEmpty: Bool { spans.isEmpty }

    /// Adds a resource given as the fields of its `Resource` message and returns its index for
    /// ``append(encodedSpan:resource:)``; a resource already added returns its earlier index.
    public mutating func addResource(_ fields: [UInt8]) -> Int {
        if let index = resources.lastIndex(of: fields) { return index }
        resources.append(fields)
        return resources.count - 1
    }

    /// Adds a span given as the fields of its `Span` message, recorded by the resource at `resource` (an index
    /// ``addResource(_:)`` returned).
    public mutating func append(encodedSpan fields: some Collection<UInt8>, resource: Int) {
        precondition(resources.indices.contains(resource), "resource \(resource) was not added")
        let start = bytes.count
        bytes.append(contentsOf: fields)
        spans.append(Entry(start: start, end: bytes.count, resource: resource))
    }

    /// Adds a span, encoding it and its resource.
    public mutating func append(_ span: FinishedSpan) {
        let resource: Int
        if let last = lastResource, last.resource == span.resource {
            resource = last.index
        } else {
            resource = addResource(OTLPProtobufEncoder.encodedResource(span.resource))
            lastResource = (span.resource, resource)
        }
        var writer = ProtobufWriter()
        swap(&writer.bytes, &bytes)
        let start = writer.bytes.count
        writer.span(span)
        swap(&writer.bytes, &bytes)
        spans.append(Entry(start: start, end: bytes.count, resource: resource))
    }

    /// Empties the batch, keeping its buffers' capacity for the next one.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        resources.removeAll(keepingCapacity: true)
        spans.removeAll(keepingCapacity: true)
        lastResource = nil
    }
}
