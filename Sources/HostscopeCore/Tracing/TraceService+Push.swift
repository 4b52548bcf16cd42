public import AgentTracing
public import Foundation
import Storage

/// What `trace push` sends, and where.
public struct TracePush: Sendable {
    /// The receiver, the encoding and the compression.
    public var otlp: OTLPSignalSettings
    /// Resource attributes the user set (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`), applied over each
    /// span's own.
    public var resourceAttributes: [Attribute]
    /// The earliest span start to send.
    public var since: Date?
    /// The latest span start to send: the push's start, so that its own requests are not sent.
    public var until: Date
    /// Spans per request batch.
    public var batchSize: Int
    /// No retry starts after this long.
    public var timeout: Duration

    /// A push of the spans that started in [`since`, `until`].
    public init(
        otlp: OTLPSignalSettings, resourceAttributes: [Attribute] = [], since: Date? = nil, until: Date,
        batchSize: Int = 512, timeout: Duration = .seconds(60)
    ) {
        self.otlp = otlp
        self.resourceAttributes = resourceAttributes
        self.since = since
        self.until = until
        self.batchSize = max(1, batchSize)
        self.timeout = timeout
    }
}

/// What a push did.
public struct TracePushOutcome: Sendable {
    /// Spans found to send (the spans of export requests are never sent).
    public var found: Int
    /// Stored spans that could not be read, and were not sent.
    public var skipped: Int
    /// What the receiver did with the spans sent.
    public var result: OTLPExportResult
}

extension TraceService {
    /// Sends the stored spans of a time range to an OTLP/HTTP receiver, oldest first, in batches, and says
    /// what became of them; the push's own requests are recorded as spans in the database, and are left out
    /// by later pushes like the spans of every export request.
    ///
    /// With protobuf, each span goes as the encoding stored with it (only spans stored by a hostscope before
    /// those were kept are read from their JSON and encoded); with JSON, spans are read from their JSON. The
    /// next page of the database is read while the previous batch is on its way.
    ///
    /// - Throws: ``CoreError``: `notFound` without a database, `failed` when it cannot be read (what was
    ///   delivered before stays delivered). A receiver's refusal is not thrown: it is in the outcome.
    public func push(_ push: TracePush, diagnostics: Diagnostics) async throws(CoreError) -> TracePushOutcome {
        let path = access.path
        return try await access.with { database throws(CoreError) in
            let tracing = await TraceRuntime.start(TraceSetup(databasePath: path), diagnostics: diagnostics)
            let exporter = OTLPHTTPExporter(
                endpoint: push.otlp.endpoint, scope: TraceRuntime.scope, encoding: push.otlp.encoding,
                compression: push.otlp.compression, timeouts: push.otlp.timeouts, userAgent: TraceRuntime.userAgent)
            var sender = BatchSender(exporter: exporter, deadline: ContinuousClock.now + push.timeout)
            var failure: String?
            do {
                sender.droppedSpanCount = UInt64(
                    max(0, try await database.meta.integer(SpanPersister.droppedSpansKey) ?? 0))
                switch push.otlp.encoding {
                case .protobuf: try await Self.pushEncoded(push, from: database, through: &sender)
                case .json: try await Self.pushDecoded(push, from: database, through: &sender)
                }
                await sender.finish()
            } catch {
                failure = (error as? StorageError)?.message ?? "\(error)"
                await sender.finish()
            }
            await exporter.shutdown()
            await tracing.finish(reportingTo: diagnostics)
            if let failure { throw CoreError(.failed, failure) }
            return TracePushOutcome(found: sender.found, skipped: sender.skipped, result: sender.result)
        }
    }

