import ValueFormats

/// W3C Trace Context (`traceparent`, `tracestate`) formatting and parsing.
///
/// Follows https://www.w3.org/TR/trace-context/ version 00: `00-<32 hex>-<16 hex>-<2 hex>`, lowercase only;
/// all-zero ids and version `ff` are invalid. Headers of a later version are read by their version-00
/// prefix, as the specification asks.
public enum TraceParent {
    /// The header carrying the trace and parent span ids.
    public static let headerName = "traceparent"
    /// The header carrying vendor state, passed through unchanged.
    public static let stateHeaderName = "tracestate"

    /// The `traceparent` value for a span context.
    public static func headerValue(for context: SpanContext) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(55)
        bytes.append(contentsOf: "00-".utf8)
        Hex.append(context.traceID.high, into: &bytes)
        Hex.append(context.traceID.low, into: &bytes)
        bytes.append(UInt8(ascii: "-"))
        Hex.append(context.spanID.rawValue, into: &bytes)
        bytes.append(UInt8(ascii: "-"))
        bytes.append(Hex.lowercaseDigits[Int(context.traceFlags >> 4)])
        bytes.append(Hex.lowercaseDigits[Int(context.traceFlags & 0x0F)])
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Reads a `traceparent` value (and an optional `tracestate`) into a remote span context;
    /// `nil` when the value is malformed, in which case a receiver starts a new trace.
    public static func parse(_ value: String, traceState: String? = nil) -> SpanContext? {
        let bytes = Array(value.utf8)
        let trimmed = bytes.drop(while: { $0 == 0x20 || $0 == 0x09 })
        let text = Array(trimmed.reversed().drop(while: { $0 == 0x20 || $0 == 0x09 }).reversed())
        guard text.count >= 55, text[2] == UInt8(ascii: "-"), text[35] == UInt8(ascii: "-"),
            text[52] == UInt8(ascii: "-"),
            let versionHigh = Hex.value(of: text[0], lowercaseOnly: true),
            let versionLow = Hex.value(of: text[1], lowercaseOnly: true)
        else { return nil }
        let version = versionHigh << 4 | versionLow
        guard version != 0xFF else { return nil }
        // Version 00 is exactly 55 characters; later versions may append "-…" fields.
        if version == 0 {
            guard text.count == 55 else { return nil }
        } else if text.count > 55, text[55] != UInt8(ascii: "-") {
            return nil
        }
        guard let high = Hex.parseUInt64(text[3..<19]), let low = Hex.parseUInt64(text[19..<35]),
            let traceID = TraceID(high: high, low: low),
            let span = Hex.parseUInt64(text[36..<52]), let spanID = SpanID(span),
            let flagsHigh = Hex.value(of: text[53], lowercaseOnly: true),
            let flagsLow = Hex.value(of: text[54], lowercaseOnly: true)
        else { return nil }
        return SpanContext(
            traceID: traceID, spanID: spanID, traceFlags: flagsHigh << 4 | flagsLow,
            traceState: traceState ?? "", isRemote: true)
    }
}
