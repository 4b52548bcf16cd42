public import Foundation
import Synchronization
import ValueFormats

/// A server script from `Scripts/` running for one test: started on a free loopback port, stopped by pid.
///
/// The script's contract: it binds a loopback port (0 means any free one), prints one JSON object line on
/// stdout with at least `"port"` when it is ready, and with `--exit-on-stdin-eof` exits when its standard
/// input closes. The last point means a test process that dies never leaves a server behind: the pipe closes
/// with it.
public final class PythonServer: @unchecked Sendable {  // Process is only terminated and awaited, both thread-safe.
    /// The port the server listens on.
    public let port: Int
    /// The server's process id.
    public let pid: Int32
    /// Every field of the ready line, values as text (e.g. `blackhole_port`).
    public let announcement: [String: String]
    /// Where the server's stderr goes, for diagnostics when a test fails.
    public let stderrFile: URL

    private let process: Process
    private let stdin: Pipe
    private let stopped = Lock(false)

    /// `http://127.0.0.1:PORT` (or `https://`, as the ready line says).
    public var baseURL: String {
        let host = announcement["host"] ?? "127.0.0.1"
        let scheme = announcement["scheme"] ?? "http"
        return "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    /// A failure to start the server, with what it printed on stderr.
    public struct StartError: Error, CustomStringConvertible {
        /// What went wrong, including the server's stderr.
        public let description: String
    }

    private init(
        process: Process, stdin: Pipe, port: Int, announcement: [String: String], stderrFile: URL
    ) {
        self.process = process
        self.stdin = stdin
        self.port = port
        self.pid = process.processIdentifier
        self.announcement = announcement
        self.stderrFile = stderrFile
    }

    deinit {
        stop()
    }

    /// Starts `Scripts/<script>` with `python3` (or `$PYTHON`) and waits until it prints its port.
    public static func start(
        _ script: String, arguments: [String] = [], exitsWithParent: Bool = true,
        readyTimeout: Duration = .seconds(30)
    ) async throws -> PythonServer {
        let path = Repository.root.appendingPathComponent("Scripts").appendingPathComponent(script).path
        guard FileManager.default.fileExists(atPath: path) else {
            throw StartError(description: "no server script at \(path)")
        }
        let stderrFile = FileManager.default.temporaryDirectory
            .appendingPathComponent("hostscope-\(script)-\(UUID().uuidString).stderr")
        _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let python = ProcessInfo.processInfo.environment["PYTHON"] ?? "python3"
        process.arguments = [python, "-u", path] + arguments + (exitsWithParent ? ["--exit-on-stdin-eof"] : [])
        let stdout = Pipe()
        let stdin = Pipe()
        process.standardOutput = stdout
        process.standardInput = stdin
        process.standardError = try FileHandle(forWritingTo: stderrFile)
        try process.run()

        let line = await readFirstLine(of: stdout.fileHandleForReading, process: process, timeout: readyTimeout)
        func failure(_ what: String) -> StartError {
            process.terminate()
            process.waitUntilExit()
            let stderr = (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? ""
            return StartError(description: "\(script) \(what); its stderr:\n\(stderr)")
        }
        guard let line else {
            let status = process.isRunning ? "still running" : "exit status \(process.terminationStatus)"
            throw failure("printed no ready line within \(readyTimeout) (\(status))")
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let port = object["port"] as? Int
        else {
            throw failure("printed a ready line without a port: \(line)")
        }
        let announcement = object.mapValues { "\($0)" }
        return PythonServer(
            process: process, stdin: stdin, port: port, announcement: announcement, stderrFile: stderrFile)
    }

    /// Stops the server like ``stop()``, waiting on a thread of its own so that the few blocked milliseconds
    /// of each stop do not add up on the cooperative pool when many tests run at once.
    public func stopInBackground() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                self.stop()
                continuation.resume()
            }.start()
        }
    }

    /// Stops the server: SIGTERM by pid, SIGKILL if it is still there after 5 s. Safe to call twice.
    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else {
            return
        }
        if process.isRunning {
            kill(pid, SIGTERM)
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning && Date() < deadline {
                usleep(10_000)
            }
            if process.isRunning {
                kill(pid, SIGKILL)
            }
        }
        process.waitUntilExit()
        try? stdin.fileHandleForWriting.close()
        try? FileManager.default.removeItem(at: stderrFile)
    }

    /// Reads up to the first newline on a thread of its own (blocking reads stay off the cooperative pool),
    /// then keeps draining so later output can never fill the pipe and stall the server.
    private static func readFirstLine(
        of handle: FileHandle, process: Process, timeout: Duration
    ) async -> String? {
        let resumed = Lock(false)
        return await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            @Sendable func finish(_ line: String?) {
                let first = resumed.withLock { resumed in
                    defer { resumed = true }
                    return !resumed
                }
                if first {
                    continuation.resume(returning: line)
                }
            }
            let reader = Thread {
                var buffer: [UInt8] = []
                var delivered = false
                while true {
                    let data = handle.availableData
                    if data.isEmpty {
                        break
                    }
                    guard !delivered else {
                        continue
                    }
                    buffer.append(contentsOf: data)
                    if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                        delivered = true
                        finish(String(decoding: buffer[..<newline], as: UTF8.self))
                    }
                }
                finish(nil)
            }
            reader.start()
            let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
                finish(nil)
            }
        }
    }
}

/// Runs `body` with a server from `Scripts/` and stops the server afterwards, whatever happens.
public func withPythonServer<T>(
    _ script: String, arguments: [String] = [], isolation: isolated (any Actor)? = #isolation,
    _ body: (PythonServer) async throws -> T
) async throws -> T {
    let server = try await PythonServer.start(script, arguments: arguments)
    do {
        let value = try await body(server)
        await server.stopInBackground()
        return value
    } catch {
        await server.stopInBackground()
        throw error
    }
}
