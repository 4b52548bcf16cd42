import Foundation
import HostStats
import OrderedJSON
import Testing

/// CSV figures are written to the precision they mean; the JSON of the same record keeps every digit.
@Suite struct SnapshotCSVTests {
    static let record = SnapshotRecord.snapshot(
        Snapshot(
            host: "web1", collectedAt: Date(timeIntervalSince1970: 1_795_000_000), collector: "proc",
            durationMs: 4.2345678901234567, uptimeSeconds: 86_400.123456789,
            load: LoadAverage(one: 0.123456789, five: 1.005, fifteen: 12),
            cpu: CPUStats(cores: 2, busyPercent: 12.345678901234567, idlePercent: 87.65432109876543),
            memory: MemoryStats(totalBytes: 8_000_000_000, usedBytes: 1_234_567_890, usedPercent: 15.432098625),
            disks: [
                DiskStats(
                    filesystem: "/dev/vda1", type: "ext4", mount: "/", sizeBytes: 100, usedBytes: 33,
                    availableBytes: 67, usedPercent: 33.00000000000001, readBytesPerSecond: 51_234.56789,
                    writeBytesPerSecond: 0.004)
            ],
            network: [
                NetworkInterfaceStats(
                    interface: "eth0", rxBytes: 7, txBytes: 9, rxBytesPerSecond: 1234.5678, txBytesPerSecond: 0.1),
                NetworkInterfaceStats(
                    interface: "lo", rxBytes: 1, txBytes: 1, rxBytesPerSecond: 99, txBytesPerSecond: 99),
            ],
            processes: [], warnings: []))

    static func wideRow(_ record: SnapshotRecord) -> [String: String] {
        let fields = SnapshotCSV.wideRow(record).dropLast(2).split(separator: ",", omittingEmptySubsequences: false)
        return Dictionary(uniqueKeysWithValues: zip(SnapshotCSV.wideColumns, fields.map(String.init)))
    }

    @Test func wideRowsCarryPercentagesRatesAndLoadsToTwoDecimalsAndBytesAsIntegers() {
        let row = Self.wideRow(Self.record)
        #expect(row["cpu.busy_percent"] == "12.35")
        #expect(row["cpu.idle_percent"] == "87.65")
        #expect(row["memory.used_percent"] == "15.43")
        #expect(row["memory.used_bytes"] == "1234567890")
        #expect(row["load.1m"] == "0.12")
        #expect(row["load.15m"] == "12.00")
        #expect(row["uptime_seconds"] == "86400.12")
        #expect(row["disk.max_used_percent"] == "33.00")
        #expect(row["disk.read_bytes_per_second"] == "51234.57")
        #expect(row["disk.write_bytes_per_second"] == "0.00")
        // The loopback is left out of the host's network rates.
        #expect(row["network.rx_bytes_per_second"] == "1234.57")
        #expect(row["network.tx_bytes_per_second"] == "0.10")
        #expect(row["duration_ms"] == "4.235")
        #expect(row["cpu.user_percent"] == "", "an unknown figure stays an empty field")
        // No figure has more decimals than its kind keeps.
        for (column, value) in row where column != "timestamp" && column != "slot" {
            let decimals = value.split(separator: ".").dropFirst().first?.count ?? 0
            #expect(decimals <= 3, "\(column) = \(value)")
        }
    }

    @Test func longRowsRoundTheSameWay() {
        let rows = SnapshotCSV.longRows(Self.record).split(separator: "\r\n").map(String.init)
        #expect(rows.contains { $0.hasSuffix(",disk,/,used_percent,33.00") })
        #expect(rows.contains { $0.hasSuffix(",disk,/,read_bytes_per_second,51234.57") })
        #expect(rows.contains { $0.hasSuffix(",disk,/,size_bytes,100") })
        #expect(rows.contains { $0.hasSuffix(",network,eth0,rx_bytes_per_second,1234.57") })
        #expect(rows.contains { $0.hasSuffix(",network,lo,tx_bytes_per_second,99.00") })
    }

    @Test func theJSONOfTheSameRecordKeepsEveryDigit() {
        let json = Self.record.jsonValue.jsonString
        #expect(json.contains(#""busy_percent":12.345678901234567"#))
        #expect(json.contains(#""duration_ms":4.234567890123457"#))
        #expect(json.contains(#""read_bytes_per_second":51234.56789"#))
    }

    @Test func roundingIsToNearestAndNeverNegativeZero() {
        #expect(SnapshotCSV.fixed(2.675, 2) == "2.67", "2.675 is 2.67499… in binary, as printf rounds it")
        #expect(SnapshotCSV.fixed(0.125, 2) == "0.12", "ties go to even, as printf rounds them")
        #expect(SnapshotCSV.fixed(99.999, 2) == "100.00")
        #expect(SnapshotCSV.fixed(-0.001, 2) == "0.00")
        #expect(SnapshotCSV.fixed(-1.5, 1) == "-1.5")
        #expect(SnapshotCSV.fixed(.nan, 2) == "")
        #expect(SnapshotCSV.fixed(.infinity, 2) == "")
        #expect(SnapshotCSV.fixed(nil, 2) == "")
        #expect(SnapshotCSV.fixed(1e20, 2) == "100000000000000000000.00")
    }
}
