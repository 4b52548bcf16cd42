public import AgentTracing
import Dispatch
import Foundation
public import HostStats
public import HostscopeCore
public import HostscopeMCP
import HostscopeWeb
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
public import Logging
import NIOCore
import NIOSSL
public import ServeAPI
import ServiceLifecycle
public import Storage
import Synchronization
import UnixSignals
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// `hostscope serve`: an HTTP server over a live fleet watch.
///
/// The server binds first; only once it listens does the watch start, so a port in use ends the
/// command before any host is contacted. SIGHUP reads the fleet again (hosts that stay keep their
/// sessions; a fleet that cannot be read leaves the old one in force); SIGTERM and SIGINT stop
/// accepting connections, end event streams, let requests in flight finish, stop the watch, and
/// return normally.
public enum HostscopeServer {
    /// Why `serve` could not run: one sentence saying what to do.
    public struct Failure: Error, Sendable {
        public var message: String
    }

    /// What the server runs over.
    public struct Parts: Sendable {
        public var definition: FleetDefinition
        public var fleet: ResolvedFleet
        /// Whether every host of the fleet is watched from the start; when not (`--on-demand`), a host
        /// is watched from its first `/probe`.
        public var watchesWholeFleet: Bool
        /// The core's watch of the fleet, not yet running: the server runs it once it listens.
        public var watch: FleetWatch
        public var board: FleetBoard
        public var database: StorageDatabase?
        /// The tracer whose finished spans become `span` events.
        public var tracer: RingBufferTracer?
        /// The MCP server of `/mcp` (its tools read this watch); `nil` leaves `/mcp` unanswered.
        public var mcp: MCPConfiguration?
        /// The alerts evaluated on every record (`/api/v1/alerts`, `alert` events, `hostscope_alert`), and the
        /// rules file SIGHUP reads again (`nil`: the shipped rules, which a reload keeps).
        public var alerts: AlertEngine?
        public var rulesPath: String?
        /// Chat over HTTP (`/api/v1/chat/…`); `nil` when serve has no chat provider, which those routes say.
        public var chat: ChatTurns?
        /// The files the dashboard may read (`--files-root`); `nil` allows none.
        public var files: ServedFiles?
        /// How long history records are kept (`nil`: for ever); pruned hourly.
        public var retention: Duration?
        /// The fleet file's `serve:` keys that a flag gave (`listen`, `rules`, …): a reload leaves them alone.
        public var serveFlags: Set<String> = []

        public init(
            definition: FleetDefinition, fleet: ResolvedFleet, watchesWholeFleet: Bool = true, watch: FleetWatch,
            board: FleetBoard,
            database: StorageDatabase?, tracer: RingBufferTracer?, mcp: MCPConfiguration? = nil
        ) {
            self.mcp = mcp
            self.definition = definition
            self.fleet = fleet
            self.watchesWholeFleet = watchesWholeFleet
            self.watch = watch
            self.board = board
            self.database = database
            self.tracer = tracer
        }
    }

