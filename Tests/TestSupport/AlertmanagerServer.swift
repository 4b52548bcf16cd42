import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A real Alertmanager (Debian's `prometheus-alertmanager`) on a loopback port, clustering off, routing every
/// alert to one webhook; stopped by its pid.
public final class AlertmanagerServer: @unchecked Sendable {  // immutable after start; the process is only signalled
    public let port: Int
    public let directory: String
    private let process: Process

    /// `http://127.0.0.1:PORT`, the base URL hostscope's `--alertmanager` takes.
    public var url: String { "http://127.0.0.1:\(port)" }

    /// Starts Alertmanager routing to `webhook` (resolutions included, grouped per alert, sent at once) and waits
    /// until it is ready.
    public static func start(webhook: String) throws -> AlertmanagerServer {
        let directory = NSTemporaryDirectory() + "hostscope-alertmanager-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        try """
        route:
          receiver: hook
          group_by: ['alertname', 'instance']
          group_wait: 0s
          group_interval: 1s
          repeat_interval: 1h
        receivers:
          - name: hook
            webhook_configs:
              - url: '\(webhook)'
                send_resolved: true
        """.write(toFile: directory + "/alertmanager.yml", atomically: true, encoding: .utf8)
        let port = try LoopbackListener.freePort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prometheus-alertmanager")
        process.arguments = [
            "--config.file=\(directory)/alertmanager.yml", "--storage.path=\(directory)/data",
            "--web.listen-address=127.0.0.1:\(port)", "--cluster.listen-address=", "--log.level=warn",
        ]
        process.standardOutput = FileHandle.nullDevice
        FileManager.default.createFile(atPath: directory + "/alertmanager.log", contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/alertmanager.log"))
        try process.run()
        let server = AlertmanagerServer(port: port, directory: directory, process: process)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let response = try? CurlCommand.get(server.url + "/-/ready"), response.status == 200 { return server }
            Thread.sleep(forTimeInterval: 0.2)
        }
        server.stop()
        throw HarnessError(description: "alertmanager did not become ready; see \(directory)/alertmanager.log")
    }

    private init(port: Int, directory: String, process: Process) {
        self.port = port
        self.directory = directory
        self.process = process
    }

    public func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }
}
