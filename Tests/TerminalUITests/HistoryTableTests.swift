import Foundation
import HostStats
import HostscopeCore
import TerminalUI
import TestSupport
import Testing

/// `history` on a terminal: the summary of a range per host.
@Suite struct HistoryTableTests {
    static let start = Date(timeIntervalSince1970: 1_795_000_000)

    static func tick(_ host: String, _ seconds: Double, busy: Double, rx: Double?) -> SnapshotRecord {
        .snapshot(
            Snapshot(
                host: host, collectedAt: start.addingTimeInterval(seconds), collector: "proc",
                load: LoadAverage(one: busy / 100, five: 0, fifteen: 0), cpu: CPUStats(busyPercent: busy),
                memory: MemoryStats(usedPercent: 40 + seconds / 60),
                disks: [
                    DiskStats(filesystem: "/dev/vda1", mount: "/", usedPercent: 71.25),
                    DiskStats(filesystem: "tmpfs", mount: "/run", usedPercent: 1),
                ],
                network: [
                    NetworkInterfaceStats(interface: "eth0", rxBytesPerSecond: rx, txBytesPerSecond: rx.map { $0 / 4 }),
                    NetworkInterfaceStats(interface: "lo", rxBytesPerSecond: 1e9, txBytesPerSecond: 1e9),
                ]))
    }

    /// web1 every 10 s for 5 minutes (a first tick without rates, one connect failure); db-1 only failing.
    static func summary() -> HistorySummary {
        var web1 = HostHistorySummary(host: "web1")
        for index in 0...30 {
            let seconds = Double(index * 10)
            if index == 17 {
                web1.add(
                    .failure(
                        CollectionFailure(
                            host: "web1", collectedAt: start.addingTimeInterval(seconds), kind: .connect,
                            message: "cannot connect to web1 (10.0.0.7:22): connection refused; is sshd running?")))
            } else {
                web1.add(
                    tick(
                        "web1", seconds, busy: Double(index % 7) * 12.5 + 0.25,
                        rx: index == 0 ? nil : Double(index) * 10_240))
            }
        }
        var db = HostHistorySummary(host: "db-1")
        db.add(
            .failure(
                CollectionFailure(
                    host: "db-1", collectedAt: start, kind: .auth, message: "db-1: the server refused every key")))
        return HistorySummary(hosts: [db, web1], unreadable: 0)
    }

    @Test func theFiguresAreSummarisedOverTheRange() throws {
        let web1 = try #require(Self.summary().hosts.last)
        #expect(web1.samples == 31)
        #expect(web1.errors == 1)
        #expect(web1[.cpuBusy].count == 30)
        #expect(web1[.cpuBusy].minimum == 0.25)
        #expect(web1[.cpuBusy].maximum == 75.25)
        #expect(web1[.cpuBusy].last == Double(30 % 7) * 12.5 + 0.25)
        // The first tick has no rates: 29 of 31 records give one (the failure gives none).
        #expect(web1[.networkReceive].count == 29)
        #expect(web1[.networkReceive].minimum == 10_240)
        #expect(web1[.networkTransmit].maximum == 76_800.0)
        #expect(web1[.fullestDisk].mean == 71.25)
        #expect(web1.first == Self.start && web1.last == Self.start.addingTimeInterval(300))
    }

    @Test func eachFigureDrawsItsCourseAsASparklineWhereTheLineHasRoom() throws {
        let table = HistoryTable.render(Self.summary(), width: 120)
        // web1's table, the second: db-1 only failed and has no course to draw.
        let cpu = try #require(table.split(separator: "\n").last { $0.hasPrefix("CPU busy") })
        let blocks = cpu.filter { "▁▂▃▄▅▆▇█".contains($0) }
        #expect(blocks.count == 30, "\(cpu)")
        // 0.25, 12.75 … 75.25 again and again: the lowest and the highest block of the 0–100 scale recur.
        #expect(blocks.hasPrefix("▁▂▃▄▅▅▆▁"), "\(cpu)")
        #expect(table.contains("TREND"))
        // Too narrow for one: the figures only.
        #expect(!HistoryTable.render(Self.summary(), width: 60).contains("TREND"))
        // Nor where there is no course to draw: db-1 only failed.
        #expect(!table.components(separatedBy: "\n\n")[0].contains("TREND"))
    }

    @Test func aTrendStaysBoundedAndAveragesItsRuns() {
        var summary = FigureSummary()
        for value in 0..<128 { summary.add(Double(value)) }
        #expect(summary.trend.count == 64)
        #expect(summary.trend.first == 0.5 && summary.trend.last == 126.5)
        for value in 0..<10_000 { summary.add(Double(value)) }
        #expect(summary.trend.count <= FigureSummary.trendCapacity)
        #expect(summary.count == 10_128)
    }

    @Test(arguments: [80, 120])
    func theTableMatchesItsGoldenAndFitsTheWidth(_ width: Int) throws {
        let table = HistoryTable.render(Self.summary(), width: width)
        for line in table.split(separator: "\n") {
            #expect(line.count <= width, "\(line.count) columns: \(line)")
        }
        #expect(table == (try golden("terminal/history-\(width).txt", recording: table)))
    }

    @Test func anEmptyRangeSaysSo() {
        #expect(
            HistoryTable.render(HistorySummary(hosts: [], unreadable: 0), width: 80) == "no records in that range\n")
    }
}
