import Foundation
import HostStats
import OrderedJSON
import TestSupport
import Testing

/// One folder of `Fixtures/probes/`: what a host printed for the detection script and for each
/// probe run of a one-off snapshot (`snapshot.txt`) and of a watch series (`tick-N.txt`).
struct ProbeFixture: Sendable, CustomTestStringConvertible {
    var name: String

    var testDescription: String { name }
    var folder: URL { Repository.fixtures.appendingPathComponent("probes").appendingPathComponent(name) }

    /// Every folder holding a `detect.txt`; adding a folder adds a test case.
    static func all() -> [ProbeFixture] {
        let root = Repository.fixtures.appendingPathComponent("probes")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        return names.sorted().filter { name in
            FileManager.default.fileExists(
                atPath: root.appendingPathComponent(name).appendingPathComponent("detect.txt").path)
        }.map(ProbeFixture.init)
    }

    func text(_ file: String) throws -> String {
        String(decoding: try Data(contentsOf: folder.appendingPathComponent(file)), as: UTF8.self)
    }

    func exists(_ file: String) -> Bool {
        FileManager.default.fileExists(atPath: folder.appendingPathComponent(file).path)
    }

    /// The watch ticks, in order: `tick-1.txt`, `tick-2.txt`, …
    var tickFiles: [String] {
        var files: [String] = []
        while exists("tick-\(files.count + 1).txt") { files.append("tick-\(files.count + 1).txt") }
        return files
    }

    /// What the host printed over the ticks, in the order the collector asks: each tick's probe,
    /// then `tick-N-details.txt` where that tick asked for its processes' command lines and owners.
    var tickOutputs: [String] {
        tickFiles.flatMap { file in
            let details = file.replacingOccurrences(of: ".txt", with: "-details.txt")
            return exists(details) ? [file, details] : [file]
        }
    }
}

