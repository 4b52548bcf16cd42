import Foundation
import TestSupport
import Testing

/// The README's first command installs only what building and running hostscope needs; its test command adds
/// what the tests start and read, and CI runs that one.
@Suite struct SetupScriptTests {
    static let testOnly = [
        "openssh-server", "prometheus", "prometheus-node-exporter", "prometheus-alertmanager", "wrk", "sysstat",
        "busybox", "tmux", "tcsh", "systemd", "arize-phoenix", "rotel", "chromium", "chromium-driver", "nodejs",
        "selenium",
    ]

    func packages(_ arguments: String) throws -> [String] {
        let result = try CLI.runShell("bash \(Repository.root.path)/Scripts/setup.sh \(arguments) --list")
        try #require(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) }
    }

    @Test func theRuntimeSetUpInstallsNoPackageOnlyTheTestsNeed() throws {
        let runtime = try packages("")
        #expect(runtime.contains("libssh2-1-dev") && runtime.contains("libcurl4-openssl-dev"), "\(runtime)")
        for package in Self.testOnly {
            #expect(!runtime.contains(package), "\(package) is for the tests only")
        }
        let tests = try packages("--tests")
        #expect(Set(runtime).isSubset(of: tests))
        for package in Self.testOnly {
            #expect(tests.contains(package), "--tests installs \(package)")
        }
    }

    @Test func theReadmeStartsWithTwoCommandsAndCIRunsTheTestOne() throws {
        let readme = try String(contentsOf: Repository.root.appendingPathComponent("README.md"), encoding: .utf8)
        let block = try #require(readme.components(separatedBy: "```sh\n").dropFirst().first)
        let commands = block.components(separatedBy: "```")[0].split(separator: "\n")
        #expect(commands.count == 2, "\(commands)")
        #expect(commands[0].hasPrefix("Scripts/setup.sh && swift run"), "\(commands[0])")
        #expect(commands[1].hasPrefix("Scripts/setup.sh --tests && Scripts/test.sh"), "\(commands[1])")
        let ci = try String(contentsOf: Repository.root.appendingPathComponent(".ci/run"), encoding: .utf8)
        #expect(ci.contains("bash Scripts/setup.sh --tests\nbash Scripts/test.sh\n"))
    }
}
