import Foundation
import HostStats
public import HostscopeCore
public import MetricsExposition
import OrderedJSON
import Synchronization
import ValueFormats

/// What `serve` shows of its fleet at this moment, kept from a ``FleetWatch``'s events: each host's
/// live state (the core's ``HostWatchState``: phase, counts, latest record), its ready-rendered metric
/// lines, and the event log the event stream reads.
///
/// Every reader (a scrape, an API request) takes a consistent copy under one short lock; the work of
/// rendering a host's metrics is done once per change of the host, outside the lock, so scrapes never
/// wait on it and never delay the watch.
///
/// `/metrics` is one document of every host's lines (5 MiB for 300 of the benchmark's hosts), kept per
/// format and content coding. A large fleet changes it dozens of times a second (every tick of every
/// host, every alert transition), so with a ``documentFreshness`` above zero a scrape takes the kept
/// document while it is that fresh: one younger than a quarter of it is sent as it is; an older one is
/// sent too, while a new one is made off the request path; only a scrape that finds no document younger
/// than the whole freshness (a fleet scraped rarely) waits, for the one being made. Documents are made one
/// at a time per format and coding, on a queue of their own rather than on Swift's cooperative pool. At 50
/// scrapes a second no scrape then waits for a rendering or its compression, and a scrape's figures lag
/// the watch's by less than the freshness (or, for a scrape that waited, by one rendering). With a
/// freshness of zero every scrape sees the latest figures.
public final class FleetBoard: Sendable {
    /// Processes shown per host in `hostscope_top_process_*`.
    public let topProcesses: Int
    /// The version in `hostscope_build_info`.
    public let version: String
    /// The live events (records, host states, fleet changes, spans).
    public let events: EventLog
    /// How far behind the watch a `/metrics` document may be (zero: never).
    public let documentFreshness: Duration

    private struct Entry {
        var state: HostWatchState
        /// The host's metric lines with its `instance` label, for `/metrics`.
        var series: RenderedSeries?
        /// Bumped on every change of the host, so a rendering made from an older state is not stored.
        var revision: UInt64 = 0

        var summary: HostCollectionSummary { HostCollectionSummary(state) }
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var order: [String] = []
        /// Bumped on every change; a kept document is of one generation.
        var generation: UInt64 = 0
        var documents: [DocumentKey: Document] = [:]
        /// The documents being made, each with the scrapes waiting for it, so that one is made at a time.
        var waiting: [DocumentKey: [CheckedContinuation<[UInt8], Never>]] = [:]
        /// Documents made since start (rendered or compressed).
        var made = 0
        /// `/probe` targets refused since start, by reason.
        var probeRefusals: [ProbeRefusal: UInt64] = [:]
        /// Where the alerts shown come from (``showAlerts(from:)``), and its revision, bumped on every change.
        var alertSource: (@Sendable () -> [(labels: [String: String], state: String)])?
        var alertsRevision: UInt64 = 0
        /// The `hostscope_alert` samples last taken from the source, and the revision they show.
        var alerts: (revision: UInt64, samples: [MetricSample]) = (0, [])
    }

    /// A `/metrics` document as it was sent, with the generation it shows and when it was made.
    private struct Document {
        var generation: UInt64
        var madeAt: ContinuousClock.Instant
        var bytes: [UInt8]
    }

    private struct DocumentKey: Hashable {
        var openMetrics: Bool
        var gzip: Bool
        init(_ format: ExpositionFormat, _ coding: ContentCoding) {
            openMetrics = format == .openMetrics
            gzip = coding == .gzip
        }
        var format: ExpositionFormat { openMetrics ? .openMetrics : .prometheusText }
        var coding: ContentCoding { gzip ? .gzip : .identity }
    }

    private let state = Lock(State())

    /// A board; `documentFreshness` is how far behind the watch a `/metrics` document may be (see the
    /// type's documentation; `serve` uses one second).
    public init(topProcesses: Int, version: String, events: EventLog = EventLog(), documentFreshness: Duration = .zero)
    {
        self.topProcesses = topProcesses
        self.version = version
        self.events = events
        self.documentFreshness = documentFreshness
    }

