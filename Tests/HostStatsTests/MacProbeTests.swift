import Foundation
import HostStats
import Testing

/// The macOS collector's figures, checked against the numbers in the captures they come from
/// (the goldens of ProbeFixtureTests pin the whole record; these say why each figure is right).
@Suite struct MacProbeTests {
    private func collect(_ folder: String, _ files: [String], ticks: Bool = false) async throws -> [Snapshot] {
        let fixture = ProbeFixture(name: folder)
        let runner = ReplayRunner(
            detection: try fixture.text("detect.txt"), outputs: try files.map { ($0, try fixture.text($0)) })
        let collector = HostCollector(host: folder, runner: runner)
        var snapshots: [Snapshot] = []
        for _ in files {
            let record: SnapshotRecord
            if ticks { record = await collector.tick() } else { record = await collector.snapshot() }
            switch record {
            case .snapshot(let snapshot): snapshots.append(snapshot)
            case .failure(let failure): throw CollectionError(failure.kind, failure.message)
            }
        }
        return snapshots
    }

    @Test func appleSiliconMemoryUsesSixteenKiBPagesAndTheCompressorFormula() async throws {
        let snapshot = try #require(try await collect("macos-14.4.1-apple-silicon", ["snapshot.txt"]).first)
        #expect(snapshot.collector == "macos")
        #expect(snapshot.os?.name == "macOS 14.4.1")
        let memory = try #require(snapshot.memory)
        // vm_stat: anonymous 912210 − purgeable 19224 + wired 165932 + compressor 424276 pages.
        #expect(memory.usedBytes == (912_210 - 19_224 + 165_932 + 424_276) * 16384)
        #expect(memory.totalBytes == 34_359_738_368)
        #expect(memory.availableBytes == memory.totalBytes! - memory.usedBytes!)
        #expect(memory.freeBytes == 6472 * 16384)
        #expect(memory.definition == "app+wired+compressed")
        #expect(memory.swapUsedBytes == UInt64(1085.75 * 1_048_576))
    }

    @Test func intelMemoryBeforeTheCompressorIsActivePlusWired() async throws {
        let snapshot = try #require(try await collect("macos-intel-composite", ["snapshot.txt"]).first)
        let memory = try #require(snapshot.memory)
        #expect(memory.usedBytes == (924_164 + 391_749) * 4096)
        #expect(memory.definition == "active+wired")
        #expect(snapshot.os?.name == "Mac OS X 10.14.6")
    }

    @Test func cpuComesFromTopsSecondSampleNeverTheFirst() async throws {
        let snapshot = try #require(try await collect("macos-intel-composite", ["snapshot.txt"]).first)
        let cpu = try #require(snapshot.cpu)
        // First sample: 6.87 user, 25.95 sys (since top started); second: 12.50, 8.33, 79.16 idle.
        #expect(cpu.userPercent == 12.5)
        #expect(cpu.systemPercent == 8.33)
        #expect(cpu.busyPercent == 20.84)
        #expect(cpu.sampleMs == 1000)
        #expect(cpu.cores == 8)
        #expect(snapshot.warnings.isEmpty)
    }

    @Test func uptimeIsTheHostClockMinusBootTime() async throws {
        let snapshot = try #require(try await collect("macos-intel-composite", ["snapshot.txt"]).first)
        #expect(snapshot.uptimeSeconds == Double(1_609_389_877 - 1_592_836_479))
        #expect(snapshot.load == LoadAverage(one: 2.57, five: 2.41, fifteen: 2.24))
    }

    @Test func oneOffNetworkRatesCoverTopsWindowOnTheHostClock() async throws {
        let snapshot = try #require(try await collect("macos-intel-composite", ["snapshot.txt"]).first)
        let en0 = try #require(snapshot.network.first { $0.interface == "en0" })
        // +1 250 000 bytes in, +310 000 out between clock reads 1.1 s apart; Link rows only.
        #expect(en0.rxBytes == 13_310_766_362)
        #expect(abs(en0.rxBytesPerSecond! - 1_250_000 / 1.1) < 1e-6)
        #expect(abs(en0.txBytesPerSecond! - 310_000 / 1.1) < 1e-6)
        #expect(snapshot.network.map(\.interface) == ["lo0", "gif0", "stf0", "en0"])
    }

