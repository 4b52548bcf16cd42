import Agent
import Foundation
import HostStats
import MetricsExposition
import OrderedJSON
import Synchronization

/// What `serve` knows of its fleet at this moment, kept from the watch's events: each host's state,
/// latest record, counts and ready-rendered metric lines; and the event log the event stream reads.
///
/// Every reader (a scrape, an API request) takes a consistent copy under one short lock; the work
/// of rendering a host's metrics is done once per record, outside the lock, so scrapes never wait
/// on it and never delay the watch.
public final class FleetBoard: Sendable {
    /// Processes shown per host in `hostscope_top_process_*`.
    public let topProcesses: Int
    /// The version in `hostscope_build_info`.
    public let version: String
    /// The live events (records, host states, fleet changes, spans).
    public let events: EventLog

    private struct Entry {
        var status: HostWatchStatus
        var latest: SnapshotRecord?
        var lastSuccess: Date?
        var collections: UInt64 = 0
        var errors: [FailureKind: UInt64] = [:]
        /// The host's metric lines with its `instance` label, for `/metrics`.
        var series: RenderedSeries?
        /// Bumped on every change of the host, so a rendering made from an older state is not stored.
        var revision: UInt64 = 0

        var summary: HostCollectionSummary {
            HostCollectionSummary(
                host: status.host, latest: latest, lastSuccess: lastSuccess, collections: collections, errors: errors)
        }

        var view: HostView { HostView(status: status, latest: latest, lastSuccess: lastSuccess) }
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var order: [String] = []
        /// Bumped on every change; the cached documents are of one generation.
        var generation: UInt64 = 0
        var cached: [ExpositionFormatKey: (generation: UInt64, bytes: [UInt8])] = [:]
    }

    private enum ExpositionFormatKey: Hashable {
        case text, openMetrics
        init(_ format: ExpositionFormat) { self = format == .openMetrics ? .openMetrics : .text }
    }

    private let state = Mutex(State())

    public init(topProcesses: Int, version: String, events: EventLog = EventLog()) {
        self.topProcesses = topProcesses
        self.version = version
        self.events = events
    }

    /// Takes one event of the watch.
    public func handle(_ event: LiveWatch.Event) {
        switch event {
        case .record(let record):
            let revision = state.withLock { state -> UInt64? in
                guard var entry = state.entries[record.host] else { return nil }
                entry.latest = record
                entry.collections += 1
                switch record {
                case .snapshot(let snapshot): entry.lastSuccess = snapshot.collectedAt
                case .failure(let failure): entry.errors[failure.kind, default: 0] += 1
                }
                entry.revision += 1
                state.entries[record.host] = entry
                return entry.revision
            }
            guard let revision else { return }
            render(record.host, revision: revision)
            events.append("record", data: record.jsonValue.jsonString)
        case .status(let status):
            let view = state.withLock { state -> HostView? in
                guard var entry = state.entries[status.host] else { return nil }
                entry.status = status
                state.entries[status.host] = entry
                return entry.view
            }
            if let view { events.append("host_state", data: JSONValue.object(APIEncoding.hostState(view)).jsonString) }
        case .hostsChanged(let hosts, let added, let removed):
            let fresh = state.withLock { state -> [String] in
                for name in removed { state.entries.removeValue(forKey: name) }
                var fresh: [String] = []
                for name in added where state.entries[name] == nil {
                    state.entries[name] = Entry(status: HostWatchStatus(host: name, state: .connecting))
                    fresh.append(name)
                }
                state.order = hosts
                state.generation += 1
                return fresh
            }
            for name in fresh { render(name, revision: 0) }
            events.append("fleet", data: APIEncoding.fleet(hosts: hosts, reason: "hosts_changed"))
        }
    }

    /// Renders a host's metric lines from its current state and stores them unless the host changed
    /// again meanwhile (the later rendering wins).
    private func render(_ host: String, revision: UInt64) {
        guard let summary = state.withLock({ $0.entries[host]?.summary }) else { return }
        let samples = Self.samples(summary, topProcesses: topProcesses)
        let series = RenderedSeries(samples, leadingLabels: [MetricSample.Label("instance", host)])
        state.withLock { state in
            guard var entry = state.entries[host], entry.revision == revision else { return }
            entry.series = series
            state.entries[host] = entry
            state.generation += 1
        }
    }

    static func samples(_ summary: HostCollectionSummary, topProcesses: Int) -> [MetricSample] {
        FleetExposition.samples(for: summary, topProcesses: topProcesses)
    }

    /// `/metrics`: every host, each sample with its `instance` label.
    public func metrics(_ format: ExpositionFormat) -> [UInt8] {
        let key = ExpositionFormatKey(format)
        let (generation, cached, series, hostCount) = state.withLock { state in
            (
                state.generation, state.cached[key], state.order.compactMap { state.entries[$0]?.series },
                state.order.count
            )
        }
        if let cached, cached.generation == generation { return cached.bytes }
        let process = RenderedSeries(FleetExposition.processSamples(version: version, hosts: hostCount))
        let bytes = ExpositionWriter.document(
            families: FleetExposition.families, series: [process] + series, format: format)
        state.withLock { state in
            if state.generation == generation { state.cached[key] = (generation, bytes) }
        }
        return bytes
    }

    /// `/probe?target=HOST`: one host's families without an `instance` label (the scraper's
    /// relabeling sets it); `nil` when the host is not watched.
    public func probe(_ host: String, format: ExpositionFormat) -> [UInt8]? {
        guard let summary = state.withLock({ $0.entries[host]?.summary }) else { return nil }
        let series = RenderedSeries(Self.samples(summary, topProcesses: topProcesses))
        return ExpositionWriter.document(families: FleetExposition.families, series: [series], format: format)
    }

    /// Whether `host` has ended a collection yet.
    public func hasRecord(_ host: String) -> Bool {
        state.withLock { $0.entries[host]?.latest != nil }
    }

    /// Every watched host's state and latest record, in the fleet's order.
    public func hostViews() -> [HostView] {
        state.withLock { state in state.order.compactMap { state.entries[$0]?.view } }
    }

    /// One host's state and latest record; `nil` when it is not watched.
    public func hostView(_ host: String) -> HostView? {
        state.withLock { $0.entries[host]?.view }
    }

    /// The watched hosts that have not ended a collection yet (`/readyz` waits for none).
    public func hostsWithoutRecord() -> [String] {
        state.withLock { state in state.order.filter { state.entries[$0]?.latest == nil } }
    }
}
