import Foundation

/// GET requests with the `curl` command, for tests of HTTP servers that run as other processes.
public enum CurlCommand {
    /// A response: status (0 when nothing answered), headers in lower case, body.
    public struct Response: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: String
    }

    /// GETs `url` with `headers` (`Name: value`), waiting at most `timeout` seconds.
    public static func get(_ url: String, headers: [String] = [], timeout: Double = 10, extra: [String] = [])
        throws -> Response
    {
        let directory = NSTemporaryDirectory()
        let headerFile = directory + "hostscope-curl-\(UUID().uuidString).headers"
        defer { try? FileManager.default.removeItem(atPath: headerFile) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments =
            ["-s", "-D", headerFile, "-o", "-", "--max-time", String(timeout)]
            + headers.flatMap { ["-H", $0] } + extra + [url]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let head = (try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? ""
        var status = 0
        var fields: [String: String] = [:]
        for line in head.components(separatedBy: "\r\n") {
            if line.hasPrefix("HTTP/") {
                status = Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
                fields = [:]
            } else if let colon = line.firstIndex(of: ":") {
                fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                    in: .whitespaces)
            }
        }
        return Response(status: status, headers: fields, body: String(decoding: data, as: UTF8.self))
    }
}
