public import ServeAPI

/// How `serve` answers HTTP: where it listens, who may ask, and how much.
public struct ServeConfiguration: Sendable {
    /// The address bound: a name given to `--listen` is resolved first (``ListenAddress/resolved(using:)``).
    public var listen: ListenAddress
    /// The name given to `--listen`, when it was a name: `Host` headers may carry it.
    public var listenName: String?
    /// The token every request needs; `nil` only on loopback or with `--insecure-no-auth`.
    public var token: BearerToken?
    /// A PEM certificate chain and private key for HTTPS.
    public var tls: (certificatePath: String, keyPath: String)?
    /// Requests per second each client may make on average, after a burst of ``burst``. Requests that
    /// carry the token and requests that do not have budgets of their own; `/healthz` spends neither.
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
    /// `--allowed-hosts`: further `Host` header values answered (``HostHeaderPolicy``).
    public var allowedHosts: [HostHeaderPolicy.Allowed]
    /// How long a new connection has to finish its TLS handshake and send its first request's head.
    public var headerTimeout: Duration
    /// How long a connection may stay open with no request under way (keep-alive), and so also how long
    /// a later request's head may take.
    public var idleTimeout: Duration
    /// Connections open at once, in all; lowered at start to what the descriptor limit allows.
    public var maximumConnections: Int
    /// Connections open at once from one client address.
    public var maximumConnectionsPerAddress: Int

    public init(
        listen: ListenAddress = .standard, listenName: String? = nil, token: BearerToken? = nil,
        tls: (certificatePath: String, keyPath: String)? = nil, requestsPerSecond: Double = 100, burst: Int = 200,
        maximumTargetLength: Int = 4096, maximumEventClients: Int = 64, firstProbeWait: Duration = .seconds(10),
        version: String, allowedHosts: [HostHeaderPolicy.Allowed] = [], headerTimeout: Duration = .seconds(10),
        idleTimeout: Duration = .seconds(60), maximumConnections: Int = 1024, maximumConnectionsPerAddress: Int = 128
    ) {
        self.listen = listen
        self.listenName = listenName
        self.token = token
        self.tls = tls
        self.requestsPerSecond = requestsPerSecond
        self.burst = burst
        self.maximumTargetLength = maximumTargetLength
        self.maximumEventClients = maximumEventClients
        self.firstProbeWait = firstProbeWait
        self.version = version
        self.allowedHosts = allowedHosts
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
        self.maximumConnections = maximumConnections
        self.maximumConnectionsPerAddress = maximumConnectionsPerAddress
    }
}
