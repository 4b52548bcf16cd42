import Agent
import AgentTracing
import ArgumentParser
import Foundation
import HostStats
import HostscopeServer
import Logging
import ServeAPI
import Storage
import Synchronization

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Watch hosts continuously and serve their figures over HTTP (Prometheus, JSON API, events).",
        discussion: """
            Watches the hosts as `watch` does (each every --every at its own phase, one record per tick, \
            the history database kept) and serves on --listen (default 127.0.0.1:9464):

              /metrics            every host, node_exporter's metric names with instance=HOST
              /probe?target=HOST  one host of the fleet (multi-target exporter pattern)
              /api/v1/...         hosts, history, spans, traces (JSON) and /api/v1/events (SSE)
              /healthz, /readyz

            Listening on an address other than loopback needs --token-file (a file of mode 0600 whose \
            first line is the bearer token clients send) or an explicit --insecure-no-auth. --tls-cert \
            and --tls-key serve HTTPS. Nothing is ever written to a host.

            SIGHUP reads the hosts file and ssh_config again: hosts that stay keep their sessions, new \
            ones start, removed ones stop; a file that cannot be read leaves the current list in force. \
            SIGTERM or Ctrl-C stops accepting requests, ends event streams, stops the watch and exits 0. \
            Logs are JSON lines on stderr.
            """)

    @Argument(help: "Hosts or ~/.ssh/config patterns to watch.")
    var hosts: [String] = []

    @Option(name: .customLong("hosts-file"), help: ArgumentHelp("File with one host or pattern per line.", valueName: "file"))
    var hostsFile: String?

    @Option(help: "Collection interval of each host.")
    var every: DurationArgument = DurationArgument(.seconds(15))

    @Option(help: ArgumentHelp("Address and port to listen on.", valueName: "host:port"))
    var listen: String = ListenAddress.standard.description

    @Option(name: .customLong("token-file"), help: ArgumentHelp(
        "File (mode 0600) whose first line is the bearer token every request must send.", valueName: "file"))
    var tokenFile: String?

    @Flag(name: .customLong("insecure-no-auth"), help: "Listen beyond loopback without a token (anyone who can reach the port reads every host's figures).")
    var insecureNoAuth = false

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("PEM certificate chain for HTTPS.", valueName: "file"))
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("PEM private key (mode 0600) for HTTPS.", valueName: "file"))
    var tlsKey: String?

    @Option(name: .customLong("rate-limit"), help: ArgumentHelp(
        "Requests per second each client address may make on average (bursts of twice as many).", valueName: "n"))
    var rateLimit: Double = 100

    @Flag(name: .customLong("on-demand"), help: "Watch a host only from its first /probe (for sharding: Prometheus chooses which serve watches which host).")
    var onDemand = false

    @OptionGroup var watchOptions: WatchOptions

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var tracing: TracingOptions

    private var database: String? { watchOptions.database }
    private var noHistory: Bool { watchOptions.noHistory }
    private var retain: DurationArgument? { watchOptions.retain }

    func validate() throws {
        guard every.duration >= .milliseconds(100) else {
            throw ValidationError("--every \(DurationText.format(every.duration)) is too short; use 100ms or more.")
        }
        guard ListenAddress(listen) != nil else {
            throw ValidationError("--listen \(listen) is not HOST:PORT; for example 127.0.0.1:9464 or [::1]:9464.")
        }
        guard (tlsCertificate == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together; give both or neither.")
        }
        guard rateLimit > 0, rateLimit.isFinite else { throw ValidationError("--rate-limit must be above 0.") }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level \(logLevel) is not one of trace, debug, info, notice, warning, error, critical.")
        }
    }

    func run() async throws {
        let address = ListenAddress(listen)!
        var token: BearerToken?
        if let tokenFile {
            let text: String
            do {
                text = try PrivateFile.text(at: tokenFile, describedAs: "the token file")
            } catch {
                throw Output.fail(error.message, .usage)
            }
            guard let read = BearerToken(fileText: text) else {
                throw Output.fail(
                    "the token file \(tokenFile) holds no token of \(BearerToken.minimumLength) characters or more on its first line; "
                        + "write one, e.g. `openssl rand -hex 32 > \(tokenFile)`", .usage)
            }
            ProcessSecrets.register(read.secret)
            token = read
        } else if !address.isLoopback && !insecureNoAuth {
            throw Output.fail(
                "refusing to listen on \(address) without a token: anyone who reaches it would read every host's figures; "
                    + "pass --token-file FILE (mode 0600), or --insecure-no-auth if the network is trusted", .usage)
        }

        let definition = FleetDefinition(arguments: hosts, hostsFile: hostsFile, settings: connection.settings)
        let fleet: ResolvedFleet
        do {
            fleet = try definition.resolve()
        } catch {
            throw Output.fail(error.message, .usage)
        }

        var opened: StorageDatabase?
        if !noHistory {
            let path = DatabaseLocation.path(explicit: database, environment: ProcessInfo.processInfo.environment)
            do {
                opened = try await StorageDatabase.open(at: path)
                opened?.accessNotes.forEach(Output.note)
                if let retain { _ = try await opened?.history.prune(olderThan: Date() - retain.duration.timeInterval) }
            } catch {
                throw Output.fail("\(error.message); or pass --no-history to serve without storing records", .failure)
            }
        }
        let history = opened

        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = JSONLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "hostscope.serve")

        // The OTLP push of watch: spans, and every record's figures as metrics.
        let export = try tracing.export(signals: [.traces, .metrics])
        var traceSetup = try tracing.setup(database: database, retention: retain?.duration, export: export)
        if noHistory { traceSetup.databasePath = nil }
        let metrics = export.metrics.map { settings in
            HostMetricsExporter(settings: settings, resourceAttributes: traceSetup.resourceAttributes) {
                logger.warning("\($0)")
            }
        }
        let trace = await TraceRuntime.start(
            traceSetup, warn: { logger.warning("\($0)") }, note: { logger.notice("\($0)") })

        let watch = LiveWatch(
            interval: every.duration,
            collector: watchOptions.collectorOptions)
        let board = FleetBoard(topProcesses: min(watchOptions.top, 10), version: HostscopeVersion.string)
        let historyFailed = HistoryFailure()
        let parts = HostscopeServer.Parts(
            definition: definition,
            fleet: fleet, watchesWholeFleet: !onDemand, watch: watch, board: board, database: history, tracer: trace.tracer,
            record: { record in
                metrics?.record(record)
                guard let history, !historyFailed.failed else { return }
                do {
                    try await history.history.append([record])
                } catch {
                    historyFailed.fail()
                    let reason = (error as? StorageError)?.message ?? "\(error)"
                    logger.error("history writes stopped; serving goes on", metadata: ["reason": "\(reason)"])
                }
            })
        let configuration = ServeConfiguration(
            listen: address, token: token, tls: tlsCertificate.map { ($0, tlsKey!) },
            requestsPerSecond: rateLimit, burst: Int(max(10, rateLimit * 2)), version: HostscopeVersion.string)
        let pruning = Task {
            while let retention = retain?.duration, let history, !Task.isCancelled {
                try await Task.sleep(for: .seconds(3600))
                _ = try? await history.history.prune(olderThan: Date() - retention.timeInterval)
            }
        }
        let failure = await Self.serve(configuration: configuration, parts: parts, logger: logger)
        pruning.cancel()
        if let metrics { TraceRuntime.report(await metrics.finish(), items: "data point(s)") }
        await trace.finishReporting()
        try? await history?.close()
        if let failure { throw Output.fail(failure, .failure) }
        logger.info("stopped")
    }
}

extension ServeCommand {
    /// Runs the server; the failure's sentence, or `nil` after a clean stop.
    static func serve(configuration: ServeConfiguration, parts: HostscopeServer.Parts, logger: Logger) async -> String? {
        do {
            try await HostscopeServer.run(configuration: configuration, parts: parts, logger: logger)
            return nil
        } catch {
            return error.message
        }
    }
}

/// Whether history writes failed once (they stop then; the server goes on).
final class HistoryFailure: Sendable {
    private let state = Mutex(false)
    var failed: Bool { state.withLock { $0 } }
    func fail() { state.withLock { $0 = true } }
}

