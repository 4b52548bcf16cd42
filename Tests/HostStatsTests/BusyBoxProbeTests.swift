import Foundation
import HostStats
import Testing

/// The recorded BusyBox run, edited the way smaller BusyBox builds print it.
@Suite struct BusyBoxProbeTests {
    private let platform = HostPlatform(os: OSInfo(family: "linux"), isBusyBox: true, userNames: [0: "root"])

    private func recorded() throws -> String {
        try ProbeFixture(name: "busybox-1.35.0-debian12").text("snapshot.txt")
    }

    private func parse(_ text: String) throws -> LinuxProbeResult {
        try LinuxProcProbe.parse(
            ProbeOutput(text.replacingOccurrences(of: "@@NONCE:", with: "@@n:"), nonce: "n"), platform: platform)
    }

    @Test func ownersPrintedByNameWithoutLsDashNAreKept() throws {
        // Without FEATURE_LS_USERNAME there is no `ls -n`; the details probe falls back to `ls -l`.
        let recordedDetails = try ProbeFixture(name: "busybox-1.35.0-debian12").text("snapshot-details.txt")
        let byName = recordedDetails.replacingOccurrences(of: "    9 0        0     ", with: "    9 root     root  ")
        #expect(byName != recordedDetails)
        let details = try ProcessDetailsProbe.parse(
            ProbeOutput(byName.replacingOccurrences(of: "@@NONCE:", with: "@@n:"), nonce: "n"), platform: platform)
        #expect(details.count >= 10)
        #expect(details[1]?.user == "root")
        #expect(details.values.allSatisfy { $0.user == "root" })
    }

    @Test func aBindMountOfADeviceIsShownOnceUnderItsShortestMountPointAsGNUDfShowsIt() throws {
        // `ip netns add` bind-mounts /run/netns from the root device; GNU df shows the device once.
        let root = "/dev/vda             ext4       264212084  16915488  82150124  17% /\n"
        let text = try recorded()
        #expect(text.contains(root))
        // A second tmpfs with the same figures as /dev/shm: pseudo filesystems are separate instances.
        let otherTmpfs = "tmpfs                tmpfs       24684084         0  24684084   0% /run/other\n"
        let bound = text.replacingOccurrences(
            of: root, with: root.replacingOccurrences(of: "% /\n", with: "% /run/netns\n") + root + otherTmpfs)
        let disks = try #require(try parse(bound).disks)
        #expect(disks.filter { $0.filesystem == "/dev/vda" }.map(\.mount) == ["/"])
        #expect(disks.contains { $0.mount == "/run/other" && $0.filesystem == "tmpfs" })
        #expect(disks.contains { $0.mount == "/dev/shm" })
    }

    @Test func dfWithoutTypesStillGivesEverySizeOnceAndTheInodes() throws {
        // A build whose df lacks -T prints `df -kP`: the same rows without the type column.
        var lines: [String] = []
        var inDf = false
        for line in try recorded().split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("@@NONCE:") { inDf = line == "@@NONCE:df" }
            if inDf, !line.hasPrefix("@@") {
                var fields = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
                fields.remove(at: 1)  // the Type column, header and rows alike
                lines.append(fields.joined(separator: " "))
            } else {
                lines.append(String(line))
            }
        }
        let withTypes = try #require(try parse(try recorded()).disks)
        let disks = try #require(try parse(lines.joined(separator: "\n")).disks)
        #expect(disks.map(\.mount) == withTypes.map(\.mount))
        #expect(disks.map(\.sizeBytes) == withTypes.map(\.sizeBytes))
        #expect(disks.map(\.inodesTotal) == withTypes.map(\.inodesTotal))
        #expect(disks.allSatisfy { $0.type == nil })
    }

    @Test func theScriptFallsBackWhereBuildsDiffer() {
        let script = BusyBoxProbe.command(sampleSeconds: 0.25, nonce: "n")
        #expect(script.contains("sleep 0.250 2>/dev/null || sleep 1;"))
        #expect(script.contains("if ls -dn / >/dev/null 2>&1; then ls -ldn /proc/[0-9]*; else ls -ld /proc/[0-9]*; fi"))
        #expect(script.contains("if df -kPT / >/dev/null 2>&1; then df -kPT; else df -kP; fi"))
        #expect(!script.contains("--output"))
        #expect(!BusyBoxProbe.command(sampleSeconds: nil, nonce: "n").contains("sleep"))
    }
}
