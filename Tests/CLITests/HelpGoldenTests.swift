import Foundation
import TestSupport
import Testing

/// `--help` of every command against a golden file under Fixtures/help/: a change to the command
/// line shows up in review as a change to these files. Run with `HOSTSCOPE_RECORD_GOLDENS=1` to
/// rewrite them on purpose.
@Suite struct HelpGoldenTests {
    static let commands: [[String]] = [
        [], ["snapshot"], ["watch"], ["serve"], ["history"], ["alerts"], ["alerts", "list"], ["alerts", "check"],
        ["parse"],
        ["files"], ["files", "ls"], ["files", "tree"], ["files", "stat"], ["files", "cat"], ["files", "grep"],
        ["files", "find"], ["files", "get"],
        ["trace"], ["trace", "list"], ["trace", "show"], ["trace", "export"], ["trace", "push"], ["chat"], ["mcp"],
        ["top"],
    ]

    @Test(arguments: commands)
    func helpMatchesItsGolden(_ command: [String]) throws {
        let result = try CLI.run(command + ["--help"], environment: ["COLUMNS": "100"])
        #expect(result.status == 0)
        let name = (["hostscope"] + command).joined(separator: "-")
        let golden = Repository.fixtures.appendingPathComponent("help/\(name).txt")
        if ProcessInfo.processInfo.environment["HOSTSCOPE_RECORD_GOLDENS"] == "1" {
            try result.stdout.write(to: golden, atomically: true, encoding: .utf8)
            return
        }
        let expected = try String(contentsOf: golden, encoding: .utf8)
        #expect(result.stdout == expected, "\(name): rerun with HOSTSCOPE_RECORD_GOLDENS=1 if the change is intended")
    }
}
