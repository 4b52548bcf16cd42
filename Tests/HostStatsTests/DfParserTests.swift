import Foundation
import HostStats
import Testing

/// `stat -f` figures of one mount: the truth df's columns are computed from.
struct StatvfsTruth {
    var path: String
    var blockSize: UInt64
    var blocks: UInt64
    var free: UInt64
    var available: UInt64
    var files: UInt64
    var filesFree: UInt64

    static func read(_ path: String) throws -> [StatvfsTruth] {
        try FixtureText.read(path).split(separator: "\n").map { line in
            // `path=/mnt/dir with space type=… bsize=…`: the path runs up to ` type=`.
            let pathEnd = try #require(line.range(of: " type="))
            var values: [String: UInt64] = [:]
            for pair in line[pathEnd.upperBound...].split(separator: " ") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, let number = UInt64(parts[1]) { values[String(parts[0])] = number }
            }
            return StatvfsTruth(
                path: String(line[line.index(line.startIndex, offsetBy: 5)..<pathEnd.lowerBound]),
                blockSize: try #require(values["bsize"]), blocks: try #require(values["blocks"]),
                free: try #require(values["bfree"]), available: try #require(values["bavail"]),
                files: try #require(values["files"]), filesFree: try #require(values["ffree"]))
        }
    }
}

@Suite struct DfParserTests {
    @Test(arguments: [
        "generated/debian12-edge/df_kP.txt", "generated/debian12-edge/df_PT_B1.txt", "generated/debian12-edge/df.txt",
    ])
    func sizesAgreeWithStatvfs(_ path: String) throws {
        let disks = try DfParser.parse(FixtureText.read(path)).value
        for truth in try StatvfsTruth.read("generated/debian12-edge/stat_f_statvfs.txt") {
            let disk = try #require(disks.first { $0.mount == truth.path }, "no row for \(truth.path)")
            #expect(disk.sizeBytes == truth.blocks * truth.blockSize)
            // `/` is busy: its used and free blocks moved between the two commands.
            let slack = truth.path == "/" ? Double(64 << 20) : 0
            #expect(abs(Double(disk.usedBytes!) - Double((truth.blocks - truth.free) * truth.blockSize)) <= slack)
            #expect(abs(Double(disk.availableBytes!) - Double(truth.available * truth.blockSize)) <= slack)
        }
    }

    @Test func aGNUOutputTableIsReadByItsColumnNamesInAnyOrder() throws {
        let all = try DfParser.parse(FixtureText.read("captured/debian12-local/df_output.txt")).value
        let targetFirst = try DfParser.parse(FixtureText.read("captured/debian12-local/df_output_target_first.txt"))
            .value
        let bytes = try DfParser.parse(FixtureText.read("captured/debian12-local/df_B1_output_sizes_first.txt")).value
        #expect(all.count == 7 && targetFirst.count == 7 && bytes.count == 7)
        // The three captures ran one after another: the tmpfs mounts did not change in between.
        for mount in ["/dev/shm", "/mnt/dir with space", "/mnt/データ ünï"] {
            let disk = try #require(all.first { $0.mount == mount })
            #expect(disk.sizeBytes == targetFirst.first { $0.mount == mount }?.sizeBytes)
            #expect(disk.sizeBytes == bytes.first { $0.mount == mount }?.sizeBytes)
            #expect(disk.inodesTotal == bytes.first { $0.mount == mount }?.inodesTotal)
            #expect(disk.type == "tmpfs" && disk.inodesUsed == 1 && disk.usedBytes == 0)
        }
        let spaced = try #require(targetFirst.first { $0.mount == "/mnt/dir with space" })
        #expect(spaced.filesystem == "source with space" && spaced.sizeBytes == 64 << 20)
        // No source column: the rows are still keyed by their mount points.
        #expect(bytes.allSatisfy { $0.filesystem.isEmpty } && bytes.first { $0.mount == "/" }?.type == nil)
    }

