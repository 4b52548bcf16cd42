public import HostStats

/// What a watch without a live view says on stderr about its hosts: a host's failure once it has failed two ticks
/// in a row (a first tick's slow connect is no news) and whenever its sentence changes after that, and its
/// recovery; nothing for the ticks in between, so a host down for a day is one line and not one per tick.
public struct HostFailureNotices: Sendable {
    /// Hosts whose last tick failed, with that failure as `kind: message` and whether it was said.
    private var failing: [String: (state: String, said: Bool)] = [:]

    /// Notices with no host failing yet.
    public init() {}

    /// The sentence `record` calls for, or `nil` when its host's state has not changed enough to say.
    public mutating func notice(for record: SnapshotRecord) -> String? {
        switch record {
        case .failure(let failure):
            let state = "\(failure.kind.rawValue): \(failure.message)"
            guard let previous = failing[failure.host] else {
                failing[failure.host] = (state, false)
                return nil
            }
            failing[failure.host] = (state, true)
            guard !previous.said || previous.state != state else { return nil }
            return "\(failure.host) failed (\(failure.kind.rawValue)): \(failure.message); "
                + "the watch goes on trying it every tick"
        case .snapshot(let snapshot):
            guard let previous = failing.removeValue(forKey: snapshot.host), previous.said else { return nil }
            return "\(snapshot.host) answers again"
        }
    }
}