    @Test func watchTicksRateAgainstThePreviousTickAndNeverAcrossACounterReset() async throws {
        let ticks = try await collect("macos-intel-composite", ["tick-1.txt", "tick-2.txt"], ticks: true)
        #expect(ticks[0].network.allSatisfy { $0.rxBytesPerSecond == nil && $0.txBytesPerSecond == nil })
        // CPU needs no previous tick: top samples twice inside each run.
        #expect(ticks[0].cpu?.busyPercent != nil)
        let en0 = try #require(ticks[1].network.first { $0.interface == "en0" })
        #expect(abs(en0.rxBytesPerSecond! - 6_000_000 / 5.001) < 1e-6)
        let utun1 = try #require(ticks[1].network.first { $0.interface == "utun1" })
        #expect(utun1.rxBytes == 2240)
        #expect(utun1.rxBytesPerSecond == nil && utun1.txBytesPerSecond == nil)
    }

    @Test func disksAreKiBExactWithoutAutofsMapsAndWithoutAPFSsUnlimitedInodes() async throws {
        let snapshot = try #require(try await collect("macos-intel-composite", ["snapshot.txt"]).first)
        #expect(!snapshot.disks.contains { $0.mount == "/net" || $0.mount == "/home" })
        let root = try #require(snapshot.disks.first { $0.mount == "/" })
        #expect(root.sizeBytes == 488_245_288 * 1024)
        #expect(root.usedBytes == 151_098_964 * 1024)
        #expect(root.inodesUsed == 1_507_695)
        #expect(root.inodesTotal == nil)
        let afp = try #require(snapshot.disks.first { $0.mount == "/Volumes/brazil" })
        #expect(afp.inodesTotal == 301_134_832 + 649_465_741)
        let timeMachine = try #require(snapshot.disks.first { $0.filesystem.hasPrefix("com.apple.TimeMachine") })
        #expect(timeMachine.mount.hasSuffix("/2019-11-29-075900/Macintosh HD"))
    }

    @Test func processesAreBusiestFirstWithoutTheProbesOwn() async throws {
        let snapshot = try #require(try await collect("macos-intel-composite", ["snapshot.txt"]).first)
        #expect(snapshot.processes.count == 10)
        #expect(snapshot.processes.first?.pid == 1046)
        let cpus = snapshot.processes.map { $0.cpuPercent ?? -1 }
        #expect(cpus == cpus.sorted(by: >))
        #expect(!snapshot.processes.contains { $0.command.hasPrefix("ps -A") || $0.command.hasPrefix("zsh -c") })
        let outlook = try #require(snapshot.processes.first { $0.pid == 8297 })
        #expect(outlook.rssBytes == 754_604 * 1024)
        #expect(outlook.user == "kbrazil")
        #expect(outlook.command == "/Applications/Microsoft Outlook.app/Contents/MacOS/Microsoft Outlook")
    }

    @Test func topRoundsTheSampleUpToWholeSeconds() {
        #expect(MacProbe.topSeconds(0.25) == 1)
        #expect(MacProbe.topSeconds(1) == 1)
        #expect(MacProbe.topSeconds(2.5) == 3)
        let script = MacProbe.command(sampleSeconds: 2.5, sampled: true, nonce: "ab12")
        #expect(script.contains("top -l 2 -n 0 -s 3;"))
    }

    @Test func theScriptAvoidsWhatZshTreatsDifferentlyFromSh() {
        // zsh aborts a command whose glob matches nothing and does not split unquoted variables;
        // the script uses neither globs nor variables other than $$.
        for sampled in [true, false] {
            let script = MacProbe.command(sampleSeconds: 0.25, sampled: sampled, nonce: "ab12")
            #expect(!script.contains("*") && !script.contains("?") && !script.contains("["))
            #expect(script.replacingOccurrences(of: "$$", with: "").contains("$") == false)
        }
    }

    @Test func aTruncatedMacProbeIsAParseError() throws {
        let text = try ProbeFixture(name: "macos-intel-composite").text("snapshot.txt")
        let cut = String(text.prefix(text.count / 2)).replacingOccurrences(of: "@@NONCE:", with: "@@n:")
        #expect(throws: ParseError.self) { try MacProbe.parse(ProbeOutput(cut, nonce: "n"), sampleSeconds: 0.25) }
    }
}
