import Foundation
import HostStats
import HostscopeCore
import OrderedJSON
import TerminalUI
import TestSupport
import Testing

@Suite struct SnapshotTableTests {
    @Test func aMacSnapshotShowsOnlyTheCPUSharesMacOSReports() throws {
        let url = Repository.fixtures.appendingPathComponent("probes/macos-14.4.1-apple-silicon/snapshot.json")
        let record = try SnapshotRecord(json: JSONParser.parse(String(contentsOf: url, encoding: .utf8)))
        let table = SnapshotTable.render(record)
        #expect(table.contains("macOS 14.4.1 · kernel 23.4.0 arm64"))
        #expect(table.contains("(user 21.4, system 9.5) · 10 cores · over 1000 ms"))
        #expect(!table.contains("iowait"))
    }
}
