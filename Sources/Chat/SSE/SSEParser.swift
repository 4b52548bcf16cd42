/// A server-sent events parser as a value-type state machine: bytes in, events out.
///
/// It follows the WHATWG "event stream interpretation" rules: one leading byte order mark is dropped; lines end
/// with CRLF, LF or CR; a line starting with `:` is a comment; `data:` lines are joined with line feeds; `event:`
/// sets the type, `id:` the last event id (unless it contains NUL) and `retry:` the reconnection time (digits
/// only); any other field is ignored; a blank line dispatches the event when it has data. Chunks may be cut
/// anywhere — inside a CRLF pair, a field name or a multi-byte UTF-8 character — because the parser keeps the
/// unfinished line and decodes text only once an event is complete. CR, LF and `:` never occur inside a UTF-8
/// multi-byte sequence, so splitting lines on bytes gives what decoding first would.
///
/// ```swift
/// var parser = SSEParser()
/// for try await chunk in body {
///     parser.parse(chunk) { event in handle(event) }
/// }
/// let incomplete = parser.finish()
/// ```
public struct SSEParser: Sendable {
    private static let lineFeed = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")
    private static let colon = UInt8(ascii: ":")
    private static let space = UInt8(ascii: " ")
    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The unfinished line carried over from earlier chunks.
    private var pendingLine: [UInt8] = []
    private var dataBuffer: [UInt8] = []
    private var eventTypeBuffer: [UInt8] = []
    /// The previous chunk ended in CR, so an LF opening this one belongs to the same line break.
    private var lastChunkEndedInCR = false
    /// How many bytes of a byte order mark the stream has started with; nil once past the start.
    private var byteOrderMarkMatched: Int? = 0

    /// The id that the next dispatched event will carry, set by `id:` fields.
    public private(set) var lastEventID = ""
    /// The reconnection time in milliseconds from the last valid `retry:` field, if any.
    public private(set) var reconnectionTime: Int?
    /// How many comment lines (`:` first) the stream held, e.g. keep-alives such as OpenRouter's.
    public private(set) var commentCount = 0
    /// How many events were dispatched.
    public private(set) var eventCount = 0

    /// Creates a parser at the start of a stream.
    public init() {}

    /// Feeds the next chunk of the stream and calls `handler` with each event it completes, in order.
    public mutating func parse(
        _ chunk: some Collection<UInt8>, _ handler: (ServerSentEvent) throws -> Void
    ) rethrows {
        let direct: Void? = try chunk.withContiguousStorageIfAvailable { buffer in
            try parse(buffer: buffer, handler)
        }
        if direct == nil {
            try Array(chunk).withUnsafeBufferPointer { buffer in
                try parse(buffer: buffer, handler)
            }
        }
    }