/// Replays a fixture folder as a host: the detection script gets `detect.txt`, each probe run the
/// next recorded output, its `@@NONCE:` markers rewritten to the nonce of the command it answers.
///
/// This is the one transport in the tests that is not real: no macOS host runs here, and a
/// BusyBox capture replayed this way pins the parsers and builders to figures that a live run
/// cannot (a live host's numbers change every run; the live BusyBox run is tested separately).
/// So that a replay cannot drift from the scripts, each recorded output must carry exactly the
/// sections, in order, that the command it answers prints.
actor ReplayRunner: CommandRunner {
    private let detection: String
    private var outputs: [(file: String, text: String)]

    init(detection: String, outputs: [(file: String, text: String)]) {
        self.detection = detection
        self.outputs = outputs
    }

    var isExhausted: Bool { outputs.isEmpty }

    func run(_ command: String, timeout: Duration) async throws -> CommandOutput {
        if command == HostPlatform.detectionCommand { return CommandOutput(stdout: Array(detection.utf8)) }
        guard !outputs.isEmpty else { throw CollectionError(.command, "replay: no recorded output left") }
        let (file, text) = outputs.removeFirst()
        guard let nonce = Self.nonce(in: command) else {
            throw CollectionError(.command, "replay: no marker nonce in the command")
        }
        let asked = Self.sectionNames(in: command, prefix: "echo @@\(nonce):")
        let recorded = TextScanning.lines(text).compactMap { line in
            line.hasPrefix("@@NONCE:") ? String(line.dropFirst("@@NONCE:".count)) : nil
        }
        guard asked == recorded else {
            throw CollectionError(
                .command,
                "replay: \(file) has sections \(recorded) but the script prints \(asked): re-record the fixture")
        }
        return CommandOutput(stdout: Array(text.replacingOccurrences(of: "@@NONCE:", with: "@@\(nonce):").utf8))
    }

    static func nonce(in command: String) -> Substring? {
        guard let start = command.range(of: "echo @@"),
            let colon = command[start.upperBound...].firstIndex(of: ":")
        else { return nil }
        return command[start.upperBound..<colon]
    }

    /// The marker names a script echoes, in order.
    static func sectionNames(in command: String, prefix: String) -> [String] {
        var names: [String] = []
        var rest = command[...]
        while let range = rest.range(of: prefix) {
            let name = rest[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            names.append(String(name))
            rest = rest[range.upperBound...]
        }
        return names
    }
}

@Suite struct ProbeFixtureTests {
    static let collectedAt = Date(timeIntervalSince1970: 1_795_288_920.123)

    private func collector(_ fixture: ProbeFixture, outputs: [String]) throws -> HostCollector {
        try collector(fixture, runner: replay(fixture, outputs: outputs))
    }

    private func collector(_ fixture: ProbeFixture, runner: ReplayRunner) -> HostCollector {
        HostCollector(host: fixture.name, runner: runner, now: { Self.collectedAt })
    }

    private func replay(_ fixture: ProbeFixture, outputs: [String]) throws -> ReplayRunner {
        ReplayRunner(detection: try fixture.text("detect.txt"), outputs: try outputs.map { ($0, try fixture.text($0)) })
    }

    /// The record as a golden holds it: the client-side duration is the one figure a replay
    /// cannot fix, so it is zeroed.
    private func stable(_ record: SnapshotRecord) -> SnapshotRecord {
        guard case .snapshot(var snapshot) = record else { return record }
        snapshot.durationMs = 0
        return .snapshot(snapshot)
    }

    private func check(_ rendered: String, against golden: String, in fixture: ProbeFixture) throws {
        let url = fixture.folder.appendingPathComponent(golden)
        if ProcessInfo.processInfo.environment["HOSTSCOPE_RECORD_GOLDENS"] == "1" {
            try rendered.write(to: url, atomically: true, encoding: .utf8)
            return
        }
        let expected = try String(contentsOf: url, encoding: .utf8)
        #expect(
            rendered == expected,
            "\(fixture.name)/\(golden) differs; rerun with HOSTSCOPE_RECORD_GOLDENS=1 if the change is intended")
    }

    @Test func everyProbeFolderHasADetectionAndASnapshot() {
        let fixtures = ProbeFixture.all()
        #expect(fixtures.map(\.name).contains { $0.hasPrefix("busybox") })
        #expect(fixtures.map(\.name).contains { $0.hasPrefix("macos") })
        for fixture in fixtures {
            #expect(fixture.exists("snapshot.txt") && fixture.exists("snapshot.json"), "\(fixture.name)")
            #expect(fixture.tickFiles.isEmpty || fixture.exists("ticks.ndjson"), "\(fixture.name)")
        }
    }

    @Test(arguments: ProbeFixture.all())
    func aOneOffSnapshotMatchesItsGolden(_ fixture: ProbeFixture) async throws {
        let outputs = ["snapshot.txt"] + (fixture.exists("snapshot-details.txt") ? ["snapshot-details.txt"] : [])
        let runner = try replay(fixture, outputs: outputs)
        let record = await collector(fixture, runner: runner).snapshot()
        if case .failure(let failure) = record { Issue.record("\(fixture.name): \(failure.message)") }
        #expect(await runner.isExhausted, "\(fixture.name): a recorded output was not asked for")
        try check(stable(record).jsonValue.prettyJSONString + "\n", against: "snapshot.json", in: fixture)
    }

    @Test(arguments: ProbeFixture.all().filter { !$0.tickFiles.isEmpty })
    func watchTicksMatchTheirGolden(_ fixture: ProbeFixture) async throws {
        let runner = try replay(fixture, outputs: fixture.tickOutputs)
        let collector = collector(fixture, runner: runner)
        var lines = ""
        for _ in fixture.tickFiles {
            let record = await collector.tick()
            if case .failure(let failure) = record { Issue.record("\(fixture.name): \(failure.message)") }
            lines += stable(record).jsonValue.jsonString + "\n"
        }
        // Every recorded output was asked for: no tick skipped its details, none asked twice.
        #expect(await runner.isExhausted, "\(fixture.name)")
        try check(lines, against: "ticks.ndjson", in: fixture)
    }
}