    /// Takes one event of the watch: a record becomes a `record` event; a state replaces the host's
    /// (a host not seen before joins, with a `fleet` event) and becomes a `host_state` event; a removed
    /// host leaves, with a `fleet` event. ``WatchEvent/missed(_:)`` is for the caller, who then calls
    /// ``synchronize(_:)`` with the watch's states.
    public func handle(_ event: WatchEvent) {
        switch event {
        case .record(let record):
            let value = APIEncoding.record(record)
            events.append(
                "record", data: value.jsonString, host: record.host,
                summaryData: APIEncoding.summaryRecord(value).jsonString)
        case .state(let hostState):
            let change = state.withLock { state -> (revision: UInt64, joined: Int?)? in
                var entry = state.entries[hostState.host] ?? Entry(state: hostState)
                let joined = state.entries[hostState.host] == nil
                if !joined, entry.state == hostState { return nil }
                if joined { state.order.append(hostState.host) }
                entry.state = hostState
                entry.revision += 1
                state.entries[hostState.host] = entry
                state.generation += 1
                return (entry.revision, joined ? state.order.count : nil)
            }
            guard let change else { return }
            render(hostState.host, revision: change.revision)
            if let count = change.joined {
                events.append(
                    "fleet", data: APIEncoding.fleetChange(host: hostState.host, change: "added", hosts: count))
            }
            events.append("host_state", data: JSONValue.object(APIEncoding.hostState(hostState)).jsonString)
        case .removed(let host):
            let count = state.withLock { state -> Int? in
                guard state.entries.removeValue(forKey: host) != nil else { return nil }
                state.order.removeAll { $0 == host }
                state.generation += 1
                return state.order.count
            }
            if let count {
                events.append("fleet", data: APIEncoding.fleetChange(host: host, change: "removed", hosts: count))
            }
        case .missed:
            break
        }
    }

    /// Makes `states` (a watch's ``FleetWatch/states``) the board's hosts, in their order: at the start,
    /// and after the board missed events. Clients of the event stream are told to refetch with a
    /// `reset` event when `announce` is set.
    public func synchronize(_ states: [HostWatchState], announce: Bool = false) {
        let revisions = state.withLock { state -> [(String, UInt64)] in
            var entries: [String: Entry] = [:]
            var revisions: [(String, UInt64)] = []
            for hostState in states where entries[hostState.host] == nil {
                var entry = state.entries[hostState.host] ?? Entry(state: hostState)
                entry.state = hostState
                entry.revision += 1
                entries[hostState.host] = entry
                revisions.append((hostState.host, entry.revision))
            }
            state.entries = entries
            state.order = revisions.map(\.0)
            state.generation += 1
            return revisions
        }
        for (host, revision) in revisions { render(host, revision: revision) }
        if announce {
            events.append("reset", data: APIEncoding.reset(reason: "the server missed events of the watch"))
        }
    }

    /// Renders a host's metric lines from its current state and stores them unless the host changed
    /// again meanwhile (the later rendering wins).
    private func render(_ host: String, revision: UInt64) {
        guard let (summary, labels) = state.withLock({ $0.entries[host].map { ($0.summary, $0.state.labels) } })
        else { return }
        let samples = Self.samples(summary, topProcesses: topProcesses)
        let series = RenderedSeries(
            samples, leadingLabels: [MetricSample.Label("instance", host)], targetLabels: Self.targetLabels(labels))
        state.withLock { state in
            guard var entry = state.entries[host], entry.revision == revision else { return }
            entry.series = series
            state.entries[host] = entry
            state.generation += 1
        }
    }

    /// A host's fleet-file labels as target labels, by name.
    static func targetLabels(_ labels: [String: String]) -> [MetricSample.Label] {
        labels.sorted { $0.key < $1.key }.map { MetricSample.Label($0.key, $0.value) }
    }

    static func samples(_ summary: HostCollectionSummary, topProcesses: Int) -> [MetricSample] {
        FleetExposition.samples(for: summary, topProcesses: topProcesses)
    }

