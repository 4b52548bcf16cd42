import Foundation

/// The real OpenSSH server the integration tests talk to, started by `Scripts/sshd-harness.sh`.
///
/// When `HOSTSCOPE_TEST_SSH_DIR` names a running harness (Scripts/test.sh starts one), that is
/// used; otherwise the first test to ask starts one in a temporary directory and it is stopped
/// when the test process exits.
public struct SSHTestServer: Sendable {
    public let directory: String
    public let host: String
    public let port: Int
    public let user: String
    public let home: String
    /// Password authentication works only when the harness runs as root.
    public let passwordAuthentication: Bool

    public var keyPath: String { directory + "/id_ed25519" }
    public var encryptedKeyPath: String { directory + "/id_ed25519_pass" }
    public var ecdsaKeyPath: String { directory + "/id_ecdsa" }
    public var rsaKeyPath: String { directory + "/id_rsa" }
    public var knownHostsPath: String { directory + "/known_hosts" }
    public var agentSocket: String { directory + "/agent.sock" }
    public var hostPublicKeyPath: String { directory + "/ssh_host_ed25519_key.pub" }
    public var logPath: String { directory + "/sshd.log" }
    public var sshdPID: Int32? {
        (try? String(contentsOfFile: directory + "/sshd.pid", encoding: .utf8))
            .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }
    public var password: String? { try? String(contentsOfFile: directory + "/password.txt", encoding: .utf8) }
    public var passphrase: String { (try? String(contentsOfFile: directory + "/passphrase.txt", encoding: .utf8)) ?? "" }

    /// `user@127.0.0.1:port`, the form the command line accepts.
    public var target: String { "\(user)@\(host):\(port)" }

    /// The shared server, started on first use.
    public static func shared() throws -> SSHTestServer {
        try started.get()
    }

    private static let started: Result<SSHTestServer, HarnessError> = {
        if let directory = ProcessInfo.processInfo.environment["HOSTSCOPE_TEST_SSH_DIR"],
            let server = try? load(directory)
        {
            return .success(server)
        }
        let directory = NSTemporaryDirectory() + "hostscope-sshd-\(getpid())"
        let script = Repository.root.appendingPathComponent("Scripts/sshd-harness.sh").path
        let status = run(["/bin/bash", script, "start", directory])
        guard status == 0 else {
            return .failure(HarnessError(description: "Scripts/sshd-harness.sh start failed (exit \(status))"))
        }
        harnessDirectoryToStop = directory
        atexit {
            if let directory = harnessDirectoryToStop {
                let script = Repository.root.appendingPathComponent("Scripts/sshd-harness.sh").path
                _ = run(["/bin/bash", script, "stop", directory])
            }
        }
        return Result { try load(directory) }.mapError { $0 as? HarnessError ?? HarnessError(description: "\($0)") }
    }()

    nonisolated(unsafe) private static var harnessDirectoryToStop: String?

    public static func load(_ directory: String) throws -> SSHTestServer {
        guard let text = try? String(contentsOfFile: directory + "/env", encoding: .utf8) else {
            throw HarnessError(description: "no harness environment in \(directory)")
        }
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
        }
        guard let host = values["HOSTSCOPE_TEST_SSH_HOST"], let port = values["HOSTSCOPE_TEST_SSH_PORT"].flatMap(Int.init),
            let user = values["HOSTSCOPE_TEST_SSH_USER"], let home = values["HOSTSCOPE_TEST_SSH_HOME"]
        else {
            throw HarnessError(description: "incomplete harness environment in \(directory)")
        }
        return SSHTestServer(
            directory: directory, host: host, port: port, user: user, home: home,
            passwordAuthentication: values["HOSTSCOPE_TEST_SSH_PASSWORD_AUTH"] == "yes")
    }

    /// Runs a program and waits; returns its exit status.
    @discardableResult
    public static func run(_ arguments: [String], environment: [String: String]? = nil) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        if let environment { process.environment = environment }
        do {
            try process.run()
        } catch {
            return -1
        }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

public struct HarnessError: Error, CustomStringConvertible, Sendable {
    public var description: String

    public init(description: String) {
        self.description = description
    }
}
