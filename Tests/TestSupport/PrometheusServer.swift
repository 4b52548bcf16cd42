import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A real Prometheus (Debian's `prometheus` package) on a loopback port, with a temporary
/// configuration and storage directory; stopped by its pid.
public final class PrometheusServer: @unchecked Sendable {  // immutable after start; the process is only signalled
    public let port: Int
    public let directory: String
    private let process: Process

    /// Starts Prometheus with `configuration` (YAML) and waits until it is ready.
    public static func start(configuration: String) throws -> PrometheusServer {
        let directory = NSTemporaryDirectory() + "hostscope-prometheus-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        try configuration.write(toFile: directory + "/prometheus.yml", atomically: true, encoding: .utf8)
        let port = try LoopbackListener.freePort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prometheus")
        process.arguments = [
            "--config.file=\(directory)/prometheus.yml", "--storage.tsdb.path=\(directory)/data",
            "--web.listen-address=127.0.0.1:\(port)", "--web.enable-lifecycle", "--log.level=warn",
        ]
        process.standardOutput = FileHandle.nullDevice
        FileManager.default.createFile(atPath: directory + "/prometheus.log", contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/prometheus.log"))
        try process.run()
        let server = PrometheusServer(port: port, directory: directory, process: process)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let status = try? server.get("/-/ready").status, status == 200 { return server }
            Thread.sleep(forTimeInterval: 0.2)
        }
        server.stop()
        throw HarnessError(description: "prometheus did not become ready; see \(directory)/prometheus.log")
    }

    private init(port: Int, directory: String, process: Process) {
        self.port = port
        self.directory = directory
        self.process = process
    }

    /// A GET against Prometheus's HTTP API: status and body.
    public func get(_ path: String) throws -> (status: Int, body: String) {
        let response = try CurlCommand.get("http://127.0.0.1:\(port)\(path)")
        return (response.status, response.body)
    }

    /// The result of an instant PromQL query, as the API's JSON `data.result` array.
    public func query(_ promQL: String) throws -> [[String: Any]] {
        let encoded = promQL.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? promQL
        let (status, body) = try get("/api/v1/query?query=\(encoded)")
        guard status == 200,
            let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
            let data = object["data"] as? [String: Any], let result = data["result"] as? [[String: Any]]
        else { throw HarnessError(description: "query \(promQL) failed: \(status) \(body)") }
        return result
    }

    /// The scrape targets and their health, as `/api/v1/targets` lists the active ones.
    public func activeTargets() throws -> [[String: Any]] {
        let (_, body) = try get("/api/v1/targets?state=active")
        let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
        return ((object?["data"] as? [String: Any])?["activeTargets"] as? [[String: Any]]) ?? []
    }

    public func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }
}
