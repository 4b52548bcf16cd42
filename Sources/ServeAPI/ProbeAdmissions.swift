import Synchronization
import ValueFormats

/// Why `/probe` refused a target, the `reason` of `hostscope_probe_refusals_total`.
public enum ProbeRefusal: String, Sendable, CaseIterable {
    /// Neither a host of the fleet nor a name its patterns admit.
    case notInFleet = "not_in_fleet"
    /// A name a pattern admits, while ``ProbeAdmissions/maximumHosts`` such hosts are watched already.
    case limit
}

/// The hosts `/probe` added through the fleet's patterns: at most ``maximumHosts`` at once, each forgotten
/// once it is not probed again in time, so that requests cannot grow the watched fleet without bound.
///
/// A host is expired when it has not been probed for three times the interval between its last two probes
/// (a scraper that stopped asking for it), and never sooner than ``minimumExpiry``; a host probed only once
/// is kept ``firstProbeExpiry`` at least. Time is passed in, so tests need no clock.
public final class ProbeAdmissions: Sendable {
    /// The most hosts added by probes watched at once.
    public let maximumHosts: Int
    /// The shortest time a host added by a probe is kept without another probe (`serve` uses three
    /// collection intervals).
    public let minimumExpiry: Duration
    /// How long a host probed once is kept without another probe, at least.
    public static let firstProbeExpiry: Duration = .seconds(300)

    private struct Entry {
        var lastProbe: ContinuousClock.Instant
        var interval: Duration?
    }

    private let entries = Lock([String: Entry]())

    public init(maximumHosts: Int, minimumExpiry: Duration) {
        self.maximumHosts = max(0, maximumHosts)
        self.minimumExpiry = minimumExpiry
    }

    /// Notes a probe of `host`, which a pattern admits: a host added before is kept (its probe interval
    /// noted); a new one is admitted while fewer than ``maximumHosts`` are. Returns whether it may be watched.
    public func admit(_ host: String, now: ContinuousClock.Instant) -> Bool {
        entries.withLock { entries in
            if entries[host] != nil {
                Self.note(&entries[host]!, now: now)
                return true
            }
            guard entries.count < maximumHosts else { return false }
            entries[host] = Entry(lastProbe: now, interval: nil)
            return true
        }
    }

    /// Notes a probe of a watched host; one not added by a probe is left alone.
    public func touch(_ host: String, now: ContinuousClock.Instant) {
        entries.withLock { entries in
            if entries[host] != nil { Self.note(&entries[host]!, now: now) }
        }
    }

    /// The hosts not probed in time at `now`, forgotten here; the caller stops watching them.
    public func expire(now: ContinuousClock.Instant) -> [String] {
        entries.withLock { entries in
            let expired = entries.filter { _, entry in
                let keep = max(minimumExpiry, entry.interval.map { $0 * 3 } ?? Self.firstProbeExpiry)
                return entry.lastProbe.duration(to: now) > keep
            }.keys.sorted()
            for host in expired { entries[host] = nil }
            return expired
        }
    }

    /// Hosts added by probes and kept now.
    public var count: Int { entries.withLock { $0.count } }

    private static func note(_ entry: inout Entry, now: ContinuousClock.Instant) {
        let since = entry.lastProbe.duration(to: now)
        // Probes a moment apart (two scrapers, a retry) say nothing of the interval.
        if since >= .seconds(1) { entry.interval = since }
        entry.lastProbe = max(entry.lastProbe, now)
    }
}
