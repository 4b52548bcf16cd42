/// Per-span bounds that, with the ring's capacity, bound the tracer's memory.
///
/// What exceeds a count limit is dropped and counted (`droppedAttributeCount` and friends, exported
/// as OTLP's `dropped*Count`); a string longer than ``maximumStringBytes`` keeps its first bytes and
/// ends with ``truncationMarker(droppedBytes:)``.
public struct SpanLimits: Sendable, Equatable {
    /// Attributes per span.
    public var maximumAttributes: Int
    /// Events per span.
    public var maximumEvents: Int
    /// Links per span.
    public var maximumLinks: Int
    /// Attributes per event or link.
    public var maximumAttributesPerEvent: Int
    /// UTF-8 bytes of one string value (or one element of a string array).
    public var maximumStringBytes: Int

    public init(
        maximumAttributes: Int = 128, maximumEvents: Int = 128, maximumLinks: Int = 32,
        maximumAttributesPerEvent: Int = 32, maximumStringBytes: Int = 64 * 1024
    ) {
        self.maximumAttributes = maximumAttributes
        self.maximumEvents = maximumEvents
        self.maximumLinks = maximumLinks
        self.maximumAttributesPerEvent = maximumAttributesPerEvent
        self.maximumStringBytes = maximumStringBytes
    }

    /// What ends a truncated string, so a reader knows the value is incomplete and by how much.
    public static func truncationMarker(droppedBytes: Int) -> String {
        "…[truncated \(droppedBytes) bytes]"
    }

    /// The string cut to at most `maximumBytes` UTF-8 bytes (marker included) on a character boundary.
    public static func truncate(_ text: String, toBytes maximumBytes: Int) -> String {
        let count = text.utf8.count
        guard count > maximumBytes else { return text }
        // The marker's length depends on the number it prints; size it for the largest possible one.
        let markerBytes = truncationMarker(droppedBytes: count).utf8.count
        var keep = max(0, maximumBytes - markerBytes)
        let utf8 = Array(text.utf8)
        // Back off to the start of a UTF-8 sequence so the kept prefix is valid text.
        while keep > 0, keep < utf8.count, utf8[keep] & 0xC0 == 0x80 { keep -= 1 }
        return String(decoding: utf8[..<keep], as: UTF8.self) + truncationMarker(droppedBytes: count - keep)
    }
}
