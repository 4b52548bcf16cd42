/// One event dispatched from a `text/event-stream` body, as the WHATWG HTML standard defines it.
///
/// The data is kept as UTF-8 bytes because every provider hands it straight to a JSON parser; ``data``
/// decodes it for people and tests.
public struct ServerSentEvent: Sendable, Hashable, CustomStringConvertible {
    /// The event type: the last `event:` field of the event, or `message` when it had none.
    public var type: String
    /// The `data:` lines of the event joined with line feeds, as UTF-8.
    public var dataBytes: [UInt8]
    /// The last event id seen on the stream so far (`id:` fields persist across events).
    public var lastEventID: String

    /// Creates an event.
    public init(type: String = "message", data: String, lastEventID: String = "") {
        self.type = type
        self.dataBytes = Array(data.utf8)
        self.lastEventID = lastEventID
    }

    /// Creates an event from data bytes already in UTF-8.
    public init(type: String = "message", dataBytes: [UInt8], lastEventID: String = "") {
        self.type = type
        self.dataBytes = dataBytes
        self.lastEventID = lastEventID
    }

    /// The data as text, invalid UTF-8 replaced by U+FFFD as the standard's decoder does.
    public var data: String { String(decoding: dataBytes, as: UTF8.self) }

    /// Whether the data is exactly `[DONE]`, the end-of-stream sentinel of OpenAI-style streams.
    public var isDoneSentinel: Bool { dataBytes.elementsEqual(Self.doneSentinel) }

    private static let doneSentinel: [UInt8] = Array("[DONE]".utf8)

    /// `event: TYPE data: DATA`, for test failures and debugging.
    public var description: String { "event: \(type) data: \(data)" }
}