    /// `/metrics`: every host, each sample with its `instance` label, in `coding` (a gzip body is the
    /// document compressed).
    ///
    /// Documents are made on a dispatch queue of their own, one at a time, never on Swift's cooperative
    /// pool: rendering and compressing 300 hosts takes tens of milliseconds, and on two cores a pool thread
    /// held that long would hold up every other request. A scrape that has to wait for a document (none
    /// kept, or the kept one older than the freshness) waits for the one being made, if any, rather than
    /// making another.
    public func metrics(_ format: ExpositionFormat, coding: ContentCoding = .identity) async -> [UInt8] {
        let key = DocumentKey(format, coding)
        let now = ContinuousClock.now
        enum Decision { case send([UInt8]), sendAndRefresh([UInt8]), wait }
        let decision = state.withLock { state -> Decision in
            if let kept = state.documents[key] {
                let age = kept.madeAt.duration(to: now)
                if kept.generation == state.generation || age < documentFreshness / 4 { return .send(kept.bytes) }
                if age < documentFreshness {
                    guard state.waiting[key] == nil else { return .send(kept.bytes) }
                    state.waiting[key] = []
                    return .sendAndRefresh(kept.bytes)
                }
            }
            return .wait
        }
        switch decision {
        case .send(let bytes):
            return bytes
        case .sendAndRefresh(let bytes):
            Self.documentQueue.async { [self] in finishDocument(key) }
            return bytes
        case .wait:
            return await withCheckedContinuation { continuation in
                // With a freshness of zero a scrape does not take a document begun before it came.
                guard documentFreshness > .zero else {
                    return Self.documentQueue.async { [self] in continuation.resume(returning: makeDocument(key)) }
                }
                let start = state.withLock { state -> Bool in
                    defer { state.waiting[key, default: []].append(continuation) }
                    return state.waiting[key] == nil
                }
                if start { Self.documentQueue.async { [self] in finishDocument(key) } }
            }
        }
    }

    /// The queue documents are made on (see ``metrics(_:coding:)``).
    private static let documentQueue = DispatchQueue(label: "hostscope.metrics.documents", qos: .utility)

    /// Makes the document of `key` and hands it to every scrape waiting for it.
    private func finishDocument(_ key: DocumentKey) {
        let bytes = makeDocument(key)
        let waiting = state.withLock { $0.waiting.removeValue(forKey: key) ?? [] }
        for continuation in waiting { continuation.resume(returning: bytes) }
    }

    /// Renders the document of `key` from the hosts' lines of this moment (compressing the kept
    /// uncompressed one when it is of this generation) and keeps it unless a newer one was kept meanwhile.
    private func makeDocument(_ key: DocumentKey) -> [UInt8] {
        let plainKey = DocumentKey(key.format, .identity)
        // A kept plain document of this generation only needs compressing; the hosts' series are gathered
        // only when there is none.
        let (generation, plain, series, hostCount, refusals) = state.withLock { state in
            let plain = state.documents[plainKey].flatMap { $0.generation == state.generation ? $0 : nil }
            return (
                state.generation, plain, plain == nil ? state.order.compactMap { state.entries[$0]?.series } : [],
                state.order.count, state.probeRefusals
            )
        }
        var made: [DocumentKey: [UInt8]] = [:]
        let text: [UInt8]
        if let plain {
            text = plain.bytes
        } else {
            let process = RenderedSeries(
                FleetExposition.processSamples(
                    version: version, hosts: hostCount,
                    probeRefusals: ProbeRefusal.allCases.map { (reason: $0.rawValue, count: refusals[$0] ?? 0) })
                    + currentAlertSamples())
            text = ExpositionWriter.document(
                families: FleetExposition.families, series: [process] + series, format: key.format)
            made[plainKey] = text
        }
        let bytes = key.coding.encode(text)
        made[key] = bytes
        let madeAt = ContinuousClock.now
        state.withLock { state in
            state.made += 1
            for (madeKey, madeBytes) in made where (state.documents[madeKey]?.generation ?? 0) <= generation {
                state.documents[madeKey] = Document(generation: generation, madeAt: madeAt, bytes: madeBytes)
            }
        }
        return bytes
    }

