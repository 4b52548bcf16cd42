public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// PyPI's `rotel` collector (its bundled `rotel-agent` binary) as a second, independent OTLP/HTTP
/// receiver: it listens on loopback and prints every span and metric it receives (`--debug-log`) to a file,
/// and can forward what it received over OTLP/HTTP to another receiver.
public final class RotelAgent: @unchecked Sendable {  // Process is only terminated and awaited, both thread-safe.
    /// The OTLP/HTTP port.
    public let port: Int
    /// Where rotel's standard output (the received spans) goes.
    public let outputFile: URL
    private let process: Process

    private init(port: Int, outputFile: URL, process: Process) {
        self.port = port
        self.outputFile = outputFile
        self.process = process
    }

    deinit {
        stop()
    }

    /// The `rotel-agent` binary of the installed `rotel` package, `nil` when it is not installed.
    public static var path: String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            ProcessInfo.processInfo.environment["PYTHON"] ?? "python3", "-c",
            "import os, rotel; print(os.path.join(os.path.dirname(rotel.__file__), 'rotel-agent'))",
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let path = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return process.terminationStatus == 0 && FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    /// Starts rotel on free loopback ports and waits until its OTLP/HTTP port accepts connections; with
    /// `receiver` (a base URL on loopback) it forwards everything there over OTLP/HTTP, else it drops it.
    public static func start(_ binary: String, forwardingTo receiver: String? = nil) throws -> RotelAgent {
        let http = try freePort()
        let grpc = try freePort()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hostscope-rotel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let output = directory.appendingPathComponent("received.txt")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "start", "--otlp-http-endpoint", "127.0.0.1:\(http)", "--otlp-grpc-endpoint", "127.0.0.1:\(grpc)",
        ]
        if let receiver {
            process.arguments! += [
                "--exporter", "otlp", "--otlp-exporter-endpoint", receiver, "--otlp-exporter-protocol", "http",
            ]
        } else {
            process.arguments! += ["--exporter", "blackhole"]
        }
        process.arguments! += [
            "--debug-log", "traces", "--debug-log", "metrics", "--debug-log-verbosity", "detailed",
            "--pid-file", directory.appendingPathComponent("rotel.pid").path,
            "--log-file", directory.appendingPathComponent("rotel.log").path,
        ]
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let agent = RotelAgent(port: http, outputFile: output, process: process)
        let deadline = Date().addingTimeInterval(20)
        while !canConnect(port: http) {
            guard process.isRunning, Date() < deadline else {
                agent.stop()
                throw HarnessError(description: "rotel did not listen on 127.0.0.1:\(http): \(agent.output())")
            }
            usleep(50_000)
        }
        return agent
    }

    /// What rotel printed so far.
    public func output() -> String {
        (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
    }

    /// SIGTERM by pid, SIGKILL after 5 s.
    public func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// A loopback port nothing listens on now.
    public static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw HarnessError(description: "socket failed") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
                guard bind(descriptor, pointer, length) == 0 else { return -1 }
                return getsockname(descriptor, pointer, &length)
            }
        }
        guard bound == 0 else { throw HarnessError(description: "bind failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func canConnect(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
