import HostStats
import SSHTransport

/// One-off snapshots of several hosts, collected concurrently; a slow or failing host does not
/// hold up the others, and every host yields one record.
public enum FleetSnapshot {
    /// Records in the order of `hosts`.
    public static func collect(_ hosts: [ResolvedHost], options: CollectorOptions) async -> [SnapshotRecord] {
        await withTaskGroup(of: (Int, SnapshotRecord).self) { group in
            for (index, host) in hosts.enumerated() {
                group.addTask {
                    switch host {
                    case .local:
                        let collector = HostCollector(host: host.displayName, runner: LocalCommandRunner(), options: options)
                        return (index, await SnapshotTracing.collect(host: host.displayName, options: options) {
                            await collector.snapshot()
                        })
                    case .ssh(let ssh):
                        let connection = HostConnection(options: ssh)
                        let collector = HostCollector(host: host.displayName, runner: connection, options: options)
                        let record = await SnapshotTracing.collect(host: host.displayName, options: options) {
                            await collector.snapshot()
                        }
                        await connection.close()
                        return (index, record)
                    }
                }
            }
            var records = [SnapshotRecord?](repeating: nil, count: hosts.count)
            for await (index, record) in group { records[index] = record }
            return records.compactMap { $0 }
        }
    }
}
