import Foundation
import Testing

@testable import HostStats

/// The `proc` probe run by this machine's own `sh`, with GNU df and with a df that has no
/// `--output` (as on older or non-GNU userlands), and its output read back.
@Suite struct LinuxProcProbeTests {
    private let platform = HostPlatform(os: OSInfo(family: "linux"), userNames: [0: "root"])

    /// Runs `script` with `sh -c`, `path` prepended to PATH.
    private func run(_ script: String, path: String? = nil) throws -> String {
        try LocalShell.run(script, path: path)
    }

    private func rootFilesystemBytes() -> UInt64 {
        var stats = statvfs()
        statvfs("/", &stats)
        return UInt64(stats.f_blocks) * UInt64(stats.f_frsize)
    }

    @Test func dfRowsPipedThroughGrepGiveEveryFilesystemWithItsInodes() throws {
        let nonce = ProbeOutput.makeNonce()
        let text = try run(LinuxProcProbe.command(sampleSeconds: nil, nonce: nonce, processDetails: false))
        #expect(text.contains("(standard input):@@\(nonce):dfoutput"))
        let result = try LinuxProcProbe.parse(ProbeOutput(text, nonce: nonce), platform: platform)
        let disks = try #require(result.disks)
        let root = try #require(disks.first { $0.mount == "/" })
        #expect(root.sizeBytes == rootFilesystemBytes())
        #expect(root.inodesTotal != nil)
        #expect(result.samples.count == 1)
        #expect(!result.samples[0].processes.isEmpty)
    }

    @Test func aDfWithoutOutputColumnsFallsBackToTwoRunsInsideThePipe() throws {
        let shims = FileManager.default.temporaryDirectory.appendingPathComponent("hostscope-df-\(getpid())")
        try FileManager.default.createDirectory(at: shims, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: shims) }
        let df = shims.appendingPathComponent("df")
        try """
        #!/bin/sh
        case "$*" in *--output*) echo "df: unrecognized option '--output'" >&2; exit 1;; esac
        exec /bin/df "$@"
        """.write(to: df, atomically: true, encoding: .utf8)
        chmod(df.path, 0o755)

        let nonce = ProbeOutput.makeNonce()
        let text = try run(LinuxProcProbe.command(sampleSeconds: nil, nonce: nonce), path: shims.path)
        #expect(text.contains("(standard input):@@\(nonce):dfi"))
        let result = try LinuxProcProbe.parse(ProbeOutput(text, nonce: nonce), platform: platform)
        let root = try #require(result.disks?.first { $0.mount == "/" })
        #expect(root.sizeBytes == rootFilesystemBytes())
        #expect(root.type != nil)
        #expect(root.inodesTotal != nil)
    }

    @Test func theProbesShellAndEveryProcessUnderItAreLeftOut() {
        func sample(_ pid: Int, _ ppid: Int) -> ProcessSample {
            ProcessSample(
                pid: pid, comm: "p\(pid)", state: "S", ppid: ppid, cpuTicks: 0, rssPages: 0, startTimeTicks: 0)
        }
        // 50 is the probe's shell; 51 a pipeline's subshell; 52 the df under it; 60 unrelated.
        let processes = [sample(1, 0), sample(50, 1), sample(51, 50), sample(52, 51), sample(53, 50), sample(60, 1)]
        #expect(LinuxSnapshotBuilder.probeProcesses(root: 50, in: processes) == [50, 51, 52, 53])
        #expect(LinuxSnapshotBuilder.probeProcesses(root: nil, in: processes).isEmpty)
    }
}
