public import HostStats

/// What a watch without a live view says on stderr about its hosts: a host's failure when it begins or its
/// sentence changes, and its recovery; nothing for the ticks in between, so a host down for a day is one
/// line and not one per tick.
public struct HostFailureNotices: Sendable {
    /// The failure each failing host is in, as `kind: message`.
    private var failing: [String: String] = [:]

    /// Notices with no host failing yet.
    public init() {}

    /// The sentence `record` calls for, or `nil` when its host's state has not changed.
    public mutating func notice(for record: SnapshotRecord) -> String? {
        switch record {
        case .failure(let failure):
            let state = "\(failure.kind.rawValue): \(failure.message)"
            guard failing.updateValue(state, forKey: failure.host) != state else { return nil }
            return "\(failure.host) failed (\(failure.kind.rawValue)): \(failure.message); "
                + "the watch goes on trying it every tick"
        case .snapshot(let snapshot):
            guard failing.removeValue(forKey: snapshot.host) != nil else { return nil }
            return "\(snapshot.host) answers again"
        }
    }
}
