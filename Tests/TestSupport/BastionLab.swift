public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// SSH hosts in network namespaces that the test process can reach only through a jump host, built by
/// `Scripts/netns-lab.sh` (see its header for the addresses) around the shared ``SSHTestServer``'s user
/// and keys.
///
/// One lab serves the whole test process: it is built on first use and taken down by the script once the
/// process has ended, also when it crashed. Building one
/// needs root and `ip netns`; ``unavailableReason`` says why it cannot be built here.
public struct BastionLab: Sendable {
    public let directory: String
    /// The lab's number: its namespaces are `hslN-b1`, `hslN-in`, `hslN-b2`, `hslN-dp`.
    public let index: Int
    /// The harness whose user and client keys every lab host accepts.
    public let base: SSHTestServer
    /// The jump host, the only lab address the test process reaches (port 22).
    public let bastion: String
    /// Targets behind `bastion`: sshd on ports 22 and 2222, and ports that never answer.
    public let inner: String
    /// A second jump host behind `bastion` (port 22).
    public let bastion2: String
    /// A target behind `bastion2` (port 22).
    public let deep: String
    public let silentPort: Int
    /// A port of `inner` whose connections are never accepted (their SYNs are dropped).
    public let unansweredPort: Int

    /// known_hosts holding every lab host's key.
    public var knownHostsPath: String { directory + "/known_hosts" }
    public var keyPath: String { base.keyPath }
    public var user: String { base.user }

    /// One of the lab's sshds: `b1`, `in`, `in2` (inner port 2222), `b2`, `dp`; for its log, pid and
    /// ``SSHTestServer/freezeSSHD()``.
    public func server(_ name: String) throws -> SSHTestServer {
        try SSHTestServer.load(directory + "/sshd-" + name)
    }

    /// Why no lab can be built here, or nil when one can.
    public static let unavailableReason: String? = {
        if getuid() != 0 { return "the bastion lab needs root to create network namespaces" }
        let status = SSHTestServer.run(["/bin/sh", "-c", "command -v ip >/dev/null && ip netns list >/dev/null 2>&1"])
        if status != 0 { return "the bastion lab needs ip netns (Debian package iproute2)" }
        return nil
    }()

    /// The process's lab, built on first use.
    public static func shared() throws -> BastionLab {
        try started.get()
    }

    private static let started: Result<BastionLab, HarnessError> = {
        if let reason = unavailableReason { return .failure(HarnessError(description: reason)) }
        let base: SSHTestServer
        do {
            base = try SSHTestServer.shared()
        } catch {
            return .failure(HarnessError(description: "no sshd harness: \(error)"))
        }
        // The script takes the lab down once this process has ended, whichever way it ends.
        let directory = NSTemporaryDirectory() + "hostscope-lab-\(getpid())"
        guard SSHTestServer.run(["/bin/bash", script, "up", directory, base.directory, String(getpid())]) == 0 else {
            return .failure(HarnessError(description: "Scripts/netns-lab.sh up failed; see its output above"))
        }
        guard let text = try? String(contentsOfFile: directory + "/env", encoding: .utf8) else {
            return .failure(HarnessError(description: "the lab wrote no \(directory)/env"))
        }
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
        }
        guard let index = values["LAB_INDEX"].flatMap({ Int($0) }), let bastion = values["LAB_BASTION"],
            let inner = values["LAB_INNER"],
            let bastion2 = values["LAB_BASTION2"], let deep = values["LAB_DEEP"],
            let silentPort = values["LAB_SILENT_PORT"].flatMap({ Int($0) }),
            let unansweredPort = values["LAB_UNANSWERED_PORT"].flatMap({ Int($0) })
        else {
            return .failure(HarnessError(description: "incomplete lab environment in \(directory)"))
        }
        return .success(
            BastionLab(
                directory: directory, index: index, base: base, bastion: bastion, inner: inner, bastion2: bastion2,
                deep: deep,
                silentPort: silentPort, unansweredPort: unansweredPort))
    }()

    private static var script: String { Repository.root.appendingPathComponent("Scripts/netns-lab.sh").path }

    /// Writes an ssh_config for the lab into a new file and returns its path: every host gets the harness
    /// user and key and the lab's known_hosts, then `body` follows.
    public func config(_ body: String, name: String = UUID().uuidString) throws -> String {
        let path = directory + "/config-\(name)"
        let text =
            body + "\n"
                + """
                Host *
                    User \(user)
                    IdentityFile \(keyPath)
                    IdentitiesOnly yes
                    UserKnownHostsFile \(knownHostsPath)
                    StrictHostKeyChecking yes
                    IdentityAgent none
                """ + "\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}
