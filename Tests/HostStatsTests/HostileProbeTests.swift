import Foundation
import OrderedJSON
import Testing

@testable import HostStats

/// Each collector's whole probe output, with its figures replaced by ones no counter holds
/// (`99999999999999999999999`, `18446744073709551616`, `nan`, `inf`, `1e400`), goes through the
/// snapshot path of ``HostCollector``: a record must come out every time, never a trap, and the
/// figures that could not be held are `null` with a warning.
///
/// `proc` and `tools` run this machine's own probe through `sh` and mutate what it printed;
/// `busybox` and `macos` replay the recorded probes of `Fixtures/probes/`.
@Suite struct HostileProbeTests {
    static let hostileFigures = ["99999999999999999999999", "18446744073709551616", "nan", "inf", "1e400"]

    /// Where a line of probe output comes from: the section its marker names, and for a line grep
    /// prefixed with its file, that file (every process's `/proc/N/stat` as one).
    static func source(section: String, line: Substring) -> String {
        guard line.hasPrefix("/proc/"), let colon = line.firstIndex(of: ":") else { return section }
        let path = line[..<colon].split(separator: "/").map { $0.allSatisfy(\.isNumber) ? "N" : String($0) }
        return section + " /" + path.joined(separator: "/")
    }

    /// The sources of `text`'s lines, in order of first appearance.
    static func sources(_ text: String) -> [String] {
        var seen: [String] = []
        forEachLine(text) { source, line in
            if let source, !line.isEmpty, !seen.contains(source) { seen.append(source) }
        }
        return seen
    }