    /// Feeds the next chunk of the stream and returns the events it completes.
    public mutating func parse(_ chunk: some Collection<UInt8>) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        parse(chunk) { events.append($0) }
        return events
    }

    /// Ends the stream. An event that was not closed by a blank line is discarded, as the standard says; the
    /// result tells whether there was one (or an unfinished line), which is how a cut-off stream shows.
    @discardableResult
    public mutating func finish() -> Bool {
        let incomplete = !pendingLine.isEmpty || !dataBuffer.isEmpty || !eventTypeBuffer.isEmpty
        pendingLine.removeAll()
        dataBuffer.removeAll()
        eventTypeBuffer.removeAll()
        lastChunkEndedInCR = false
        return incomplete
    }

    private mutating func parse(
        buffer: UnsafeBufferPointer<UInt8>, _ handler: (ServerSentEvent) throws -> Void
    ) rethrows {
        var index = 0
        let end = buffer.count
        if let matched = byteOrderMarkMatched {
            index = skipByteOrderMark(buffer, alreadyMatched: matched)
        }
        if lastChunkEndedInCR, index < end {
            lastChunkEndedInCR = false
            if buffer[index] == Self.lineFeed {
                index += 1
            }
        }
        var lineStart = index
        while index < end {
            let byte = buffer[index]
            // Most bytes are neither CR nor LF; one comparison against the larger of the two rules them out.
            if byte > Self.carriageReturn || (byte != Self.lineFeed && byte != Self.carriageReturn) {
                index += 1
                continue
            }
            if pendingLine.isEmpty {
                try processLine(UnsafeBufferPointer(rebasing: buffer[lineStart..<index]), handler)
            } else {
                pendingLine.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[lineStart..<index]))
                let line = pendingLine
                pendingLine.removeAll(keepingCapacity: true)
                try line.withUnsafeBufferPointer { line in try processLine(line, handler) }
            }
            if byte == Self.carriageReturn {
                if index + 1 < end {
                    if buffer[index + 1] == Self.lineFeed {
                        index += 1
                    }
                } else {
                    lastChunkEndedInCR = true
                }
            }
            index += 1
            lineStart = index
        }
        if lineStart < end {
            pendingLine.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[lineStart..<end]))
        }
    }

    /// Consumes the part of a leading byte order mark that this chunk holds and returns where content starts.
    private mutating func skipByteOrderMark(_ buffer: UnsafeBufferPointer<UInt8>, alreadyMatched: Int) -> Int {
        var matched = alreadyMatched
        var index = 0
        while matched < Self.byteOrderMark.count, index < buffer.count {
            guard buffer[index] == Self.byteOrderMark[matched] else {
                // Not a mark after all: the bytes held back are content and open the first line.
                pendingLine.append(contentsOf: Self.byteOrderMark[..<matched])
                byteOrderMarkMatched = nil
                return index
            }
            matched += 1
            index += 1
        }
        byteOrderMarkMatched = matched == Self.byteOrderMark.count ? nil : matched
        return index
    }

    private mutating func processLine(
        _ line: UnsafeBufferPointer<UInt8>, _ handler: (ServerSentEvent) throws -> Void
    ) rethrows {
        guard let first = line.first else {
            try dispatch(handler)
            return
        }
        if first == Self.colon {
            commentCount += 1
            return
        }
        let colon = line.firstIndex(of: Self.colon) ?? line.endIndex
        let name = UnsafeBufferPointer(rebasing: line[..<colon])
        var valueStart = colon == line.endIndex ? colon : colon + 1
        if valueStart < line.endIndex, line[valueStart] == Self.space {
            valueStart += 1
        }
        let value = UnsafeBufferPointer(rebasing: line[valueStart...])
        switch name.count {
        case 4 where name.elementsEqual("data".utf8):
            dataBuffer.append(contentsOf: value)
            dataBuffer.append(Self.lineFeed)
        case 5 where name.elementsEqual("event".utf8):
            eventTypeBuffer.removeAll(keepingCapacity: true)
            eventTypeBuffer.append(contentsOf: value)
        case 2 where name.elementsEqual("id".utf8):
            if !value.contains(0) {
                lastEventID = String(decoding: value, as: UTF8.self)
            }
        case 5 where name.elementsEqual("retry".utf8):
            if !value.isEmpty, value.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                let milliseconds = Int(String(decoding: value, as: UTF8.self))
            {
                reconnectionTime = milliseconds
            }
        default:
            break
        }
    }

    private mutating func dispatch(_ handler: (ServerSentEvent) throws -> Void) rethrows {
        guard !dataBuffer.isEmpty else {
            eventTypeBuffer.removeAll(keepingCapacity: true)
            return
        }
        dataBuffer.removeLast()
        let type = eventTypeBuffer.isEmpty ? "message" : String(decoding: eventTypeBuffer, as: UTF8.self)
        let event = ServerSentEvent(type: type, dataBytes: dataBuffer, lastEventID: lastEventID)
        dataBuffer.removeAll(keepingCapacity: true)
        eventTypeBuffer.removeAll(keepingCapacity: true)
        eventCount += 1
        try handler(event)
    }
}