    /// The protobuf push: stored encodings copied into batches page by page.
    private static func pushEncoded(
        _ push: TracePush, from database: StorageDatabase, through sender: inout BatchSender
    ) async throws {
        var batch = OTLPEncodedSpans(capacity: push.batchSize)
        // Each page resource's index in the batch, once a span of the page has used it; reset with the batch.
        var resourceIndex: [Int?] = []
        var merged: [[UInt8]: [UInt8]?] = [:]
        var cursor: Storage.SpanCursor?
        repeat {
            let page = try await database.spans.otlpPage(
                since: push.since, until: push.until, after: cursor, limit: push.batchSize)
            cursor = page.next
            resourceIndex = [Int?](repeating: nil, count: page.resources.count)
            for entry in page.entries {
                switch entry {
                case .encoded(let range, let resource):
                    let index: Int
                    if let known = resourceIndex[resource] {
                        index = known
                    } else {
                        var fields: [UInt8]? = page.resources[resource]
                        if !push.resourceAttributes.isEmpty {
                            fields =
                                merged[page.resources[resource]]
                                ?? OTLPProtobufEncoder.mergingResource(
                                    page.resources[resource], push.resourceAttributes)
                            merged[page.resources[resource]] = fields
                        }
                        guard let fields else {
                            // Not a Resource message: the stored bytes are damaged.
                            sender.skipped += 1
                            continue
                        }
                        index = batch.addResource(fields)
                        resourceIndex[resource] = index
                    }
                    batch.append(encodedSpan: page.spanBytes[range], resource: index)
                case .flat(let json):
                    guard let span = sender.pushable(try FinishedSpan(flatJSONLine: json), push) else { continue }
                    batch.append(span)
                }
                if batch.count == push.batchSize {
                    await sender.send(batch)
                    batch.removeAll()
                    resourceIndex = [Int?](repeating: nil, count: page.resources.count)
                    if sender.result.failure != nil { return }
                }
            }
        } while cursor != nil
        if !batch.isEmpty { await sender.send(batch) }
    }

    /// The JSON push: spans read from their stored JSON.
    private static func pushDecoded(
        _ push: TracePush, from database: StorageDatabase, through sender: inout BatchSender
    ) async throws {
        var batch: [FinishedSpan] = []
        batch.reserveCapacity(push.batchSize)
        for try await row in database.spans.spans(since: push.since, until: push.until, pageSize: push.batchSize) {
            guard let span = sender.pushable(try row.finishedSpan(), push) else { continue }
            batch.append(span)
            if batch.count == push.batchSize {
                await sender.send(batch)
                batch.removeAll(keepingCapacity: true)
                if sender.result.failure != nil { return }
            }
        }
        if !batch.isEmpty { await sender.send(batch) }
    }
}

/// Sends a push's batches one at a time, each while the next is read: the database and the receiver work at
/// the same time, in order, and no more than two batches are held.
private struct BatchSender {
    let exporter: OTLPHTTPExporter
    let deadline: ContinuousClock.Instant
    var droppedSpanCount: UInt64 = 0
    var found = 0
    var skipped = 0
    var result = OTLPExportResult()
    private var sending: Task<OTLPExportResult, Never>?

    init(exporter: OTLPHTTPExporter, deadline: ContinuousClock.Instant) {
        self.exporter = exporter
        self.deadline = deadline
    }

    /// Waits for the batch on its way, then sends `spans` unless a batch failed for good.
    mutating func send(_ spans: OTLPEncodedSpans) async {
        await start(spans.count) { [exporter, droppedSpanCount, deadline] in
            await exporter.export(spans, droppedSpanCount: droppedSpanCount, deadline: deadline)
        }
    }

    /// Waits for the batch on its way, then sends `spans` unless a batch failed for good.
    mutating func send(_ spans: [FinishedSpan]) async {
        await start(spans.count) { [exporter, droppedSpanCount, deadline] in
            await exporter.export(spans, droppedSpanCount: droppedSpanCount, deadline: deadline)
        }
    }

    /// The span read from its stored JSON as the push sends it, the user's resource attributes applied; `nil`
    /// for a span that cannot be read (counted) and for the span of an export request, which an earlier push or
    /// export recorded: sending those would make every push feed the next.
    mutating func pushable(_ read: @autoclosure () throws -> FinishedSpan, _ push: TracePush) -> FinishedSpan? {
        guard var span = try? read() else {
            skipped += 1
            return nil
        }
        if span.isExportRequest { return nil }
        if !push.resourceAttributes.isEmpty { span.resource = span.resource.merging(push.resourceAttributes) }
        return span
    }

    /// Waits for the last batch.
    mutating func finish() async {
        if let last = sending { result.merge(await last.value) }
        sending = nil
    }

    private mutating func start(_ count: Int, _ export: @escaping @Sendable () async -> OTLPExportResult) async {
        found += count
        await finish()
        guard result.failure == nil else { return }
        sending = Task { await export() }
    }
}