    /// Serves until SIGTERM or SIGINT (or the task is cancelled); `listening` is called once the
    /// socket is bound, with the port (useful when port 0 was asked for).
    public static func run(
        configuration: ServeConfiguration, parts: Parts, logger: Logger,
        listening: @escaping @Sendable (Int) -> Void = { _ in }
    ) async throws(Failure) {
        // Descriptors first: the connection cap must leave room for SSH sessions and the database.
        let descriptors = DescriptorLimit.raise()
        let counter = ConnectionCounter(
            maximum: DescriptorLimit.connectionCap(configuration.maximumConnections, descriptors: descriptors),
            maximumPerAddress: configuration.maximumConnectionsPerAddress)
        let hostPolicy = HostPolicyBox(hostHeaderPolicy(configuration, port: configuration.listen.port))
        let requestGuard = GuardMiddleware(configuration: configuration)
        let server = try serverBuilder(configuration, counter: counter) {
            [WebAssetShortcut(hostPolicy: hostPolicy, requestGuard: requestGuard)]
        }
        // The page and assets compressed now, not while the first browser waits.
        _ = (WebAssets.page, WebAssets.assets)
        let holder = FleetHolder(parts.fleet)
        let probes = ProbeAdmissions(
            maximumHosts: configuration.maximumProbeHosts, minimumExpiry: parts.watch.plan.interval * 3)
        let mcp = parts.mcp.map { MCPHTTPEndpoint(configuration: $0) }
        let context = ServeContext(
            configuration: configuration, board: parts.board, watch: parts.watch, fleet: holder,
            database: parts.database, probes: probes, hostPolicy: hostPolicy, mcp: mcp, alerts: parts.alerts,
            chat: parts.chat, files: parts.files)
        let (bound, boundContinuation) = AsyncStream<Void>.makeStream()
        let app = Application(
            router: ServeRoutes.router(context, requestGuard: requestGuard), server: server,
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.listen.host, port: configuration.listen.port),
                serverName: "hostscope/\(configuration.version)"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? configuration.listen.port
                hostPolicy.setPort(port)
                // The one start-up line: where it listens, how, and what it watches.
                logger.info(
                    "listening",
                    metadata: [
                        "address": "\(configuration.listen.host):\(port)",
                        "tls": .stringConvertible(configuration.tls != nil),
                        "auth": .stringConvertible(configuration.token != nil),
                        "hosts": .stringConvertible(parts.watch.states.count),
                        "every": "\(DurationText.format(parts.watch.plan.interval))",
                        "descriptors": .stringConvertible(descriptors),
                        "max_connections": .stringConvertible(counter.maximum),
                        "max_connections_per_address": .stringConvertible(counter.maximumPerAddress),
                        "host_check": "\(hostPolicy.current.admitsAny ? "off" : "on")",
                    ])
                listening(port)
                boundContinuation.yield()
                boundContinuation.finish()
            },
            logger: logger)
        let fleetService = FleetService(
            parts: parts, holder: holder, probes: probes, bound: bound, logger: logger,
            live: LiveServeSettings(rulesPath: parts.rulesPath, retention: parts.retention))
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                // Shut down in reverse order: MCP sessions and the watch end before the listener stops.
                services: [
                    .init(service: app), .init(service: fleetService),
                    .init(service: MCPSessionsService(endpoint: mcp)),
                    .init(service: FilesSessionsService(files: parts.files)),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch {
            throw Failure(message: describe(error, listen: configuration.listen))
        }
    }

    /// A failure of the server as a sentence: a port in use or an address that cannot be bound says
    /// what to change.
    static func describe(_ error: any Error, listen: ListenAddress) -> String {
        let text = "\(error)"
        if let io = error as? IOError, io.errnoCode == EADDRINUSE || text.contains("Address already in use") {
            return
                "cannot listen on \(listen): the address is in use by another process; stop it or pass --listen with another port"
        }
        if text.contains("Address already in use") {
            return
                "cannot listen on \(listen): the address is in use by another process; stop it or pass --listen with another port"
        }
        if text.contains("Cannot assign requested address") || text.contains("EADDRNOTAVAIL") {
            return
                "cannot listen on \(listen): no interface of this machine has that address; pass --listen with one it has"
        }
        if text.contains("Permission denied") {
            return
                "cannot listen on \(listen): permission denied (ports below 1024 need privileges); pick a port above 1023"
        }
        return "the server stopped: \(ProcessSecrets.scrub(text))"
    }

    /// The `Host` policy of this listener (``HostHeaderPolicy``): loopback names everywhere; beyond
    /// loopback also the listen address, the name given to `--listen`, and the machine's names and addresses.
    static func hostHeaderPolicy(_ configuration: ServeConfiguration, port: Int) -> HostHeaderPolicy {
        var own: [String] = []
        if !configuration.listen.isLoopback {
            own =
                [configuration.listen.host] + (configuration.listenName.map { [$0] } ?? [])
                + ListenAddress.machineNames()
        }
        return HostHeaderPolicy(
            port: port, secure: configuration.tls != nil, ownNames: own, allowed: configuration.allowedHosts)
    }

    /// HTTP/1 (in TLS when configured) with the connection guards in front: the caps, the first request's
    /// deadline (the TLS handshake included), and Hummingbird's idle timeout for later requests.
    static func serverBuilder(
        _ configuration: ServeConfiguration, counter: ConnectionCounter,
        handlers: @escaping @Sendable () -> [any RemovableChannelHandler] = { [] }
    ) throws(Failure) -> HTTPServerBuilder {
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: handlers(), idleTimeout: timeAmount(configuration.idleTimeout))
        let headerTimeout = timeAmount(configuration.headerTimeout)
        guard let tls = configuration.tls else {
            return HTTPServerBuilder { responder in
                GuardedChannel(
                    base: HTTP1Channel(responder: responder, configuration: http1), counter: counter,
                    headerTimeout: headerTimeout)
            }
        }
        let tlsConfiguration = try tlsConfiguration(certificatePath: tls.certificatePath, keyPath: tls.keyPath)
        return HTTPServerBuilder { responder in
            GuardedChannel(
                base: try TLSChannel(
                    HTTP1Channel(responder: responder, configuration: http1), tlsConfiguration: tlsConfiguration),
                counter: counter, headerTimeout: headerTimeout)
        }
    }

    static func timeAmount(_ duration: Duration) -> TimeAmount {
        .milliseconds(Int64(max(1, duration.inMilliseconds.rounded(.up))))
    }

    /// The largest certificate chain read.
    static let maximumCertificateBytes = 1 << 20

    /// The TLS configuration of `--tls-cert` and `--tls-key`: both regular files (a FIFO is refused, never
    /// waited on), read once, the key private; a key that is not the certificate's says so, naming both.
    static func tlsConfiguration(certificatePath: String, keyPath: String) throws(Failure) -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do {
            let bytes = try OperatorFile.bytes(
                at: certificatePath, describedAs: "the TLS certificate", maximumBytes: maximumCertificateBytes)
            chain = try NIOSSLCertificate.fromPEMBytes(bytes)
        } catch let error as CoreError {
            throw Failure(message: error.message)
        } catch {
            throw Failure(
                message: "cannot read the TLS certificate \(certificatePath): it must be a PEM certificate chain")
        }
        guard !chain.isEmpty else {
            throw Failure(message: "the TLS certificate file \(certificatePath) holds no certificate")
        }
        let key: NIOSSLPrivateKey
        do {
            // A regular file, checked before it is read: a FIFO would wait for a writer.
            try OperatorFile.checkRegularFile(at: keyPath, describedAs: "the TLS key")
            let text = try PrivateFile.text(at: keyPath, describedAs: "the TLS key")
            key = try NIOSSLPrivateKey(bytes: Array(text.utf8), format: .pem)
        } catch let error as PrivateFileError {
            throw Failure(message: error.message)
        } catch let error as CoreError {
            throw Failure(message: error.message)
        } catch {
            throw Failure(message: "cannot read the TLS key \(keyPath): it must be an unencrypted PEM private key")
        }
        let tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        do {
            // What the server would do with them at its first connection, done now to report a mismatch.
            _ = try NIOSSLContext(configuration: tls)
        } catch {
            throw Failure(
                message: "the TLS key \(keyPath) is not the key of the certificate \(certificatePath) (or one of them "
                    + "cannot be used); give the key the certificate was made for: `openssl x509 -noout -pubkey -in "
                    + "\(certificatePath)` and `openssl pkey -pubout -in \(keyPath)` print the same key when they match"
            )
        }
        return tls
    }
}

