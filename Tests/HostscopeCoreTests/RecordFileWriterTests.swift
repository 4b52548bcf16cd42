import Foundation
import HostStats
import HostscopeCore
import OrderedJSON
import TestSupport
import Testing

func sampleRecord(_ host: String, _ second: Int, failed: Bool = false) -> SnapshotRecord {
    let date = Date(timeIntervalSince1970: 1_795_000_000 + Double(second))
    if failed {
        return .failure(
            CollectionFailure(host: host, collectedAt: date, kind: .connect, message: "refused, \"quoted\""))
    }
    return .snapshot(
        Snapshot(
            host: host, collectedAt: date, collector: "proc", durationMs: 3,
            cpu: CPUStats(cores: 2, busyPercent: 12.5, perCore: [CoreStats(core: 0, busyPercent: 10)]),
            memory: MemoryStats(totalBytes: 1000, usedBytes: 400, usedPercent: 40),
            disks: [DiskStats(filesystem: "/dev/vda1", type: "ext4", mount: "/mnt/with, comma", sizeBytes: 10)],
            network: [NetworkInterfaceStats(interface: "eth0", rxBytes: 5)]))
}

@Suite struct RecordFileWriterTests {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "hostscope-writer-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    private func read(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    @Test func csvHasOneHeaderAndRowsThatNeverShiftUnderIt() throws {
        let path = directory + "/fleet.csv"
        let writer = try RecordFileWriter(path: path, format: .csv)
        try writer.write(sampleRecord("web1", 0))
        try writer.write(sampleRecord("web2", 0, failed: true))
        let rows = read(path).components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(rows.count == 3)
        #expect(rows[0] == SnapshotCSV.wideHeader.trimmingCharacters(in: .newlines))
        // Quoted fields (the error message) must not add columns.
        let columns = SnapshotCSV.wideColumns.count
        #expect(csvFields(rows[1]).count == columns)
        #expect(csvFields(rows[2]).count == columns)
        #expect(csvFields(rows[2])[2] == "connect")
    }

    @Test func aCSVRowCutByACrashIsDroppedAndAppendingKeepsTheHeader() throws {
        let path = directory + "/fleet.csv"
        try RecordFileWriter(path: path, format: .csv).write(sampleRecord("web1", 0))
        // What a kill -9 in the middle of a write leaves.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("2026-11-21T00:00:00.000Z,web1,,12.".utf8))
        try handle.close()
        let writer = try RecordFileWriter(path: path, format: .csv)
        try writer.write(sampleRecord("web1", 5))
        let rows = read(path).components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(rows.count == 3)
        #expect(rows.filter { $0.hasPrefix("timestamp,") }.count == 1)
        #expect(rows.allSatisfy { csvFields($0).count == SnapshotCSV.wideColumns.count })
    }

    @Test func aScheduledRecordCarriesItsSlotInTheLastCSVColumnAndInJSON() throws {
        var record = sampleRecord("web1", 0)
        record.slot = Date(timeIntervalSince1970: 1_795_000_000)
        let path = directory + "/slots.csv"
        try RecordFileWriter(path: path, format: .csv).write(record)
        let rows = read(path).components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(SnapshotCSV.wideColumns.last == "slot")
        #expect(csvFields(rows[1]).last == "2026-11-18T11:06:40.000Z")
        #expect(record.jsonValue["slot"]?.stringValue == "2026-11-18T11:06:40.000Z")
        #expect(try SnapshotRecord(json: record.jsonValue).slot == record.slot)
        // A one-off snapshot has no slot: its JSON has no such key.
        #expect(sampleRecord("web1", 0).jsonValue["slot"] == nil)
    }

    @Test func aCSVFileWrittenBeforeTheSlotColumnIsAppendedToInItsOwnColumns() throws {
        let path = directory + "/old.csv"
        let oldRow = SnapshotCSV.wideRow(sampleRecord("web1", 0), slotColumn: false)
        try (SnapshotCSV.wideHeaderWithoutSlot + oldRow).write(toFile: path, atomically: true, encoding: .utf8)
        var record = sampleRecord("web1", 5)
        record.slot = Date(timeIntervalSince1970: 1_795_000_005)
        try RecordFileWriter(path: path, format: .csv).write(record)
        let rows = read(path).components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(rows.count == 3)
        #expect(rows.allSatisfy { csvFields($0).count == SnapshotCSV.wideColumnsWithoutSlot.count })
    }

    @Test func fleetLabelsAreColumnsAfterTheFixedOnesAndAppendingNeedsTheSameLabels() throws {
        let path = directory + "/labelled.csv"
        let labels = RecordLabels(profiles: [
            "web1": HostProfile(labels: ["env": "prod", "role": "web"]), "db1": HostProfile(labels: ["env": "a,b"]),
        ])
        try RecordFileWriter(path: path, format: .csv, labels: labels).write(sampleRecord("web1", 0))
        let writer = try RecordFileWriter(path: path, format: .csv, labels: labels)
        try writer.write(sampleRecord("db1", 5))
        try writer.write(sampleRecord("other", 6, failed: true))
        let rows = read(path).components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(rows.count == 4)
        #expect(rows[0] == SnapshotCSV.wideHeader.trimmingCharacters(in: .newlines) + ",label.env,label.role")
        let columns = SnapshotCSV.wideColumns.count + 2
        #expect(rows.allSatisfy { csvFields($0).count == columns }, "\(rows)")
        #expect(csvFields(rows[1]).suffix(2) == ["prod", "web"])
        #expect(csvFields(rows[2]).suffix(2) == ["a,b", ""])
        #expect(csvFields(rows[3]).suffix(2) == ["", ""])
        // A run with other labels would shift the columns: refused, as any other header.
        #expect(throws: RecordWriteError.self) { _ = try RecordFileWriter(path: path, format: .csv) }
    }

    @Test func aCSVFileWithOtherColumnsIsNotMixedWith() throws {
        let path = directory + "/other.csv"
        try "a,b,c\r\n1,2,3\r\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: RecordWriteError.self) { _ = try RecordFileWriter(path: path, format: .csv) }
        try RecordFileWriter(path: directory + "/long.csv", format: .csv, csvLayout: .long).write(sampleRecord("w", 0))
        #expect(throws: RecordWriteError.self) {
            _ = try RecordFileWriter(path: directory + "/long.csv", format: .csv, csvLayout: .wide)
        }
    }

    @Test func ndjsonLinesAreWholeRecordsAndACutLineIsDropped() throws {
        let path = directory + "/fleet.ndjson"
        try RecordFileWriter(path: path, format: .ndjson).write(sampleRecord("web1", 0))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("{\"schema\":\"hostscope.sn".utf8))
        try handle.close()
        try RecordFileWriter(path: path, format: .ndjson).write(sampleRecord("web2", 1))
        let lines = read(path).split(separator: "\n")
        #expect(lines.count == 2)
        #expect(try lines.map { try JSONParser.parse(String($0))["host"] } == ["web1", "web2"])
    }

    @Test func theJSONArrayIsValidAfterEveryRecord() throws {
        let path = directory + "/fleet.json"
        let writer = try RecordFileWriter(path: path, format: .json)
        #expect(try JSONParser.parse(read(path)) == .array([]))
        for index in 0..<3 {
            try writer.write(sampleRecord("web\(index)", index))
            let array = try JSONParser.parse(read(path)).arrayValue ?? []
            #expect(array.count == index + 1)
        }
    }

    @Test func aJSONArrayCutMidRecordIsRepairedAndContinued() throws {
        let path = directory + "/fleet.json"
        let writer = try RecordFileWriter(path: path, format: .json)
        try writer.write(sampleRecord("web1", 0))
        try writer.write(sampleRecord("web2", 1))
        // Cut the file inside the second record, as a kill during its write would.
        let full = read(path)
        try String(full.prefix(full.count - 40)).write(toFile: path, atomically: true, encoding: .utf8)
        let resumed = try RecordFileWriter(path: path, format: .json)
        try resumed.write(sampleRecord("web3", 2))
        let hosts = try JSONParser.parse(read(path)).arrayValue?.map { $0["host"] }
        #expect(hosts == ["web1", "web3"])
    }

    @Test func aFullDiskAndAnUnwritablePathGiveOneClearSentence() throws {
        let full = try RecordFileWriter(path: "/dev/full", format: .csv)
        do {
            try full.write(sampleRecord("web1", 0))
            Issue.record("a write to /dev/full succeeded")
        } catch {
            #expect(error.message.contains("the disk is full"))
        }
        do {
            _ = try RecordFileWriter(path: "/nonexistent/dir/out.csv", format: .csv)
            Issue.record("opened a file in a missing directory")
        } catch {
            #expect(error.message.contains("/nonexistent/dir/out.csv"))
        }
    }

    /// A write the disk could hold only in part used to leave that part in the file: a CSV row or NDJSON
    /// line cut short, then the next record glued to it, or a JSON array without its closing bracket.
    @Test(
        .enabled(if: SmallFileSystem.available, "needs the right to mount a tmpfs"),
        arguments: RecordFileFormat.allCases)
    func aRecordTheFullDiskCannotHoldIsTakenBackWholeAndWritingGoesOnOnceThereIsRoom(
        format: RecordFileFormat
    ) throws {
        let volume = try SmallFileSystem(kilobytes: 64)
        defer { volume.unmount() }
        let path = volume.file("fleet.\(format.rawValue)")
        let writer = try RecordFileWriter(path: path, format: format)
        try writer.write(sampleRecord("web1", 0))
        // Fill every page left: the file's last page keeps its free bytes, so the records below fill
        // them and one of them is cut at the page's end, as a disk filling up between two records does.
        let ballast = volume.file("ballast")
        #expect(FileManager.default.createFile(atPath: ballast, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: ballast))
        while (try? handle.write(contentsOf: Data(count: 512))) != nil {}
        try handle.close()
        let sizeBefore = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        var failures = 0
        for second in 1...40 {
            do { try writer.write(sampleRecord("web1", second)) } catch {
                failures += 1
                #expect(error.message.contains("the disk is full"))
            }
        }
        #expect(failures > 0, "the disk never filled")
        let sizeFull = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(sizeFull >= sizeBefore)
        try FileManager.default.removeItem(atPath: ballast)
        try writer.write(sampleRecord("web2", 99))
        let contents = try String(contentsOfFile: path, encoding: .utf8)
        var hosts: [String] = []
        switch format {
        case .csv:
            let rows = contents.split(separator: "\r\n").dropFirst()
            let columns = SnapshotCSV.wideHeader.split(separator: ",").count
            for row in rows {
                #expect(row.split(separator: ",", omittingEmptySubsequences: false).count == columns, "\(row)")
                hosts.append(String(row.split(separator: ",", omittingEmptySubsequences: false)[1]))
            }
        case .ndjson:
            for line in contents.split(separator: "\n") {
                let value = try JSONParser.parse(String(line))
                hosts.append(value["host"]?.stringValue ?? "?")
            }
        case .json:
            let array = try #require(try JSONParser.parse(contents).arrayValue)
            hosts = array.map { $0["host"]?.stringValue ?? "?" }
        }
        #expect(hosts.last == "web2", "the record after the disk had room again is missing")
        #expect(hosts.count == 1 + (40 - failures) + 1)
    }

    @Test func theFormatIsInferredFromTheFileName() {
        #expect(RecordFileFormat.inferred(fromPath: "a/fleet.CSV") == .csv)
        #expect(RecordFileFormat.inferred(fromPath: "x.jsonl") == .ndjson)
        #expect(RecordFileFormat.inferred(fromPath: "x.json") == .json)
        #expect(RecordFileFormat.inferred(fromPath: "x.txt") == nil)
    }
}

/// RFC 4180 fields of one CSV row.
func csvFields(_ row: String) -> [String] {
    var fields: [String] = []
    var current = ""
    var quoted = false
    var iterator = Array(row).makeIterator()
    while let character = iterator.next() {
        if quoted {
            if character == "\"" {
                if let next = iterator.next() {
                    if next == "\"" {
                        current.append("\"")
                    } else {
                        quoted = false
                        if next == "," {
                            fields.append(current)
                            current = ""
                        } else {
                            current.append(next)
                        }
                    }
                } else {
                    quoted = false
                }
            } else {
                current.append(character)
            }
        } else if character == "\"" {
            quoted = true
        } else if character == "," {
            fields.append(current)
            current = ""
        } else {
            current.append(character)
        }
    }
    fields.append(current)
    return fields
}
