import ValueFormats

/// How long a request may take, phase by phase.
///
/// `connect` covers name resolution, the TCP connect and the TLS handshake. `idle` is the longest silence
/// allowed once connected — while waiting for the response head and between body bytes — so a streamed body
/// may run for as long as it keeps sending. `total` bounds the whole exchange. While a streamed body is paused
/// because its reader is slower than the server, the idle clock is stopped.
public struct HTTPTimeouts: Sendable, Hashable {
    /// The longest time to get a usable connection.
    public var connect: Duration
    /// The longest silence from the server once connected; `nil` waits for ever.
    public var idle: Duration?
    /// The longest time for the whole request, body included; `nil` sets no bound.
    public var total: Duration?

    /// Creates timeouts; the defaults suit an API call: 10 s to connect, 60 s of silence, no total bound.
    public init(connect: Duration = .seconds(10), idle: Duration? = .seconds(60), total: Duration? = nil) {
        self.connect = connect
        self.idle = idle
        self.total = total
    }
}

extension Duration {
    /// A short human form for messages: `250 ms`, `1.5 s`, `90 s`.
    var humanReadable: String {
        let millis = roundedUpMilliseconds
        if millis < 1000 {
            return "\(millis) ms"
        }
        if millis % 1000 == 0 {
            return "\(millis / 1000) s"
        }
        return "\(millis / 1000).\(millis % 1000 / 100) s"
    }
}
