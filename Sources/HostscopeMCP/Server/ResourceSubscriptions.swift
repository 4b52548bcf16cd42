import HostStats
import HostscopeCore
import MCP
import Synchronization
import ValueFormats

/// One session's `resources/subscribe`: the snapshot resources it follows, and, from its first subscription on,
/// a reader of `serve`'s watch that sends `notifications/resources/updated` for each new record of a followed
/// host. Without a watch (stdio) nothing can be followed, and a subscription is refused saying so.
final class ResourceSubscriptions: Sendable {
    private struct State {
        var hosts: Set<String> = []
        var reader: Task<Void, Never>?
        var closed = false
    }

    private let watch: FleetWatch?
    private let state = Lock(State())

    init(watch: FleetWatch?) { self.watch = watch }

    /// Follows the snapshot resource `uri` of a host this server may reach.
    ///
    /// - Throws: `MCPError.invalidParams` for another resource, a host outside the set, or no watch to follow.
    func subscribe(_ uri: String, resources: MCPResources, server: Server) throws {
        guard let watch else {
            throw MCPError.invalidParams(
                "this server has no live watch of its hosts (hostscope mcp on stdio), so nothing can be followed; "
                    + "read \(uri) again instead, or use serve's /mcp")
        }
        let host = try resources.snapshotHost(uri).displayName
        let start = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.hosts.insert(host)
            return state.reader == nil
        }
        guard start else { return }
        // Subscribed before the task starts, so that no record after this answer is missed.
        let events = watch.subscribe(buffer: 256)
        let reader = Task { [weak self] in
            for await event in events {
                guard case .record(let record) = event, let self else { continue }
                guard self.state.withLock({ $0.hosts.contains(record.host) }) else { continue }
                let uri = MCPResources.snapshotURI(record.host)
                try? await server.notify(ResourceUpdatedNotification.message(.init(uri: uri)))
            }
        }
        let keep = state.withLock { state -> Bool in
            guard !state.closed, state.reader == nil else { return false }
            state.reader = reader
            return true
        }
        if !keep { reader.cancel() }
    }

    /// Stops following `uri` (a resource not followed is left alone, as the protocol asks).
    func unsubscribe(_ uri: String) {
        guard let host = MCPResources.snapshotHostName(uri) else { return }
        state.withLock { _ = $0.hosts.remove(host) }
    }

    /// Stops reading the watch.
    func close() {
        let reader = state.withLock { state in
            state.closed = true
            defer { state.reader = nil }
            return state.reader
        }
        reader?.cancel()
    }
}
