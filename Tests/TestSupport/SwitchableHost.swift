public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A host of the harness sshd reached through a `ProxyCommand` that connects only while a flag file exists,
/// so a test can take the host down (no new connection, the open one cut) and bring it back: the proxy writes
/// its pid to `flag + ".pid"`, and refuses with "NAME is switched off by the test" while the flag is gone.
public struct SwitchableHost: Sendable {
    /// The `Host` name in the ssh_config.
    public let name: String
    /// The file whose presence lets the host connect.
    public let flag: String

    /// A host called `name` switched by `flag`, which is made now: the host starts up.
    public init(_ name: String, flag: String) {
        self.name = name
        self.flag = flag
        FileManager.default.createFile(atPath: flag, contents: nil)
    }

    /// The host's ssh_config block for `server`.
    public func configBlock(_ server: SSHTestServer) -> String {
        server.configBlock(
            name,
            extra: [
                "ProxyCommand sh -c 'test -e \(flag) || { echo \"\(name) is switched off by the test\" >&2; exit 1; }; "
                    + "echo $$ > \(flag).pid; exec busybox nc 127.0.0.1 \(server.port)'"
            ])
    }

    /// Down: no new connection, and the open session goes with its proxy (killed).
    public func takeDown() throws {
        try FileManager.default.removeItem(atPath: flag)
        let text = try String(contentsOfFile: flag + ".pid", encoding: .utf8)
        guard let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw HarnessError(description: "\(flag).pid holds no pid: \(text)")
        }
        kill(pid, SIGKILL)
    }

    /// Back: the next attempt connects.
    public func bringUp() {
        FileManager.default.createFile(atPath: flag, contents: nil)
    }
}
