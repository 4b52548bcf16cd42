public import Foundation

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
    /// A second sshd of the harness that takes the password only through keyboard-interactive
    /// (PAM); nil when the harness could not start one (not root).
    public var keyboardInteractivePort: Int? = nil
    /// A user whose login shell is tcsh, taking the same keys (root harnesses with tcsh installed).
    public var tcshUser: String? = nil

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
    public var passphrase: String {
        (try? String(contentsOfFile: directory + "/passphrase.txt", encoding: .utf8)) ?? ""
    }

    /// `user@127.0.0.1:port`, the form the command line accepts.
    public var target: String { "\(user)@\(host):\(port)" }

    /// An ssh_config `Host` block that reaches this server as `names` (`web1 other`): its address, port, user, a key
    /// (the harness's unless `identity` says) used alone, known_hosts (the harness's unless `knownHosts` says), and
    /// `extra` lines.
    public func configBlock(
        _ names: String, identity: String? = nil, knownHosts: String? = nil, extra: [String] = []
    ) -> String {
        let lines =
            [
                "HostName \(host)", "Port \(port)", "User \(user)", "IdentityFile \(identity ?? keyPath)",
                "IdentitiesOnly yes", "UserKnownHostsFile \(knownHosts ?? knownHostsPath)",
            ] + extra
        return "Host \(names)\n" + lines.map { "    " + $0 + "\n" }.joined()
    }

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
        guard let host = values["HOSTSCOPE_TEST_SSH_HOST"],
            let port = values["HOSTSCOPE_TEST_SSH_PORT"].flatMap(Int.init),
            let user = values["HOSTSCOPE_TEST_SSH_USER"], let home = values["HOSTSCOPE_TEST_SSH_HOME"]
        else {
            throw HarnessError(description: "incomplete harness environment in \(directory)")
        }
        var server = SSHTestServer(
            directory: directory, host: host, port: port, user: user, home: home,
            passwordAuthentication: values["HOSTSCOPE_TEST_SSH_PASSWORD_AUTH"] == "yes")
        server.keyboardInteractivePort = values["HOSTSCOPE_TEST_SSH_KBDINT_PORT"].flatMap { Int($0) }
        server.tcshUser = values["HOSTSCOPE_TEST_SSH_TCSH_USER"].flatMap { $0.isEmpty ? nil : $0 }
        return server
    }

    /// A server of its own, for tests that stop and restart it; stop it with ``stop()``.
    public static func startDedicated() throws -> SSHTestServer {
        let directory = NSTemporaryDirectory() + "hostscope-sshd-dedicated-\(UUID().uuidString)"
        guard run(["/bin/bash", harnessScript, "start", directory]) == 0 else {
            throw HarnessError(description: "Scripts/sshd-harness.sh start failed for \(directory)")
        }
        return try load(directory)
    }

    /// Stops sshd and every connection it serves, keeping its port and host key.
    public func stopSSHD() {
        Self.run(["/bin/bash", Self.harnessScript, "stop-sshd", directory])
    }

    /// Starts a stopped sshd again.
    public func resumeSSHD() throws {
        guard Self.run(["/bin/bash", Self.harnessScript, "resume-sshd", directory]) == 0 else {
            throw HarnessError(description: "sshd in \(directory) did not start again")
        }
    }

    /// Stops a dedicated server and its agent, and removes its directory.
    public func stop() {
        Self.run(["/bin/bash", Self.harnessScript, "stop", directory])
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Stops (SIGSTOP) the server and every process serving its connections, as a host that
    /// hangs would: connections stay open but nothing answers. ``thawSSHD()`` lets them go on.
    public func freezeSSHD() {
        for pid in sshdProcessTree() { kill(pid, SIGSTOP) }
    }

    /// Continues what ``freezeSSHD()`` stopped.
    public func thawSSHD() {
        for pid in sshdProcessTree() { kill(pid, SIGCONT) }
    }

    /// The listening sshd and its descendants (per-connection monitors, session processes, shells).
    public func sshdProcessTree() -> [pid_t] {
        guard let listener = sshdPID else { return [] }
        var parents: [pid_t: pid_t] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let parent = pid_t(fields[1]) { parents[pid] = parent }
        }
        var tree: [pid_t] = [listener]
        var index = 0
        while index < tree.count {
            let parent = tree[index]
            tree.append(contentsOf: parents.filter { $0.value == parent }.map(\.key))
            index += 1
        }
        return tree
    }

    static var harnessScript: String { Repository.root.appendingPathComponent("Scripts/sshd-harness.sh").path }

    /// Runs a program and waits; returns its exit status.
    ///
    /// Spawned with `posix_spawn` and reaped with `waitpid`: Foundation's `Process` on Linux
    /// notices a child's exit through a socket the child inherits, and daemons the harness
    /// script starts (sshd, ssh-agent) inherit it too, so `waitUntilExit` would wait for them.
    @discardableResult
    public static func run(_ arguments: [String], environment: [String: String]? = nil) -> Int32 {
        var pid: pid_t = 0
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let variables = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        var envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        // The daemons must die of the harness's SIGTERM: a test runner thread may block signals,
        // and a spawned child inherits the mask of the thread that spawned it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        guard posix_spawn(&pid, arguments[0], &actions, &attributes, &argv, &envp) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return -1 }
        }
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
}

public struct HarnessError: Error, CustomStringConvertible, Sendable {
    public var description: String

    public init(description: String) {
        self.description = description
    }
}