    @Test func adjacentTextColumnsSplitWhereTheirHeadersStart() throws {
        let human = try DfParser.parse(FixtureText.read("captured/debian12-local/df_h_output_source_target.txt")).value
        let unicode = try #require(human.first { $0.filesystem == "データ src" })
        #expect(unicode.mount == "/mnt/データ ünï" && unicode.sizeBytes == 16 << 20)
        #expect(human.first { $0.filesystem == "source with space" }?.mount == "/mnt/dir with space")
        // Only used and a rounded Use%: the percentage is df's own.
        #expect(human.first { $0.mount == "/" }?.usedPercent == 20)
        let three = try DfParser.parse(FixtureText.read("captured/debian12-local/df_output_file_target_source.txt"))
        #expect(three.value.map(\.mount) == ["/mnt/dir with space", "/mnt/データ ünï", "/"])
        #expect(three.value.map(\.filesystem) == ["source with space", "データ src", "/dev/vda"])
        // A UTF-8 locale pads by display width, not bytes.
        let widths = """
            Filesystem      Mounted on
            データ src      /mnt/a b
            x y             /mnt/c d

            """
        #expect(try DfParser.parse(widths).value.map(\.filesystem) == ["データ src", "x y"])
    }

    @Test func aGNUOutputTableWithoutAMountPointIsRefused() {
        #expect {
            try DfParser.parse("Filesystem     1K-blocks Type\n/dev/vda       264212084 ext4\n")
        } throws: { error in
            let message = (error as? ParseError)?.description ?? ""
            return message.contains("Mounted on") && message.contains("add `target`")
        }
    }

    @Test func aRowThatDoesNotFitItsOutputHeaderIsAnError() {
        #expect {
            try DfParser.parse("Mounted on   1K-blocks Used\n/srv         12 many\n")
        } throws: { error in
            let error = error as? ParseError
            return error?.line == 2 && error?.message.contains("does not fit the columns") == true
        }
    }

    @Test func aTranslatedOutputTableWithSizesAndInodesIsRefusedNotMisread() {
        let text = """
            Dateisystem    Typ      1K-Blöcke  Benutzt Verfügbar Verw% INodes IBenutzt Eingehängt auf
            /dev/vda       ext4     264212084 17346808  81718804   18% 16777216 449675 /

            """
        #expect {
            try DfParser.parse(text)
        } throws: { error in
            let message = (error as? ParseError)?.description ?? ""
            return message.contains("df --output") && message.contains("LC_ALL=C")
        }
    }

    @Test func inodeFiguresAgreeWithStatvfs() throws {
        let disks = try DfParser.parse(FixtureText.read("generated/debian12-edge/df_i_P.txt")).value
        for truth in try StatvfsTruth.read("generated/debian12-edge/stat_f_statvfs.txt") where truth.path != "/" {
            let disk = try #require(disks.first { $0.mount == truth.path })
            #expect(disk.inodesTotal == truth.files)
            #expect(disk.inodesUsed == truth.files - truth.filesFree)
            #expect(disk.sizeBytes == nil)
        }
    }

    @Test func usedPercentIsUsedOverUsedPlusAvailableUnrounded() throws {
        let disks = try DfParser.parse(FixtureText.read("generated/debian12-edge/df_kP.txt")).value
        let loop = try #require(disks.first { $0.mount == "/mnt/loop mount" })
        // df prints 1% (rounded up); BusyBox would print 0%.
        #expect(loop.usedPercent == 14.0 / (14 + 51_437) * 100)
    }

    @Test func busyboxAndGnuAgreeOnTheSameMounts() throws {
        let sections = try FixtureText.sections("captured/debian12-local/df_PT_B1_and_busybox_df.txt")
        let gnu = try DfParser.parse(sections[0]).value
        let busybox = try DfParser.parse(sections[1])
        #expect(busybox.warnings.contains { $0.contains("/dev/shm") })
        #expect(Set(busybox.value.map(\.mount)) == Set(gnu.map(\.mount)))
        for disk in busybox.value {
            let twin = try #require(gnu.first { $0.mount == disk.mount })
            #expect(disk.sizeBytes == twin.sizeBytes)
            #expect(abs(Double(disk.usedBytes!) - Double(twin.usedBytes!)) <= Double(16 << 20))
        }
    }

    @Test func sourcesAndMountPointsKeepTheirSpacesAndUnicode() throws {
        let disks = try DfParser.parse(FixtureText.read("generated/debian12-edge/df_hT.txt")).value
        let unicode = try #require(disks.first { $0.mount == "/mnt/データ ünï" })
        #expect(unicode.filesystem == "source with space" && unicode.type == "tmpfs" && unicode.sizeBytes == 20 << 20)
        #expect(disks.contains { $0.mount == "/mnt/dir with space" })
        let vms = try DfParser.parse(FixtureText.read("public/linux-rhel8-coreutils/df_alP.txt")).value
        #expect(vms.contains { $0.mount == "/V M T o o l s" && $0.filesystem == "/dev/sdb1" })
    }

    @Test func wrappedSourceNamesJoinTheirFigures() throws {
        let rhel = try DfParser.parse(FixtureText.read("public/linux-rhel6-coreutils/df_li_wrapped.txt")).value
        let root = try #require(rhel.first { $0.mount == "/" })
        #expect(root.filesystem == "/dev/mapper/vg_lxcrhel6sat56-lv_root" && root.inodesTotal == 6_275_072)
        let busybox = try DfParser.parse(FixtureText.read("generated/busybox-1.35.0/busybox_df.txt")).value
        let archive = try #require(busybox.first { $0.filesystem == "archive_volume_readonly" })
        #expect(archive.sizeBytes == 4096)
    }

    @Test func pseudoFilesystemsWithDashesHaveNoFigures() throws {
        let disks = try DfParser.parse(FixtureText.read("public/linux-rhel8-coreutils/df_alP.txt")).value
        let autofs = try #require(disks.first { $0.filesystem == "systemd-1" })
        #expect(autofs.sizeBytes == nil && autofs.usedPercent == nil)
        #expect(disks.first { $0.filesystem == "sysfs" }?.usedPercent == nil)
    }

    @Test func unitHeadersSetTheBlockSize() throws {
        let megabytes = try DfParser.parse(FixtureText.read("public/linux-coreutils-cifs/df_BM_T_P.txt")).value
        #expect(megabytes.first?.sizeBytes == 4039 << 20 && megabytes.first?.type == "ext3")
        let german = try DfParser.parse(FixtureText.read("generated/debian12-de_DE/df_kP.txt")).value
        let english = try DfParser.parse(FixtureText.read("generated/debian12/df_kP.txt")).value
        #expect(german.first { $0.mount == "/" }?.sizeBytes == english.first { $0.mount == "/" }?.sizeBytes)
    }

    @Test func aSizeTableAndAnInodeTableMergeByMount() throws {
        let disks = try DfParser.parse(FixtureText.read("captured/debian12-local/df_kP_and_iP.txt")).value
        let root = try #require(disks.first { $0.mount == "/" })
        #expect(root.sizeBytes != nil && root.inodesTotal != nil && root.inodesUsed != nil)
    }

    @Test func errorLinesAreReportedNotParsed() throws {
        let parsed = try DfParser.parse(FixtureText.read("public/linux-rhel6-coreutils/df_alP_with_stderr.txt"))
        #expect(parsed.warnings.filter { $0.contains("No such file") }.count == 2)
        #expect(parsed.value.count == 9)
    }

    @Test func truncatedOutputIsAnError() {
        #expect(throws: ParseError.self) {
            try DfParser.parse("Filesystem     1K-blocks  Used Available Use% Mounted on\nsome-very-long-device-name\n")
        }
    }
}
