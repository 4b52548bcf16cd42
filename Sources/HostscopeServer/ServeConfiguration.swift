public import ServeAPI

/// How `serve` answers HTTP: where it listens, who may ask, and how much.
public struct ServeConfiguration: Sendable {
    public var listen: ListenAddress
    /// The token every request needs; `nil` only on loopback or with `--insecure-no-auth`.
    public var token: BearerToken?
    /// A PEM certificate chain and private key for HTTPS.
    public var tls: (certificatePath: String, keyPath: String)?
    /// Requests per second each client may make on average, after a burst of ``burst``.
    public var requestsPerSecond: Double
    public var burst: Int
    /// The longest request target (path and query) read, in bytes.
    public var maximumTargetLength: Int
    /// Event-stream clients served at once; more get 503.
    public var maximumEventClients: Int
    /// Event-stream clients served at once from one client address; more get 503.
    public var maximumEventClientsPerAddress: Int = 8
    /// Hosts that `/probe` may add through the fleet's patterns, watched at once (`--probe-max-hosts`);
    /// more are refused with 503 until idle ones expire.
    public var maximumProbeHosts: Int = 1000
    /// How long a `/probe` of a host not yet collected waits for its first record, at most (the scrape
    /// timeout Prometheus sends, less half a second, is used when shorter).
    public var firstProbeWait: Duration
    /// The version reported in `hostscope_build_info` and the `Server` header.
    public var version: String

    public init(
        listen: ListenAddress = .standard, token: BearerToken? = nil,
        tls: (certificatePath: String, keyPath: String)? = nil, requestsPerSecond: Double = 100, burst: Int = 200,
        maximumTargetLength: Int = 4096, maximumEventClients: Int = 64, firstProbeWait: Duration = .seconds(10),
        version: String
    ) {
        self.listen = listen
        self.token = token
        self.tls = tls
        self.requestsPerSecond = requestsPerSecond
        self.burst = burst
        self.maximumTargetLength = maximumTargetLength
        self.maximumEventClients = maximumEventClients
        self.firstProbeWait = firstProbeWait
        self.version = version
    }
}
