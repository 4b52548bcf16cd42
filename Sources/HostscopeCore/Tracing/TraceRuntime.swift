public import AgentTracing
import Foundation
import Storage
import Synchronization
import Tracing
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// How a command records its spans.
public struct TraceSetup: Sendable {
    /// The ring buffer's capacity, in spans.
    public var capacity: Int
    /// The database that receives finished spans; `nil` keeps them in memory only.
    public var databasePath: String?
    /// How long stored spans are kept; `nil` keeps them all.
    public var retention: Duration?
    /// Where and how to export spans continuously over OTLP/HTTP; `nil` for nowhere.
    public var otlp: OTLPSignalSettings?
    /// Resource attributes the user set (``ResourceEnvironment``), applied over hostscope's own.
    public var resourceAttributes: [Attribute]
    /// Retries of the continuous exporter.
    public var retryPolicy: OTLPRetryPolicy
    /// How long exiting waits for queued spans to reach the OTLP receiver.
    public var flushTimeout: Duration

    /// The default ring capacity: room for the spans of several minutes of a large `watch`.
    public static let defaultCapacity = 10_000
    /// The environment variable that sets the capacity when no option does.
    public static let capacityVariable = "HOSTSCOPE_TRACE_BUFFER"

    public init(
        capacity: Int = TraceSetup.defaultCapacity, databasePath: String? = nil, retention: Duration? = nil,
        otlp: OTLPSignalSettings? = nil, resourceAttributes: [Attribute] = [],
        retryPolicy: OTLPRetryPolicy = OTLPRetryPolicy(), flushTimeout: Duration = .seconds(5)
    ) {
        self.capacity = max(1, capacity)
        self.databasePath = databasePath
        self.retention = retention
        self.otlp = otlp
        self.resourceAttributes = resourceAttributes
        self.retryPolicy = retryPolicy
        self.flushTimeout = flushTimeout
    }
}

/// What tracing did during a command, for its last words on stderr.
public struct TraceSummary: Sendable {
    /// Spans recorded.
    public var recordedSpans: UInt64
    /// Spans written to the database.
    public var storedSpans: Int
    /// The continuous exporter's counts, when one ran.
    public var export: OTLPExportStatistics?
}

/// One command's tracing: the process's ``RingBufferTracer`` (bootstrapped as the
/// swift-distributed-tracing tracer), the ``SpanPersister`` writing its spans to the database, and an
/// optional ``OTLPBatchExporter``. ``finish()`` flushes both; commands call it on every way out,
/// SIGINT and SIGTERM included (they run under ``withTerminationSignals(_:)``, which turns the signal
/// into cancellation so that the normal path runs).
public final class TraceRuntime: Sendable {
    /// The tracer every span of this process goes to.
    public let tracer: RingBufferTracer
    /// The database writer, when the database could be opened.
    public let persister: SpanPersister?
    /// The continuous exporter, when an endpoint was given.
    public let exporter: OTLPBatchExporter?
    private let database: StorageDatabase?
    private let flushTimeout: Duration

    private static let bootstrapped = Lock(false)

    private init(
        tracer: RingBufferTracer, persister: SpanPersister?, exporter: OTLPBatchExporter?, database: StorageDatabase?,
        flushTimeout: Duration
    ) {
        self.tracer = tracer
        self.persister = persister
        self.exporter = exporter
        self.database = database
        self.flushTimeout = flushTimeout
    }

    /// Creates the tracer, opens the database and starts the exporter. Problems with the database or the
    /// receiver never stop the command: they are reported through `warn` and tracing goes on without
    /// that part.
    ///
    /// - Parameters:
    ///   - bootstrap: install the tracer as the process-wide one (once per process; later runtimes are used
    ///     with ``run(_:)`` only).
    ///   - note: told what opening the database changed (``StorageDatabase/accessNotes``).
    public static func start(
        _ setup: TraceSetup, bootstrap: Bool = true, warn: @escaping @Sendable (String) -> Void,
        note: @escaping @Sendable (String) -> Void = { _ in }
    ) async -> TraceRuntime {
        if let otlp = setup.otlp {
            for secret in otlp.endpoint.secrets { ProcessSecrets.register(secret) }
        }
        var exporter: OTLPBatchExporter?
        if let otlp = setup.otlp {
            let http = OTLPHTTPExporter(
                endpoint: otlp.endpoint, scope: scope, encoding: otlp.encoding, compression: otlp.compression,
                policy: setup.retryPolicy, timeouts: otlp.timeouts, userAgent: userAgent)
            exporter = OTLPBatchExporter(exporter: http) { error in
                warn("OTLP export: \(ProcessSecrets.scrub(error.message))")
            }
        }
        let tracer = RingBufferTracer(
            capacity: setup.capacity, resource: resource.merging(setup.resourceAttributes),
            scrubber: ProcessSecrets.scrubber,
            sinks: exporter.map { [$0] } ?? [])
        if bootstrap {
            let first = bootstrapped.withLock { done in
                defer { done = true }
                return !done
            }
            if first { InstrumentationSystem.bootstrap(tracer) }
        }
        var database: StorageDatabase?
        var persister: SpanPersister?
        if let path = setup.databasePath {
            do {
                let opened = try await StorageDatabase.open(at: path)
                for text in opened.accessNotes { note(text) }
                database = opened
                let made = SpanPersister(
                    tracer: tracer, database: opened, retention: setup.retention, onError: { warn($0) })
                await made.start()
                persister = made
            } catch {
                warn("spans will not be stored: \(error.message)")
            }
        }
        exporter?.start()
        return TraceRuntime(
            tracer: tracer, persister: persister, exporter: exporter, database: database,
            flushTimeout: setup.flushTimeout)
    }

    /// Runs `body` with this runtime's tracer as the current one (for runtimes not bootstrapped, and
    /// tests).
    public func run<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        try await withTracer(tracer) { try await body() }
    }

    /// Sends what the exporter holds (within the flush timeout), writes what the ring holds to the
    /// database, and closes it. Call once, at the end of the command.
    @discardableResult
    public func finish() async -> TraceSummary {
        let export = await exporter?.shutdown(timeout: flushTimeout)
        // After the exporter: its last requests are spans too.
        await persister?.shutdown()
        let stored = await persister?.writtenSpans ?? 0
        try? await database?.close()
        return TraceSummary(recordedSpans: tracer.finishedSpanCount, storedSpans: stored, export: export)
    }

    /// The `User-Agent` of hostscope's exporters.
    public static var userAgent: String { "hostscope/\(HostscopeVersion.string)" }

    /// The scope hostscope exports under.
    public static var scope: InstrumentationScope { InstrumentationScope(version: HostscopeVersion.string) }

    /// `service.name=hostscope`, `service.version`, `host.name` of this machine.
    public static var resource: TraceResource {
        TraceResource.hostscope(version: HostscopeVersion.string, hostName: hostName)
    }

    static var hostName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        let name = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: name, as: UTF8.self)
    }

    /// The ring capacity from `HOSTSCOPE_TRACE_BUFFER`, if set to a positive number.
    public static func capacity(fromEnvironment environment: [String: String]) -> Int? {
        environment[TraceSetup.capacityVariable].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
    }
}
