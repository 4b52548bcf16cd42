import Foundation

/// The OpenSSH client installed on this machine, run as a reference for what ssh_config means.
struct OpenSSHClient {
    struct Output {
        var status: Int32
        var standardOutput: String
        var standardError: String
    }

    let executable: URL

    /// The `ssh` on `PATH` (Debian's `openssh-client`), or nil.
    static func installed() -> OpenSSHClient? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":").map(String.init) + ["/usr/bin"] {
            let candidate = URL(fileURLWithPath: directory).appendingPathComponent("ssh")
            if FileManager.default.isExecutableFile(atPath: candidate.path) {
                return OpenSSHClient(executable: candidate)
            }
        }
        return nil
    }

    /// Runs `ssh` with only `variables` (and a `PATH`) in its environment, so nothing of the caller's
    /// agent, home or locale leaks in.
    func run(_ arguments: [String], variables: [String: String]) throws -> Output {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var environment = variables
        environment["PATH"] = "/usr/bin:/bin"
        process.environment = environment
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Outputs are a few kilobytes, far below a pipe's buffer, so reading one after the other cannot stall.
        let standardOutput = output.fileHandleForReading.readDataToEndOfFile()
        let standardError = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus,
            standardOutput: String(decoding: standardOutput, as: UTF8.self),
            standardError: String(decoding: standardError, as: UTF8.self))
    }

    /// `ssh -G`: the configuration `ssh` would use, as lower-case keyword and value pairs in its order.
    func evaluatedConfig(
        file: String, host: String, user: String?, port: Int?, variables: [String: String]
    ) throws -> (status: Int32, options: [(String, String)], errors: String) {
        var arguments = ["-G", "-T", "-F", file]
        if let user {
            arguments += ["-l", user]
        }
        if let port {
            arguments += ["-p", String(port)]
        }
        let output = try run(arguments + [host], variables: variables)
        let options = output.standardOutput.split(whereSeparator: \.isNewline).map { line in
            let parts = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
        return (output.status, options, output.standardError)
    }

    /// The identity file paths `ssh` loads, after `~`, `%` and `${}` expansion. `ssh -G` prints them
    /// unexpanded, so this starts a real `ssh -v` whose proxy command exits at once: the files are expanded
    /// and logged after the (proxy) connection opens and before the handshake fails on the closed pipe.
    func expandedIdentityFiles(
        file: String, host: String, user: String?, port: Int?, variables: [String: String]
    ) throws -> [String] {
        var arguments = ["-v", "-T", "-F", file, "-o", "ProxyCommand=exit 0", "-o", "BatchMode=yes"]
        if let user {
            arguments += ["-l", user]
        }
        if let port {
            arguments += ["-p", String(port)]
        }
        let output = try run(arguments + [host, "true"], variables: variables)
        let prefix = "debug1: identity file "
        // With -v, ssh ends its log lines with CR LF.
        // The proxy command's shell complains on the same stderr ("exec: exit: not found"), in two writes: ssh's
        // line may land between them, behind the complaint, so the prefix is looked for anywhere in a line.
        let logged = output.standardError.split(whereSeparator: \.isNewline).compactMap { line -> String? in
            guard let start = line.range(of: prefix), let type = line.range(of: " type ", options: .backwards),
                start.upperBound <= type.lowerBound
            else { return nil }
            return String(line[start.upperBound..<type.lowerBound])
        }
        // Each key file is followed by its `-cert` companion, which hostscope does not look for.
        return logged.enumerated().filter { $0.offset.isMultiple(of: 2) }.map(\.element)
    }
}