    /// Shows the alerts `source` gives (those pending and firing now) as `hostscope_alert` series. The
    /// board asks `source` only when it makes a document after ``alertsMoved()``, so a burst of transitions
    /// costs one look at the fleet's alerts per document rather than one per transition.
    public func showAlerts(from source: @escaping @Sendable () -> [(labels: [String: String], state: String)]) {
        state.withLock { state in
            state.alertSource = source
            state.alertsRevision += 1
            state.generation += 1
        }
    }

    /// Tells the board that the alerts of its source changed (a transition).
    public func alertsMoved() {
        state.withLock { state in
            state.alertsRevision += 1
            state.generation += 1
        }
    }

    /// The `hostscope_alert` samples of the alerts now: those kept, or the source's when they moved since.
    private func currentAlertSamples() -> [MetricSample] {
        let (kept, source, revision) = state.withLock { state in
            (
                state.alerts, state.alertsRevision == state.alerts.revision ? nil : state.alertSource,
                state.alertsRevision
            )
        }
        guard let source else { return kept.samples }
        let samples = FleetExposition.alertSamples(source())
        state.withLock { state in
            guard revision > state.alerts.revision else { return }
            state.alerts = (revision, samples)
        }
        return samples
    }

    /// Counts a `/probe` target refused, for `hostscope_probe_refusals_total`.
    public func countProbeRefusal(_ reason: ProbeRefusal) {
        state.withLock { state in
            state.probeRefusals[reason, default: 0] += 1
            state.generation += 1
        }
    }

    /// `/probe?target=HOST`: one host's families without an `instance` label (the scraper's
    /// relabeling sets it) but with its fleet-file labels, in `coding`; `nil` when the host is not watched.
    public func probe(_ host: String, format: ExpositionFormat, coding: ContentCoding = .identity) -> [UInt8]? {
        guard let (summary, labels) = state.withLock({ $0.entries[host].map { ($0.summary, $0.state.labels) } })
        else { return nil }
        let series = RenderedSeries(
            Self.samples(summary, topProcesses: topProcesses), targetLabels: Self.targetLabels(labels))
        let text = ExpositionWriter.document(families: FleetExposition.families, series: [series], format: format)
        return coding.encode(text)
    }

    /// Documents made since start, and the generation of the board's figures now (for tests).
    var documentsMade: (count: Int, generation: UInt64) { state.withLock { ($0.made, $0.generation) } }

    /// The hosts on the board, in order.
    public var hostNames: [String] { state.withLock { $0.order } }

    /// Whether `host` is on the board.
    public func contains(_ host: String) -> Bool { state.withLock { $0.entries[host] != nil } }

    /// Whether `host` has ended a collection yet.
    public func hasRecord(_ host: String) -> Bool {
        state.withLock { $0.entries[host]?.state.latest != nil }
    }

    /// Every watched host's state and latest record, in the fleet's order.
    public func hostStates() -> [HostWatchState] {
        state.withLock { state in state.order.compactMap { state.entries[$0]?.state } }
    }

    /// One host's state and latest record; `nil` when it is not watched.
    public func hostState(_ host: String) -> HostWatchState? {
        state.withLock { $0.entries[host]?.state }
    }

    /// The watched hosts that have not ended a collection yet (`/readyz` waits for none).
    public func hostsWithoutRecord() -> [String] {
        state.withLock { state in state.order.filter { state.entries[$0]?.state.latest == nil } }
    }
}

extension HostCollectionSummary {
    /// The figures of hostscope's own families from a host's live state in the watch.
    init(_ state: HostWatchState) {
        var errors: [FailureKind: UInt64] = [:]
        for (kind, count) in state.errorsByKind { errors[kind] = UInt64(count) }
        self.init(
            host: state.host, latest: state.latest, lastSuccess: state.lastSuccess, collections: UInt64(state.ticks),
            errors: errors)
    }
}
