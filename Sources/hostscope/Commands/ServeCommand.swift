import AgentTracing
import ArgumentParser
import FleetConfig
import Foundation
import HostStats
import HostscopeCore
import HostscopeMCP
import HostscopeServer
import Logging
import ServeAPI
import Storage
import TerminalUI
import ValueFormats

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Watch hosts continuously and serve their figures over HTTP (Prometheus, JSON API, events).",
        discussion: """
            Watches the hosts as `watch` does (each every --every at its own phase, one record per tick, \
            the history database kept) and serves on --listen (default 127.0.0.1:9464):

              /metrics            every host: node_exporter's names, instance=HOST
              /probe?target=HOST  one host of the fleet (multi-target exporter pattern)
              /api/v1/...         hosts, history, spans, alerts, files, chat; events (SSE)
              /healthz, /readyz   liveness; readiness (every host has a record)

            Listening on an address other than loopback (a name is judged by the address it resolves to) \
            needs --token-file (a file of mode 0600 whose first line is the bearer token clients send, 32 \
            characters or more) or an explicit --insecure-no-auth. Only requests whose Host header names this \
            server are answered (loopback names; beyond loopback also its address and names; --allowed-hosts). --tls-cert \
            and --tls-key serve HTTPS. Nothing is ever written to a host.

            --fleet FILE (docs/fleet.md) gives groups of hosts with labels and settings, and serve's own \
            settings (listen, token file, TLS, history, OTLP, rules, Alertmanager); a flag given wins over \
            the file. Its labels are target labels of every /metrics and /probe series, fields of \
            /api/v1/hosts and resource attributes of OTLP metrics.

            SIGHUP reads the hosts file, the fleet file and ssh_config again: hosts that stay keep their sessions, new \
            ones start, removed ones stop; a file that cannot be read leaves the current list in force. \
            SIGTERM or Ctrl-C stops accepting requests, ends event streams, stops the watch and exits 0. \
            Logs are JSON lines on stderr.
            """)

    @Argument(help: "Hosts or ~/.ssh/config patterns to watch.", completion: Completions.host)
    var hosts: [String] = []

    @OptionGroup var sources: HostSourceOptions

    @Option(help: ArgumentHelp("Collection interval of each host (default: 15s).", valueName: "duration"))
    var every: DurationArgument?

    @Option(
        help: ArgumentHelp(
            "Address and port to listen on (default: \(ListenAddress.standard.description)).", valueName: "host:port"))
    var listen: String?

    @Option(
        name: .customLong("token-file"),
        help: ArgumentHelp(
            "File (mode 0600) whose first line is the bearer token every request must send.", valueName: "file"))
    var tokenFile: String?

    @Flag(
        name: .customLong("insecure-no-auth"),
        help: "Listen beyond loopback without a token (anyone who can reach the port reads every host's figures).")
    var insecureNoAuth = false

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("PEM certificate chain for HTTPS.", valueName: "file"))
    var tlsCertificate: String?

    @Option(
        name: .customLong("tls-key"), help: ArgumentHelp("PEM private key (mode 0600) for HTTPS.", valueName: "file"))
    var tlsKey: String?

    @Option(
        name: .customLong("rate-limit"),
        help: ArgumentHelp(
            "Requests per second each client address may make on average (bursts of twice as many).", valueName: "n"))
    var rateLimit: Double = 100

    @Option(
        name: .customLong("probe-max-hosts"),
        help: ArgumentHelp(
            "Hosts that /probe may add through the fleet's patterns, watched at once (0: none); each stops being "
                + "watched once it is not probed for three times the interval between its probes.",
            valueName: "n"))
    var probeMaxHosts: Int = 1000

    @Option(
        name: .customLong("allowed-hosts"),
        help: ArgumentHelp(
            "A further Host header value to answer (a name, name:port, or * for any: no Host check); repeatable.",
            valueName: "host"))
    var allowedHosts: [String] = []

    @Option(
        name: .customLong("header-timeout"),
        help: ArgumentHelp(
            "Time a new connection has for its TLS handshake and its first request's headers.", valueName: "duration"))
    var headerTimeout: DurationArgument = DurationArgument(.seconds(10))

    @Option(
        name: .customLong("idle-timeout"),
        help: ArgumentHelp("Time a connection may stay open between requests.", valueName: "duration"))
    var idleTimeout: DurationArgument = DurationArgument(.seconds(60))

    @Option(
        name: .customLong("max-connections"),
        help: ArgumentHelp("Connections open at once, in all.", valueName: "n"))
    var maxConnections: Int = 1024

    @Option(
        name: .customLong("max-connections-per-address"),
        help: ArgumentHelp("Connections open at once from one client address.", valueName: "n"))
    var maxConnectionsPerAddress: Int = 128

    @Flag(
        name: .customLong("on-demand"),
        help:
            "Watch a host only from its first /probe (for sharding: Prometheus chooses which serve watches which host)."
    )
    var onDemand = false

    @Option(
        name: .customLong("files-root"),
        help: ArgumentHelp(
            "A directory of the hosts whose files the dashboard may read (read-only, nothing outside it); "
                + "repeatable. None by default: the Files screen and /api/v1/files refuse every path.",
            valueName: "path"))
    var filesRoots: [String] = []

    @OptionGroup var watchOptions: WatchOptions

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var tracing: TracingOptions

    @OptionGroup(title: "Chat over HTTP") var chat: ServeChatOptions

    private var database: String? { watchOptions.database }
    private var noHistory: Bool { watchOptions.noHistory }
    private var retain: DurationArgument? { watchOptions.retain }

    func validate() throws {
        if let every, every.duration < .milliseconds(100) {
            throw ValidationError("--every \(DurationText.format(every.duration)) is too short; use 100ms or more.")
        }
        if let listen, ListenAddress(listen) == nil {
            throw ValidationError("--listen \(listen) is not HOST:PORT; for example 127.0.0.1:9464 or [::1]:9464.")
        }
        guard (tlsCertificate == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together; give both or neither.")
        }
        guard rateLimit > 0, rateLimit.isFinite else { throw ValidationError("--rate-limit must be above 0.") }
        guard probeMaxHosts >= 0 else {
            throw ValidationError("--probe-max-hosts must be 0 or more (0: patterns admit no host on request).")
        }
        for value in allowedHosts where HostHeaderPolicy.Allowed(value) == nil {
            throw ValidationError(
                "--allowed-hosts \(value) is not a host name, name:port, [IPv6]:port or *; for example monitor.example.com."
            )
        }
        for (name, duration) in [("--header-timeout", headerTimeout), ("--idle-timeout", idleTimeout)] {
            guard duration.duration >= .milliseconds(100), duration.duration <= .seconds(86400) else {
                throw ValidationError("\(name) \(DurationText.format(duration.duration)) must be from 100ms to 24h.")
            }
        }
        for (name, count) in [
            ("--max-connections", maxConnections), ("--max-connections-per-address", maxConnectionsPerAddress),
        ]
        where count < 1 || count > 1_000_000 {
            throw ValidationError("\(name) \(count) must be from 1 to 1000000.")
        }
        for root in filesRoots where !root.hasPrefix("/") {
            throw ValidationError(
                "--files-root \(root) is not an absolute path; name the hosts' directory from /, as /var/log.")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError(
                "--log-level \(logLevel) is not one of trace, debug, info, notice, warning, error, critical.")
        }
    }

    /// Serves, with the fleet file's settings filled in where no flag gave them (``withFleetFile(_:)``).
    /// `flagged` names the fleet file's `serve:` keys a flag gave, which a reload leaves alone.
    func runResolved(fleetFile: FleetFile?, flagged: Set<String> = []) async throws {
        guard let given = ListenAddress(listen ?? ListenAddress.standard.description) else {
            throw Output.fail(
                "listen: \(listen ?? "") in \(fleetFile?.path ?? "the fleet file") is not HOST:PORT; for example "
                    + "127.0.0.1:9464 or [::1]:9464", .usage)
        }
        // A name is resolved once, here: the address bound is the one judged loopback or not.
        guard let address = given.resolved() else {
            throw Output.fail(
                "cannot listen on \(given): the name \(given.host) resolves to no address here; pass --listen with an "
                    + "address, or a name this machine resolves", .usage)
        }
        let token = try readToken(listening: address)
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = JSONLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "hostscope.serve")
        // The core's remarks become log lines: stderr carries nothing else.
        var remarks = Diagnostics(
            warning: { logger.warning("\($0)") }, error: { logger.error("\($0)") }, note: { logger.notice("\($0)") })
        // -v asks for each connection step: info lines, which the default --log-level shows without the libraries'
        // own debug lines.
        if connection.verbose {
            remarks.debug = { message in logger.info(Logger.Message(stringLiteral: message)) }
        }
        let diagnostics = remarks
        var connectionSettings = connection.settings(attended: false)
        connectionSettings.debug = diagnostics.debug

        // A rules file that does not read stops serve before anything is contacted.
        let rules = try watchOptions.alertRules()
        let receivers = try watchOptions.alertReceivers()
        var definition = FleetDefinition(
            arguments: hosts, hostsFile: sources.hostsFile, fleetFile: sources.fleet.fleetFile,
            settings: connectionSettings)
        definition.labels = try sources.fleet.selector()
        definition.flags = watchOptions.flags(interval: every != nil)
        let fleet: ResolvedFleet
        do {
            fleet = try definition.resolve()
        } catch {
            throw Output.fail(error.message, .usage)
        }

        var settings = try CoreSettings.command(
            database: watchOptions.database, storesHistory: !watchOptions.noHistory, connection: connectionSettings,
            tracing: tracing, signals: [.traces, .metrics])
        settings.diagnostics = diagnostics
        let chatTurns = try chat.turns(settings: settings)

        let retention = watchOptions.retain?.duration
        var history: StorageDatabase?
        if settings.storesHistory {
            do {
                let opened = try await StorageDatabase.open(at: settings.databasePath)
                opened.accessNotes.forEach(diagnostics.note)
                history = opened
                if let retention { _ = try await opened.history.prune(olderThan: Date() - retention.inSeconds) }
            } catch {
                try? await history?.close()
                throw Output.fail("\(error.message); or pass --no-history to serve without storing records", .failure)
            }
        }

        // The core's fleet watch; hosts of the fleet are watched from the start, or from their first /probe.
        let (interval, collector) = definition.flags.applying(
            FleetCollectionDefaults(fleetFile), interval: every?.duration ?? .seconds(15),
            collector: watchOptions.collectorOptions())
        let watch = FleetWatch(
            plan: WatchPlan(
                hosts: onDemand ? [] : fleet.hosts, interval: interval, collector: collector, profiles: fleet.profiles))
        let metrics = settings.export?.metrics.map { metrics in
            HostMetricsExporter(
                settings: metrics, resourceAttributes: settings.resourceAttributes,
                labels: { watch.state(of: $0)?.labels ?? [:] }
            ) { diagnostics.warning($0) }
        }
        // The history and the OTLP metrics read the watch through a subscription of their own, made before
        // it starts, so that every record collected reaches them.
        var alerts: AlertEngine?
        if let rules { alerts = await AlertEngine.start(rules: rules, database: history, diagnostics: diagnostics) }
        let notifying = alerts.flatMap { engine in
            receivers.isEmpty
                ? nil
                : Task { await AlertNotifier(receivers: receivers, engine: engine, diagnostics: diagnostics).run() }
        }
        let sink = RecordSink(
            writer: nil, history: history, metrics: metrics, diagnostics: diagnostics, alerts: alerts)
        let records = watch.subscribe(buffer: WatchService.recordBacklog)
        let writing = Task { await sink.write(records) }
        let board = FleetBoard(
            topProcesses: min(collector.topProcesses, 10), version: HostscopeVersion.string,
            documentFreshness: .seconds(1))
        var serveConfiguration = ServeConfiguration(
            listen: address, listenName: given.isNumeric ? nil : given.host, token: token,
            tls: tlsCertificate.map { ($0, tlsKey!) }, requestsPerSecond: rateLimit,
            burst: Int(clamping: max(10, rateLimit * 2)),
            version: HostscopeVersion.string, allowedHosts: allowedHosts.compactMap(HostHeaderPolicy.Allowed.init),
            headerTimeout: headerTimeout.duration, idleTimeout: idleTimeout.duration,
            maximumConnections: maxConnections,
            maximumConnectionsPerAddress: maxConnectionsPerAddress)
        serveConfiguration.maximumProbeHosts = probeMaxHosts
        let configuration = serveConfiguration
        let database = history
        let engine = alerts
        let rulesPath = watchOptions.noAlerts ? nil : watchOptions.rules
        let failure = await TraceRuntime.with(settings.traceSetup(retention: retention), diagnostics: diagnostics) {
            trace in
            var parts = HostscopeServer.Parts(
                definition: definition, fleet: fleet, watchesWholeFleet: !onDemand, watch: watch, board: board,
                database: database, tracer: trace.tracer,
                // /mcp: the MCP tools over the fleet, reading the watch's latest records where they answer.
                mcp: MCPConfiguration(fleet: fleet, root: nil, settings: settings, watch: watch, alerts: engine))
            parts.alerts = engine
            parts.rulesPath = rulesPath
            parts.chat = chatTurns
            parts.files = ServedFiles(roots: filesRoots)
            parts.retention = retention
            parts.serveFlags = flagged
            return await Self.serve(configuration: configuration, parts: parts, logger: logger)
        }
        // A watch that never started (the address could not be bound) still ends its subscriptions.
        if !watch.hasEnded {
            let never = Task { await watch.run() }
            never.cancel()
            await never.value
        }
        // The subscription ends once the watch's last records are written.
        await writing.value
        alerts?.finish()
        await notifying?.value
        if let metrics { TraceRuntime.report(await metrics.finish(), items: "data point(s)", to: diagnostics) }
        try? await history?.close()
        if let failure { throw Output.fail(failure, .failure) }
        logger.info("stopped")
    }

    /// The bearer token of `--token-file`; `nil` on loopback without one. Listening elsewhere without a
    /// token needs `--insecure-no-auth`.
    func readToken(listening address: ListenAddress) throws -> BearerToken? {
        guard let tokenFile else {
            guard address.isLoopback || insecureNoAuth else {
                throw Output.fail(
                    "refusing to listen on \(address) without a token: anyone who reaches it would read every "
                        + "host's figures; pass --token-file FILE (mode 0600), or --insecure-no-auth if the network "
                        + "is trusted", .usage)
            }
            return nil
        }
        let text: String
        do {
            text = try PrivateFile.text(at: tokenFile, describedAs: "the token file")
        } catch {
            throw Output.fail(error.message, .usage)
        }
        let token: BearerToken
        do {
            token = try BearerToken(fileText: text)
        } catch .emptyFirstLine {
            throw Output.fail(
                "the first line of the token file \(tokenFile) is empty; the token is read from the first line only: "
                    + "put it there, e.g. `openssl rand -hex 32 > \(tokenFile)`", .usage)
        } catch {
            throw Output.fail(
                "the token on the first line of the token file \(tokenFile) is shorter than "
                    + "\(BearerToken.minimumLength) characters; write a longer one, e.g. `openssl rand -hex 32 > "
                    + "\(tokenFile)`", .usage)
        }
        ProcessSecrets.register(token.secret)
        return token
    }
}

extension ServeCommand {
    /// Runs the server; the failure's sentence, or `nil` after a clean stop.
    static func serve(configuration: ServeConfiguration, parts: HostscopeServer.Parts, logger: Logger) async -> String?
    {
        do {
            try await HostscopeServer.run(configuration: configuration, parts: parts, logger: logger)
            return nil
        } catch {
            return error.message
        }
    }
}