/// The watch's side of the service group: starts the watch once the server listens, hands its
/// events to the board (and the record sink), turns finished spans into events, reloads the fleet
/// on SIGHUP, and on shutdown ends the event streams and stops the watch.
struct FleetService: Service {
    let parts: HostscopeServer.Parts
    let holder: FleetHolder
    let probes: ProbeAdmissions
    let bound: AsyncStream<Void>
    let logger: Logger
    /// The `serve:` settings a reload can change.
    let live: LiveServeSettings

    /// Events the board may lag behind before it resynchronizes: a few ticks of a large fleet.
    static let boardBacklog = 8192

    func run() async throws {
        // Nothing is contacted before the server is bound: a port in use ends the run first.
        for await _ in bound { break }
        try Task.checkCancellation()
        let watch = parts.watch
        let board = parts.board
        board.synchronize(watch.states)
        // Subscribed before the watch starts. Should the board fall behind, it reads `.missed` and takes the
        // watch's states anew (the history has a subscription of its own).
        let events = watch.subscribe(buffer: Self.boardBacklog)
        // SIGTERM or SIGINT stops the watch from the signal's own queue, before the service group's shutdown
        // reaches this service: a process busy with hundreds of hosts would otherwise go on ticking and
        // writing until its tasks get their turn (tens of seconds at 300 hosts on two cores).
        let halting = SignalWatcher { _ in watch.stop() }
        defer { halting.cancel() }
        let running = Task { await watch.run() }
        let consumer = Task {
            for await event in events {
                if case .missed(let count) = event {
                    logger.warning(
                        "the board missed events of the watch", metadata: ["events": .stringConvertible(count)])
                    board.synchronize(watch.states, announce: true)
                    continue
                }
                board.handle(event)
            }
        }
        let spans = Task { await forwardSpans() }
        let alerts = Task { await forwardAlerts() }
        let keepAlive = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: EventStream.keepAlive)
                board.events.ring()
            }
        }
        // Hosts added by probes and no longer probed stop being watched.
        let expiry = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                let expired = probes.expire(now: .now)
                guard !expired.isEmpty else { continue }
                watch.removeHosts(named: Set(expired))
                forgetAlerts(of: Set(expired))
                logger.info(
                    "stopped watching hosts no longer probed",
                    metadata: ["hosts": "\(expired.count)", "first": "\(expired[0])"])
            }
        }
        let pruning = Task { await pruneHourly() }
        let reloads = ReloadSignal {
            reload()
            await reloadRules()
        }
        // Until SIGTERM or SIGINT (or cancellation, which ends the wait by throwing).
        try? await gracefulShutdown()
        board.events.finish()
        reloads.stop()
        pruning.cancel()
        expiry.cancel()
        keepAlive.cancel()
        spans.cancel()
        alerts.cancel()
        // Cancelling the run closes every session; the subscription ends once its last events are read.
        running.cancel()
        await running.value
        await consumer.value
        logger.info("watch stopped")
    }

    /// Reads the fleet again; the hosts in both lists keep their sessions. A fleet that cannot be read
    /// leaves the one in force.
    func reload() {
        let watch = parts.watch
        do {
            let fleet = try parts.definition.resolve()
            applyServeSettings(ServeSettingsChange(from: holder.current, to: fleet))
            holder.replace(fleet)
            let before = Set(watch.hosts.map(\.displayName))
            // On demand, the hosts probed so far stay watched while the new fleet still admits them.
            let hosts =
                parts.watchesWholeFleet ? fleet.hosts : watch.hosts.compactMap { fleet.host(named: $0.displayName) }
            let after = Set(hosts.map(\.displayName))
            watch.replaceHosts(hosts, profiles: fleet.profiles)
            forgetAlerts(of: before.subtracting(after))
            logger.info(
                "reloaded the host list",
                metadata: [
                    "hosts": .stringConvertible(fleet.hosts.count),
                    "added": .stringConvertible(after.subtracting(before).count),
                    "removed": .stringConvertible(before.subtracting(after).count),
                ])
        } catch {
            logger.error(
                "reload failed; keeping the \(watch.states.count) hosts watched",
                metadata: ["reason": "\(error.message)"])
        }
    }

    /// Takes the `serve:` settings of a reloaded fleet file that a running server can take (the rules file,
    /// the history's retention) and says, one sentence each, which changed ones wait for a restart. A setting
    /// a flag gives is the flag's, whatever the file says.
    func applyServeSettings(_ change: ServeSettingsChange) {
        for key in change.changed where !parts.serveFlags.contains(key) {
            switch key {
            case "rules" where parts.alerts != nil:
                live.setRulesPath(change.rules)
            case "history.retain" where parts.database != nil:
                live.setRetention(change.retention)
                logger.info(
                    "history records are now kept \(change.retention.map { "for " + DurationText.format($0) } ?? "for ever")"
                )
                Task { await prune() }
            default:
                logger.warning(
                    "the fleet file's serve: \(key) changed; it is read at start only, so restart serve to apply it")
            }
        }
    }

    /// Prunes the history to the retention every hour, as long as serve runs.
    func pruneHourly() async {
        while !Task.isCancelled {
            await prune()
            try? await Task.sleep(for: .seconds(3600))
        }
    }

    /// Deletes the history records older than the retention, if there is one.
    func prune() async {
        guard let database = parts.database, let retention = live.retention else { return }
        _ = try? await database.history.prune(olderThan: Date() - retention.inSeconds)
    }

    /// Finished spans as `span` events, read from the tracer's ring once a second.
    func forwardSpans() async {
        guard let tracer = parts.tracer else { return }
        var cursor = AgentTracing.SpanCursor.start
        let encoder = FlatSpanEncoder()
        while !Task.isCancelled {
            let batch = tracer.finishedSpans(after: cursor, limit: 5000)
            cursor = batch.cursor
            for span in batch.spans { parts.board.events.append("span", data: encoder.string(span)) }
            try? await Task.sleep(for: .seconds(1))
        }
    }
}

/// The `serve:` settings a SIGHUP reload can change while serve runs.
final class LiveServeSettings: Sendable {
    private struct State {
        var rulesPath: String?
        var retention: Duration?
    }
    private let state: Lock<State>

    init(rulesPath: String?, retention: Duration?) {
        state = Lock(State(rulesPath: rulesPath, retention: retention))
    }

    /// The rules file read on reload (`nil`: the shipped rules).
    var rulesPath: String? { state.withLock { $0.rulesPath } }
    var retention: Duration? { state.withLock { $0.retention } }

    func setRulesPath(_ path: String?) { state.withLock { $0.rulesPath = path } }
    func setRetention(_ retention: Duration?) { state.withLock { $0.retention = retention } }
}
