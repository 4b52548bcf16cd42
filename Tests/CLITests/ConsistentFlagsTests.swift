import Foundation
import OrderedJSON
import TestSupport
import Testing

/// Short flags mean one thing in every command (`-f` format, `-o` output), old spellings still work, and a
/// misspelt command gets the one it was probably meant to be.
@Suite struct ConsistentFlagsTests {
    @Test func dashFIsTheFormatInSnapshotHistoryAndWatch() throws {
        let snapshot = try CLI.run(["snapshot", "local", "-f", "ndjson", "--sample", "100ms"])
        #expect(snapshot.status == 0, "\(snapshot.stderr)")
        #expect(try JSONParser.parse(snapshot.stdout.trimmingCharacters(in: .newlines))["host"] == "local")
        let database = NSTemporaryDirectory() + "hostscope-flags-\(UUID().uuidString).sqlite"
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) } }
        let watch = try CLI.run(["watch", "local", "--every", "200ms", "--count", "1", "-f", "csv", "--db", database])
        #expect(watch.status == 0, "\(watch.stderr)")
        #expect(watch.stdout.hasPrefix("timestamp,"))
        let history = try CLI.run(["history", "local", "-f", "ndjson", "--db", database])
        #expect(history.status == 0, "\(history.stderr)")
        #expect(try JSONParser.parse(history.stdout.trimmingCharacters(in: .newlines))["host"] == "local")
    }

    @Test func theOldDashOFormatSpellingIsKeptButNotShown() throws {
        let snapshot = try CLI.run(["snapshot", "local", "-o", "ndjson", "--sample", "100ms"])
        #expect(snapshot.status == 0, "\(snapshot.stderr)")
        #expect(try JSONParser.parse(snapshot.stdout.trimmingCharacters(in: .newlines))["host"] == "local")
        let help = try CLI.run(["snapshot", "--help"])
        #expect(!help.stdout.contains("-o,"))
        #expect(help.stdout.contains("-f, --format"))
    }

    @Test func aNegativeValueIsJudgedByItsOptionRatherThanMissing() throws {
        let top = try CLI.run(["snapshot", "local", "--top", "-3"])
        #expect(top.status == 64)
        #expect(top.stderr.hasPrefix("Error: --top must be 0 or more."), "\(top.stderr)")
        let every = try CLI.run(["watch", "local", "--every", "-5s", "--count", "1"])
        #expect(every.status == 64)
        #expect(!every.stderr.contains("Missing value"), "\(every.stderr)")
        #expect(
            every.stderr.hasPrefix(
                "Error: The value '-5s' is invalid for '--every <duration>': a duration is a number of 0 or more and a unit"
            ), "\(every.stderr)")
        // So does any duration it cannot read.
        let unit = try CLI.run(["snapshot", "local", "--sample", "5x"])
        #expect(unit.status == 64)
        #expect(unit.stderr.contains("'--sample <duration>': a duration is a number"), "\(unit.stderr)")
        let port = try CLI.run(["snapshot", "web1", "-p", "-22"])
        #expect(port.status == 64)
        #expect(port.stderr.hasPrefix("Error: --port -22 is not a TCP port"), "\(port.stderr)")
        // A value that is really missing is still said to be.
        let missing = try CLI.run(["snapshot", "local", "--top"])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("Missing value for '--top <top>'"), "\(missing.stderr)")
    }

    @Test func everyUsageErrorExitsWithTheOneStatusOfTheArgumentParser() throws {
        let cases: [[String]] = [
            ["watch", "local", "--frobnicate"],
            ["watch", "--no-history"],
            ["snapshot", "local", "-F", "/nonexistent/ssh_config"],
            ["watch", "--hosts-file", "/nonexistent/hosts", "--no-history"],
            ["files", "ls", "/tmp"],
        ]
        for arguments in cases {
            let result = try CLI.run(arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(!result.stderr.isEmpty, "\(arguments) says why")
        }
    }

    @Test func aMisspeltCommandIsAnsweredWithTheOneItWasMeantToBe() throws {
        let top = try CLI.run(["snapshto", "local"])
        #expect(top.status == 64)
        #expect(top.stderr == "hostscope: hostscope has no command 'snapshto'; did you mean 'hostscope snapshot'?\n")
        let nested = try CLI.run(["files", "lss", "local:/"])
        #expect(nested.status == 64)
        #expect(nested.stderr.contains("did you mean 'hostscope files ls'?"))
        let unknown = try CLI.run(["frobnicate"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("the commands are snapshot, watch"))
    }
}
