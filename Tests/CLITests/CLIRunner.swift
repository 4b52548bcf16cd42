import Foundation
import Synchronization
import TestSupport
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the built `hostscope` binary and captures what it printed.
struct CLIResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

enum CLI {
    static var binary: String { Repository.productsDirectory.appendingPathComponent("hostscope").path }

    /// `XDG_DATA_HOME` of every run: a directory of this test process.
    static let dataHome = NSTemporaryDirectory() + "hostscope-cli-data-\(getpid())"

    /// The environment every run starts from: this process's, without an agent socket, with the test's own data
    /// directory, and without the OpenTelemetry variables of whoever runs the tests (they would send its spans
    /// somewhere, or change their form).
    static var baseEnvironment: [String: String] {
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("OTEL_") }
        env.removeValue(forKey: "SSH_AUTH_SOCK")
        // Commands that store spans or history write under the test's own data directory, never the user's.
        env["XDG_DATA_HOME"] = dataHome
        env.removeValue(forKey: "HOSTSCOPE_DB")
        return env
    }

    static func run(
        _ arguments: [String], environment: [String: String] = [:], stdin: String? = nil, timeout: TimeInterval = 60
    ) throws -> CLIResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        var env = baseEnvironment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try? input.fileHandleForWriting.close()
        // Read both pipes while the process runs so a large output cannot block it.
        let stdoutData = Lock(Data())
        let stderrData = Lock(Data())
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            let data = out.fileHandleForReading.readDataToEndOfFile()
            stdoutData.withLock { $0 = data }
            group.leave()
        }
        group.enter()
        DispatchQueue.global().async {
            let data = err.fileHandleForReading.readDataToEndOfFile()
            stderrData.withLock { $0 = data }
            group.leave()
        }
        if group.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            throw HarnessError(
                description: "hostscope \(arguments.joined(separator: " ")) did not finish in \(timeout) s")
        }
        process.waitUntilExit()
        return CLIResult(
            status: process.terminationStatus, stdout: String(decoding: stdoutData.withLock { $0 }, as: UTF8.self),
            stderr: String(decoding: stderrData.withLock { $0 }, as: UTF8.self))
    }

    /// Runs a shell command line (for pipelines around the binary).
    static func runShell(_ script: String, environment: [String: String] = [:]) throws -> CLIResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        var env = baseEnvironment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CLIResult(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// Runs `hostscope ARGUMENTS` with a real terminal (a pseudo-terminal from `script`) as its standard
    /// output and error; what it printed on either comes back as `stdout`.
    static func runOnTerminal(_ arguments: [String], environment: [String: String] = [:]) throws -> CLIResult {
        let line = ([binary] + arguments).map(shellQuoted).joined(separator: " ")
        let script = NSTemporaryDirectory() + "hostscope-tty-\(UUID().uuidString).sh"
        try (line + "\n").write(toFile: script, atomically: true, encoding: .utf8)
        defer { unlink(script) }
        return try runShell("script -qec 'sh \(script)' /dev/null", environment: environment)
    }

    /// `word` in single quotes for `/bin/sh`.
    static func shellQuoted(_ word: String) -> String {
        "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Connection arguments for the harness server.
    static func harnessArguments(_ server: SSHTestServer) -> [String] {
        ["-i", server.keyPath, "--known-hosts", server.knownHostsPath]
    }
}
