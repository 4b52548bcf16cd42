import Foundation
import HostStats
import OrderedJSON
import TestSupport
import Testing

/// One capture of `Fixtures/locales/LOCALE/NAME.txt`, made by `Scripts/capture_locales.sh`: a tool's
/// output under one locale, with the C locale's capture of the same command beside it in `C/`.
struct LocaleCapture: Sendable, CustomTestStringConvertible {
    var locale: String
    var name: String

    var testDescription: String { "\(locale)/\(name)" }
    var path: String { "locales/\(locale)/\(name)" }
    /// `hostscope parse TOOL`: the file name up to its first `-` (`df-kPT.txt` → `df`).
    var tool: String { String(name.prefix { $0 != "-" && $0 != "." }) }
    var fixture: FixtureCase { FixtureCase(file: path, tool: tool, expectsError: false) }

    /// Every capture under every locale folder; capturing another locale or command adds cases.
    static func all() -> [LocaleCapture] {
        let root = Repository.fixtures.appendingPathComponent("locales")
        let locales = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        return locales.sorted().flatMap { locale in
            let files = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(locale).path))
            return (files ?? []).filter { $0.hasSuffix(".txt") }.sorted().map {
                LocaleCapture(locale: locale, name: $0)
            }
        }
    }
}

/// The figures of a capture that do not move between two captures a few seconds apart: filesystem sizes
/// and inode totals by mount point, memory and swap totals, the number of CPUs and the disk devices.
private struct SteadyFigures: Equatable {
    var diskSizes: [String: UInt64] = [:]
    var sources: [String: String] = [:]
    var types: [String: String] = [:]
    var inodeTotals: [String: UInt64] = [:]
    var memoryTotal: UInt64?
    var swapTotal: UInt64?
    var cores: Int?
    var devices: [String] = []

    init(_ part: SnapshotPart) {
        for disk in part.disks ?? [] {
            diskSizes[disk.mount] = disk.sizeBytes
            sources[disk.mount] = disk.filesystem
            types[disk.mount] = disk.type
            inodeTotals[disk.mount] = disk.inodesTotal
        }
        memoryTotal = part.memory?.totalBytes
        swapTotal = part.memory?.swapTotalBytes
        cores = part.cpu?.perCore.count
        devices = (part.devices ?? []).map(\.device).sorted()
    }

    /// The mismatches with `other` over the mount points both list (a mount may come or go between captures).
    func mismatches(_ other: SteadyFigures) -> [String] {
        var found: [String] = []
        for (mount, size) in diskSizes where other.diskSizes[mount] != nil && other.diskSizes[mount] != size {
            found.append(
                "size of \(mount): \(String(describing: size)) against \(String(describing: other.diskSizes[mount]!))")
        }
        for (mount, source) in sources where other.sources[mount] != nil && other.sources[mount] != source {
            found.append("source of \(mount): `\(source)` against `\(other.sources[mount]!)`")
        }
        for (mount, type) in other.types where sources[mount] != nil && types[mount] != type {
            found.append("type of \(mount): \(types[mount] ?? "none") against \(type)")
        }
        for (mount, inodes) in inodeTotals where other.inodeTotals[mount] != nil && other.inodeTotals[mount] != inodes {
            found.append("inodes of \(mount): \(String(describing: inodes)) against C's")
        }
        if memoryTotal != other.memoryTotal {
            found.append(
                "memory total \(String(describing: memoryTotal)) against \(String(describing: other.memoryTotal))")
        }
        if swapTotal != other.swapTotal { found.append("swap total \(String(describing: swapTotal))") }
        if cores != other.cores {
            found.append("\(String(describing: cores)) CPUs against \(String(describing: other.cores))")
        }
        if devices != other.devices { found.append("devices \(devices) against \(other.devices)") }
        return found
    }
}

@Suite struct LocaleCaptureTests {
    @Test func everyTranslatedLocaleWasCapturedWithEveryCommand() throws {
        let captures = LocaleCapture.all()
        let locales = Set(captures.map(\.locale))
        #expect(locales.contains("C") && locales.count > 50, "Scripts/capture_locales.sh makes about 95 locales")
        let names = Set(captures.filter { $0.locale == "C" }.map(\.name))
        #expect(names.count == 14)
        for capture in captures {
            #expect(names.contains(capture.name), "\(capture.path) has no C capture to compare with")
        }
    }

    /// Each capture parses, or is refused with a sentence that names the C-locale command to capture
    /// instead; its golden holds which, and the figures that do not change between captures equal the C
    /// capture's, so a translated label or a decimal comma read wrong shows as a mismatch.
    @Test(arguments: LocaleCapture.all())
    func eachCaptureParsesLikeTheCLocaleOrSaysWhatToCaptureInstead(_ capture: LocaleCapture) throws {
        let (json, failed) = try capture.fixture.rendered()
        if ProcessInfo.processInfo.environment["HOSTSCOPE_RECORD_GOLDENS"] == "1" {
            try json.write(to: capture.fixture.goldenURL, atomically: true, encoding: .utf8)
        } else {
            let golden = try String(contentsOf: capture.fixture.goldenURL, encoding: .utf8)
            #expect(
                json == golden,
                "\(capture.path) no longer parses to its golden; rerun with HOSTSCOPE_RECORD_GOLDENS=1 if intended")
        }
        if failed {
            #expect(capture.locale != "C", "the C locale's \(capture.name) must parse: \(json)")
            #expect(
                json.contains("LC_ALL=C"), "\(capture.path) is refused without naming the command to capture: \(json)")
            return
        }
        let parser = try #require(ToolParser.named(capture.tool))
        let part = try parser.parse(capture.fixture.text())
        let reference = try parser.parse(LocaleCapture(locale: "C", name: capture.name).fixture.text())
        let mismatches = SteadyFigures(part).mismatches(SteadyFigures(reference))
        #expect(mismatches.isEmpty, "\(capture.path) reads differently from C: \(mismatches.joined(separator: "; "))")
    }

    @Test func everyGoldenHasItsCapture() throws {
        let captures = Set(LocaleCapture.all().map { $0.path + ".json" })
        let root = Repository.fixtures.appendingPathComponent("locales")
        let enumerator = try #require(FileManager.default.enumerator(atPath: root.path))
        for case let path as String in enumerator where path.hasSuffix(".json") {
            #expect(captures.contains("locales/" + path), "locales/\(path) has no capture")
        }
    }
}
