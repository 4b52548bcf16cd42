public import Foundation

/// Why a collection produced no snapshot. The raw values are the `error.kind` strings of
/// DESIGN.md.
public enum FailureKind: String, Sendable, Equatable, CaseIterable {
    case timeout
    case auth
    case hostKey = "host_key"
    case connect
    case command
    case parse
}

/// A collection that failed: it is recorded like a snapshot so that gaps stay visible.
public struct CollectionFailure: Sendable, Equatable {
    public var host: String
    public var collectedAt: Date
    public var kind: FailureKind
    public var message: String
    /// The instant this record was due at, for a record of a schedule (`watch`).
    public var slot: Date?

    public init(host: String, collectedAt: Date, kind: FailureKind, message: String) {
        self.host = host
        self.collectedAt = collectedAt
        self.kind = kind
        self.message = message
    }
}

/// What one collection of one host produced: a snapshot, or the reason there is none.
public enum SnapshotRecord: Sendable, Equatable {
    case snapshot(Snapshot)
    case failure(CollectionFailure)

    public var host: String {
        switch self {
        case .snapshot(let snapshot): snapshot.host
        case .failure(let failure): failure.host
        }
    }

    public var collectedAt: Date {
        switch self {
        case .snapshot(let snapshot): snapshot.collectedAt
        case .failure(let failure): failure.collectedAt
        }
    }

    /// The instant the record was due at, when it belongs to a schedule.
    public var slot: Date? {
        get {
            switch self {
            case .snapshot(let snapshot): snapshot.slot
            case .failure(let failure): failure.slot
            }
        }
        set {
            switch self {
            case .snapshot(var snapshot):
                snapshot.slot = newValue
                self = .snapshot(snapshot)
            case .failure(var failure):
                failure.slot = newValue
                self = .failure(failure)
            }
        }
    }
}
