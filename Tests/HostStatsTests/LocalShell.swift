import Foundation

/// Runs scripts with this machine's `sh`, as a host would run a probe.
enum LocalShell {
    /// What `script` printed on stdout (stderr is dropped), with `path` prepended to PATH (or, with
    /// `pathOnly`, as the whole PATH).
    static func run(_ script: String, path: String? = nil, pathOnly: Bool = false) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        var environment = ProcessInfo.processInfo.environment
        if let path { environment["PATH"] = pathOnly ? path : path + ":" + (environment["PATH"] ?? "/usr/bin:/bin") }
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
