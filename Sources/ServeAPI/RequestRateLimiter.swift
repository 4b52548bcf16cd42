/// Requests per client, as a token bucket per client address: a burst of `burst` requests, then
/// `ratePerSecond` on average. A value type driven with the time passed in, so tests need no clock.
///
/// At most ``maximumClients`` addresses are tracked; past that the one seen longest ago is
/// forgotten (it starts again with a full bucket), so a flood of addresses cannot grow memory.
public struct RequestRateLimiter: Sendable {
    public let ratePerSecond: Double
    public let burst: Double
    public static let maximumClients = 4096

    private struct Bucket {
        var tokens: Double
        var updated: Double
    }

    private var buckets: [String: Bucket] = [:]

    public init(ratePerSecond: Double, burst: Int) {
        self.ratePerSecond = max(0.001, ratePerSecond)
        self.burst = Double(max(1, burst))
    }

    /// Whether `client` may make a request at `now` (seconds on any monotonic clock); when not,
    /// how many whole seconds until it may.
    public mutating func admit(client: String, now: Double) -> (admitted: Bool, retryAfterSeconds: Int) {
        var bucket = buckets[client] ?? Bucket(tokens: burst, updated: now)
        bucket.tokens = min(burst, bucket.tokens + max(0, now - bucket.updated) * ratePerSecond)
        bucket.updated = now
        let admitted = bucket.tokens >= 1
        if admitted { bucket.tokens -= 1 }
        if buckets[client] == nil, buckets.count >= Self.maximumClients,
            let oldest = buckets.min(by: {
                $0.value.updated < $1.value.updated
            })
        {
            buckets.removeValue(forKey: oldest.key)
        }
        buckets[client] = bucket
        let wait = admitted ? 0 : Int(((1 - bucket.tokens) / ratePerSecond).rounded(.up))
        return (admitted, max(wait, admitted ? 0 : 1))
    }
}
