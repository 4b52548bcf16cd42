extension Snapshot {
    /// The interfaces that carry the host's own traffic: every one but the loopback (`lo`, macOS's `lo0`).
    public var externalInterfaces: [NetworkInterfaceStats] {
        network.filter { $0.interface != "lo" && !$0.interface.hasPrefix("lo0") }
    }

    /// Bytes received per second over ``externalInterfaces``, or `nil` when no interface has a rate yet.
    public var networkReceiveRate: Double? { Self.sum(externalInterfaces.map(\.rxBytesPerSecond)) }

    /// Bytes sent per second over ``externalInterfaces``, or `nil` when no interface has a rate yet.
    public var networkTransmitRate: Double? { Self.sum(externalInterfaces.map(\.txBytesPerSecond)) }

    /// Bytes read per second over every filesystem's device, or `nil` when none has a rate yet.
    public var diskReadRate: Double? { Self.sum(disks.map(\.readBytesPerSecond)) }

    /// Bytes written per second over every filesystem's device, or `nil` when none has a rate yet.
    public var diskWriteRate: Double? { Self.sum(disks.map(\.writeBytesPerSecond)) }

    /// The used share of the fullest filesystem, or `nil` when no filesystem has one.
    public var fullestDiskUsedPercent: Double? { disks.compactMap(\.usedPercent).max() }

    /// The sum of the known values, or `nil` when none is known (a first tick's rates).
    private static func sum(_ values: [Double?]) -> Double? {
        let known = values.compactMap { $0 }
        return known.isEmpty ? nil : known.reduce(0, +)
    }
}