    /// Calls `body` with each line and its source (`nil` for marker lines).
    static func forEachLine(_ text: String, _ body: (String?, Substring) -> Void) {
        var section = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.contains("@@") {
                section = line.split(separator: ":").last.map(String.init) ?? ""
                body(nil, line)
            } else {
                body(source(section: section, line: line), line)
            }
        }
    }

    /// `text` with every `every`-th number (a token of digits with an optional fraction) of the
    /// lines from `only` (every line when `nil`) replaced by `figure`. Marker lines and file names
    /// are left alone, so the output keeps the shape of the probe's.
    static func mutate(_ text: String, figure: String, every: Int, only: String? = nil) -> String {
        var count = 0
        var lines: [String] = []
        forEachLine(text) { source, line in
            guard let source, only == nil || only == source else {
                lines.append(String(line))
                return
            }
            var out = ""
            var token = ""
            func flush() {
                let isNumber =
                    !token.isEmpty && token.first!.isNumber
                    && token.allSatisfy { $0.isNumber || $0 == "." } && token.filter { $0 == "." }.count <= 1
                if isNumber {
                    count += 1
                    out += count % every == 0 ? figure : token
                } else {
                    out += token
                }
                token = ""
            }
            for character in line {
                if character == " " || character == "\t" || character == ":" || character == "," {
                    flush()
                    out.append(character)
                } else {
                    token.append(character)
                }
            }
            flush()
            lines.append(out)
        }
        return lines.joined(separator: "\n")
    }

    /// Runs commands with this machine's `sh`; the probe's output (not the platform detection's)
    /// is mutated before the collector reads it, and its line sources are kept for the next run.
    actor MutatingLocalRunner: CommandRunner {
        var mutation: (figure: String, every: Int, only: String?)?
        private(set) var sources: [String] = []

        init(_ mutation: (figure: String, every: Int, only: String?)?) {
            self.mutation = mutation
        }

        func run(_ command: String, timeout: Duration) async throws -> CommandOutput {
            var text = try LocalShell.run(command)
            if command != HostPlatform.detectionCommand {
                // The probe's sources, then those of the details it asks for afterwards.
                sources += HostileProbeTests.sources(text).filter { !sources.contains($0) }
                if let mutation {
                    text = HostileProbeTests.mutate(
                        text, figure: mutation.figure, every: mutation.every, only: mutation.only)
                }
            }
            return CommandOutput(stdout: Array(text.utf8))
        }
    }

    /// The record and what it says, checked to be a record a person and a program can read.
    static func check(_ record: SnapshotRecord, _ label: String) -> [String] {
        let json = record.jsonValue.jsonString
        #expect((try? JSONParser.parse(json)) != nil, "\(label): the record is not JSON")
        guard case .snapshot(let snapshot) = record else { return [] }
        return snapshot.warnings
    }

    static func tellsOfLeftOutFigures(_ warnings: [String]) -> Bool {
        warnings.contains { $0.contains("is out of range") || $0.contains("no finite number") }
    }

    /// The counters a collector measures its interval with: the kernel's `/proc/stat` and
    /// `/proc/uptime` (u64 by its ABI) and the macOS probe's clock. Text there that is no such
    /// figure is not the host's, and the tick is an error record (one sentence) instead of figures.
    static func isIntervalCounterFile(_ source: String) -> Bool {
        source.hasSuffix(" /proc/stat") || source.hasSuffix(" /proc/uptime") || source == "clock"
    }

    /// Every line source of the probe output mutated in turn, then the whole output: a record each
    /// time, figures with warnings wherever the mutated text was a tool's or a gauge's.
    func checkEverySource(
        route: String, sources: [String],
        collect: (_ figure: String, _ every: Int, _ only: String?) async throws
            -> SnapshotRecord
    ) async throws {
        #expect(sources.count >= 3, "\(route): the probe printed \(sources)")
        var warned = false
        for (index, source) in sources.enumerated() {
            let figure = Self.hostileFigures[index % Self.hostileFigures.count]
            let record = try await collect(figure, 1, source)
            let warnings = Self.check(record, "\(route) \(source) \(figure)")
            warned = warned || Self.tellsOfLeftOutFigures(warnings)
            if case .failure(let failure) = record {
                #expect(
                    Self.isIntervalCounterFile(source) || route == "tools" && source.hasPrefix("sample "),
                    "\(route): \(figure) in \(source) failed the whole record: \(failure.message)")
            }
        }
        for figure in Self.hostileFigures {
            _ = Self.check(try await collect(figure, 7, nil), "\(route) every 7th figure \(figure)")
        }
        #expect(warned, "no \(route) run left a figure out with a warning")
    }

    @Test(arguments: [CollectorKind.proc, .tools])
    func theLocalProbesWithHostileFiguresStillGiveARecord(_ kind: CollectorKind) async throws {
        let options = CollectorOptions(kind: kind, sample: .milliseconds(100), topProcesses: 5)
        let discovery = MutatingLocalRunner(nil)
        _ = await HostCollector(host: "hostile", runner: discovery, options: options).snapshot()
        try await checkEverySource(route: kind.rawValue, sources: await discovery.sources) { figure, every, only in
            let runner = MutatingLocalRunner((figure, every, only))
            return await HostCollector(host: "hostile", runner: runner, options: options).snapshot()
        }
    }

    @Test(arguments: ProbeFixture.all())
    func theRecordedProbesWithHostileFiguresStillGiveARecord(_ fixture: ProbeFixture) async throws {
        let recorded = try fixture.text("snapshot.txt")
        try await checkEverySource(route: fixture.name, sources: Self.sources(recorded)) { figure, every, only in
            let mutated = Self.mutate(recorded, figure: figure, every: every, only: only)
            let runner = ReplayRunner(detection: try fixture.text("detect.txt"), outputs: [("snapshot.txt", mutated)])
            return await HostCollector(host: fixture.name, runner: runner).snapshot()
        }
    }

    @Test func mutatingReplacesNumbersButNotMarkersOrNames() {
        let text = "@@NONCE:sample\n/proc/stat:cpu  12 34 5.5 x7\n/proc/12/stat:12 (a) S 1\n"
        #expect(
            Self.mutate(text, figure: "nan", every: 1)
                == "@@NONCE:sample\n/proc/stat:cpu  nan nan nan x7\n/proc/12/stat:nan (a) S nan\n")
        #expect(
            Self.mutate(text, figure: "inf", every: 2, only: "sample /proc/stat")
                == "@@NONCE:sample\n/proc/stat:cpu  12 inf 5.5 x7\n/proc/12/stat:12 (a) S 1\n")
        #expect(Self.sources(text) == ["sample /proc/stat", "sample /proc/N/stat"])
    }
}
