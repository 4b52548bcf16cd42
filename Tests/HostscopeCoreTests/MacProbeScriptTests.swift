import Foundation
import HostStats
import HostscopeCore
import TestSupport
import Testing

/// The macOS probe script run by real shells on this machine. Its macOS tools are absent here
/// (`top -l`, `vm_stat`, `netstat -ib` fail), which is the point: every section marker must
/// still be printed, in order, so that a host missing one tool loses that part only, and the
/// clock reading that rates rest on must work with and without Perl.
@Suite struct MacProbeScriptTests {
    private func run(_ shell: String, _ script: String, path: String? = nil) async throws -> CommandOutput {
        let quoted = "'" + script.replacingOccurrences(of: "'", with: "'\\''") + "'"
        let environment = path.map { "PATH=\($0); export PATH; " } ?? ""
        return try await LocalCommandRunner().run("\(environment)exec \(shell) -c \(quoted)", timeout: .seconds(20))
    }

    private func markers(_ script: String, nonce: String) -> [String] {
        script.components(separatedBy: "echo @@\(nonce):").dropFirst().map {
            String($0.prefix { $0.isLetter || $0 == "_" })
        }
    }

    @Test(arguments: ["/bin/sh", "/usr/bin/bash", "/bin/busybox sh"])
    func everySectionIsPrintedEvenWhereToolsAreMissing(_ shell: String) async throws {
        for sampled in [true, false] {
            let nonce = ProbeOutput.makeNonce()
            let script = MacProbe.command(sampleSeconds: 0.25, sampled: sampled, nonce: nonce)
            let output = ProbeOutput(try await run(shell, script).stdoutText, nonce: nonce)
            #expect(output.isComplete, "\(shell)")
            #expect(output.sections.map(\.name) == markers(script, nonce: nonce).dropLast(), "\(shell)")
            let clocks = output.sections(named: "clock").compactMap {
                Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            #expect(clocks.count == (sampled ? 2 : 1), "\(shell)")
            let now = Date().timeIntervalSince1970
            #expect(clocks.allSatisfy { abs($0 - now) < 30 }, "\(shell)")
            #expect(clocks.contains { $0 != $0.rounded(.down) }, "Perl's clock has a fraction (\(shell))")
        }
    }

    @Test func withoutPerlTheClockIsWholeSeconds() async throws {
        let directory = NSTemporaryDirectory() + "hostscope-noperl-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createSymbolicLink(atPath: directory + "/date", withDestinationPath: "/bin/date")
        let nonce = ProbeOutput.makeNonce()
        let script = MacProbe.command(sampleSeconds: 0.25, sampled: false, nonce: nonce)
        let output = ProbeOutput(try await run("/bin/sh", script, path: directory).stdoutText, nonce: nonce)
        let clock = try #require(output.section("clock")).trimmingCharacters(in: .whitespacesAndNewlines)
        let seconds = try #require(Int(clock))
        #expect(abs(Double(seconds) - Date().timeIntervalSince1970) < 30)
    }
}
