import Foundation
import HostStats
import Testing

/// Process names with spaces, parentheses and newlines, as real `ps` and `top` print them: copies of
/// `sleep` named `a (b) c` and `nl⏎x`, and one whose argv[0] holds a newline. procps pads its columns
/// and shows a control character of a name as `?` (comm) or a space (args); the parsers must give each
/// process its own name, whole, and shift no column.
@Suite(.serialized) struct ProcessNameTests {
    /// Starts the processes, runs `body` with their pids and the names procps shows for them (comm, args),
    /// and stops them.
    static func withOddlyNamedProcesses(
        extraNames: [String] = [], _ body: ([(pid: Int, comm: String, args: String)]) throws -> Void
    ) throws {
        let directory = NSTemporaryDirectory() + "hostscope-names-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var started: [(process: Process, comm: String, args: String)] = []
        defer {
            for entry in started {
                kill(entry.process.processIdentifier, SIGKILL)
                entry.process.waitUntilExit()
            }
        }
        for name in ["a (b) c", "nl\nx"] + extraNames {
            let path = directory + "/" + name
            try FileManager.default.copyItem(atPath: "/bin/sleep", toPath: path)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = ["120"]
            try process.run()
            let shown = path.replacingOccurrences(of: "\n", with: " ")
            started.append((process, name.replacingOccurrences(of: "\n", with: "?"), shown + " 120"))
        }
        let renamed = Process()
        renamed.executableURL = URL(fileURLWithPath: "/bin/bash")
        renamed.arguments = ["-c", "exec -a \"$(printf 'arg0\\nwith newline (x) y')\" sleep 120"]
        try renamed.run()
        started.append((renamed, "sleep", "arg0 with newline (x) y 120"))
        // exec -a has replaced bash once ps shows sleep's name for that pid.
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline,
            (try? String(contentsOfFile: "/proc/\(renamed.processIdentifier)/comm", encoding: .utf8)) != "sleep\n"
        {
            usleep(20_000)
        }
        try body(started.map { (Int($0.process.processIdentifier), $0.comm, $0.args) })
    }

    static func processes(_ tool: String, _ command: String) throws -> [Int: String] {
        let output = try LocalShell.run(command)
        let part = try #require(ToolParser.named(tool)).parse(output)
        return Dictionary((part.processes ?? []).map { ($0.pid, $0.command) }, uniquingKeysWith: { first, _ in first })
    }

    @Test func psReadsNamesWithSpacesParenthesesAndNewlinesWhole() throws {
        try Self.withOddlyNamedProcesses { expected in
            // The tools collector's own columns, then comm alone, then both (args wins as the command).
            let argsTable = try Self.processes("ps", "ps -eo pid,ppid,user:32,pcpu,pmem,rss,args")
            let commTable = try Self.processes("ps", "ps -eo pid,user,comm,rss")
            let bothTable = try Self.processes("ps", "ps -eo pid,comm,pcpu,args")
            for process in expected {
                #expect(argsTable[process.pid] == process.args)
                #expect(commTable[process.pid] == process.comm)
                #expect(bothTable[process.pid] == process.args)
            }
        }
    }

    @Test func topReadsNamesWithSpacesParenthesesAndNewlinesWhole() throws {
        try Self.withOddlyNamedProcesses { expected in
            let short = try Self.processes("top", "COLUMNS=512 top -b -n 1 -w 512")
            let long = try Self.processes("top", "COLUMNS=512 top -b -n 1 -c -w 512")
            for process in expected {
                #expect(short[process.pid] == process.comm)
                #expect(long[process.pid] == process.args)
            }
        }
    }
}
