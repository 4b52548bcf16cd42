import Foundation
import HostStats
import PropertyBased
import Testing
import ValueFormats

/// An RFC 4180 reader, strict where the writer must be: a field is quoted or holds no quote, CR or LF; a
/// quote inside a quoted field is doubled; every record ends with CRLF.
enum RFC4180Reader {
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    static func records(_ text: String) throws -> [[String]] {
        var records: [[String]] = []
        var fields: [String] = []
        var field = ""
        var scalars = Array(text.unicodeScalars)[...]
        var atFieldStart = true
        while let scalar = scalars.popFirst() {
            switch scalar {
            case "\"" where atFieldStart:
                atFieldStart = false
                while true {
                    guard let next = scalars.popFirst() else { throw Malformed(description: "unclosed quote") }
                    if next == "\"" {
                        if scalars.first == "\"" {
                            scalars.removeFirst()
                            field.unicodeScalars.append("\"")
                        } else {
                            break
                        }
                    } else {
                        field.unicodeScalars.append(next)
                    }
                }
                guard let after = scalars.first, after == "," || after == "\r" else {
                    throw Malformed(description: "text after a closing quote")
                }
            case ",":
                fields.append(field)
                field = ""
                atFieldStart = true
            case "\r":
                guard scalars.popFirst() == "\n" else { throw Malformed(description: "CR without LF") }
                fields.append(field)
                records.append(fields)
                fields = []
                field = ""
                atFieldStart = true
            case "\"", "\n":
                throw Malformed(description: "a bare \(scalar == "\n" ? "LF" : "quote") in an unquoted field")
            default:
                atFieldStart = false
                field.unicodeScalars.append(scalar)
            }
        }
        guard fields.isEmpty, field.isEmpty else { throw Malformed(description: "the last record has no CRLF") }
        return records
    }
}

/// Text a host or a user can put in a CSV field: commas, quotes, CR, LF and any other character.
let fieldText = anyScalar(from: 1).array(of: 0...10)
    .map { String(String.UnicodeScalarView($0)) }
let csvText = zip(fieldText, Gen.element(of: [",", "\"", "\r", "\n", "\r\n", "\"\"", " ", ""]), fieldText)
    .map { $0 + ($1 ?? "") + $2 }

@Suite struct CSVRoundTripPropertyTests {
    @Test func aWideRowReadsBackAsTheSameFieldsWhateverTheHostAndWarningsHold() async {
        await propertyCheck(
            count: 400, input: csvText, csvText.array(of: 0...3), Gen.uint64(), Gen.double(in: -1e12...1e12)
        ) { host, warnings, bytes, figure in
            let snapshot = Snapshot(
                host: host, collectedAt: Date(timeIntervalSince1970: 1_764_000_000.5), collector: "proc",
                durationMs: figure, uptimeSeconds: figure,
                memory: MemoryStats(totalBytes: bytes, usedBytes: bytes / 2), warnings: warnings)
            let text = SnapshotCSV.wideHeader + SnapshotCSV.wideRow(.snapshot(snapshot))
            let records = try RFC4180Reader.records(text)
            try #require(records.count == 2)
            let row = Dictionary(uniqueKeysWithValues: zip(records[0], records[1]))
            #expect(records[0] == SnapshotCSV.wideColumns)
            #expect(row["host"] == host)
            #expect(row["warnings"] == warnings.joined(separator: "; "))
            #expect(row["memory.total_bytes"].flatMap { UInt64($0) } == bytes)
            #expect(row["memory.used_bytes"].flatMap { UInt64($0) } == bytes / 2)
            // Seconds keep two decimals in CSV: the figure to within half a hundredth.
            let uptime = try #require(row["uptime_seconds"].flatMap { Double($0) })
            #expect(abs(uptime - figure) <= 0.005 + abs(figure) * 1e-15, "\(figure) became \(uptime)")
            #expect(row["uptime_seconds"]?.split(separator: ".").last?.count == 2)
            #expect(row["timestamp"].flatMap(RFC3339.parse) == Date(timeIntervalSince1970: 1_764_000_000.5))
        }
    }

    @Test func aFieldHoldingCRLFIsQuoted() throws {
        // "\r\n" is one Character in Swift, which a Character comparison with "\n" or "\r" misses.
        #expect(SnapshotCSV.field("line one\r\nline two") == "\"line one\r\nline two\"")
        let failure = CollectionFailure(
            host: "web1", collectedAt: Date(timeIntervalSince1970: 0), kind: .command, message: "bash: x\r\ny")
        #expect(try RFC4180Reader.records(SnapshotCSV.wideRow(.failure(failure))).count == 1)
    }

    @Test func anErrorRowKeepsItsMessageWhole() async {
        await propertyCheck(count: 300, input: csvText, csvText) { host, message in
            let failure = CollectionFailure(
                host: host, collectedAt: Date(timeIntervalSince1970: 0), kind: .command, message: message)
            let records = try RFC4180Reader.records(SnapshotCSV.wideRow(.failure(failure)))
            try #require(records.count == 1)
            let row = Dictionary(uniqueKeysWithValues: zip(SnapshotCSV.wideColumns, records[0]))
            #expect(records[0].count == SnapshotCSV.wideColumns.count)
            #expect(row["host"] == host)
            #expect(row["error"] == "command")
            #expect(row["error_message"] == message)
        }
    }

    @Test func longRowsKeepMountAndInterfaceNames() async {
        await propertyCheck(count: 300, input: csvText, csvText, Gen.uint64()) { mount, interface, figure in
            let snapshot = Snapshot(
                host: "h", collectedAt: Date(timeIntervalSince1970: 0), collector: "proc",
                disks: [DiskStats(filesystem: "/dev/x", mount: mount, sizeBytes: figure)],
                network: [NetworkInterfaceStats(interface: interface, rxBytes: figure)])
            let records = try RFC4180Reader.records(SnapshotCSV.longHeader + SnapshotCSV.longRows(.snapshot(snapshot)))
            #expect(records.first == SnapshotCSV.longColumns)
            #expect(records.dropFirst().allSatisfy { $0.count == SnapshotCSV.longColumns.count })
            #expect(
                records.contains {
                    $0[2] == "disk" && $0[3] == mount && $0[4] == "size_bytes" && $0[5] == String(figure)
                })
            #expect(records.contains { $0[2] == "network" && $0[3] == interface && $0[4] == "rx_bytes" })
        }
    }
}
