import Foundation
import OrderedJSON
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The systemd unit, sysusers.d and tmpfiles.d files under Scripts/systemd/: checked by systemd's own tools
/// (in a directory standing for the root, so nothing on this machine changes), and the unit's command line
/// run as a real `serve`.
@Suite(.serialized) struct SystemdUnitTests {
    static let directory = Repository.root.appendingPathComponent("Scripts/systemd").path
    static let hasSystemd =
        FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-sysusers")
    static let skipReason: Comment =
        "systemd-analyze is not installed: apt-get install systemd (Scripts/setup.sh --tests does)"

    let scratch: String

    init() throws {
        scratch = NSTemporaryDirectory() + "hostscope-systemd-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    }

    /// The unit's text, with the binary it runs replaced by `binary`.
    func unit(binary: String) throws -> String {
        try String(contentsOfFile: Self.directory + "/hostscope.service", encoding: .utf8)
            .replacingOccurrences(of: "/usr/local/bin/hostscope", with: binary)
    }

    @Test(.enabled(if: hasSystemd, skipReason))
    func systemdAnalyzeVerifiesTheUnitWithoutAWord() throws {
        let path = scratch + "/hostscope.service"
        try unit(binary: CLI.binary).write(toFile: path, atomically: true, encoding: .utf8)
        let result = try CLI.runShell("systemd-analyze verify \(path) 2>&1")
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.isEmpty, "an unknown key or a bad value is a warning: \(result.stdout)")
    }

    @Test(.enabled(if: hasSystemd, skipReason))
    func sysusersAndTmpfilesMakeTheUserItsHomeAndAPrivateTokenFile() throws {
        let root = scratch + "/root"
        for folder in ["/etc/sysusers.d", "/etc/tmpfiles.d", "/etc/hostscope"] {
            try FileManager.default.createDirectory(atPath: root + folder, withIntermediateDirectories: true)
        }
        try FileManager.default.copyItem(
            atPath: Self.directory + "/hostscope.sysusers.conf", toPath: root + "/etc/sysusers.d/hostscope.conf")
        try FileManager.default.copyItem(
            atPath: Self.directory + "/hostscope.tmpfiles.conf", toPath: root + "/etc/tmpfiles.d/hostscope.conf")
        // A token written with the usual umask, readable by others: tmpfiles makes it the service's own.
        try "0123456789abcdef0123456789abcdef\n".write(
            toFile: root + "/etc/hostscope/token", atomically: true, encoding: .utf8)
        chmod(root + "/etc/hostscope/token", 0o644)
        let made = try CLI.runShell(
            "systemd-sysusers --root=\(root) 2>&1 && systemd-tmpfiles --root=\(root) --create 2>&1")
        #expect(made.status == 0, "\(made.stdout)")
        let passwd = try String(contentsOfFile: root + "/etc/passwd", encoding: .utf8)
        let user = try #require(passwd.split(separator: "\n").first { $0.hasPrefix("hostscope:") })
        let fields = user.split(separator: ":", omittingEmptySubsequences: false)
        #expect(fields[5] == "/var/lib/hostscope" && fields[6] == "/usr/sbin/nologin", "\(user)")
        let uid = try #require(UInt32(fields[2]))
        func status(_ path: String) throws -> stat {
            var info = stat()
            try #require(stat(root + path, &info) == 0, "\(path) exists")
            return info
        }
        let token = try status("/etc/hostscope/token")
        #expect(token.st_mode & 0o777 == 0o600 && token.st_uid == uid)
        let ssh = try status("/var/lib/hostscope/.ssh")
        #expect(ssh.st_mode & 0o777 == 0o700 && ssh.st_uid == uid)
        #expect(try status("/etc/hostscope").st_mode & 0o007 == 0, "others cannot read /etc/hostscope")
    }

    /// The unit's ExecStart, its paths moved into a scratch directory and its address to a free loopback port,
    /// is a `serve` that starts: every option it names exists and goes with the others.
    @Test func theUnitsCommandLineStartsAServe() async throws {
        let text = try unit(binary: CLI.binary).replacingOccurrences(of: "\\\n", with: " ")
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        let moved = line.dropFirst("ExecStart=".count)
            .replacingOccurrences(of: "/etc/hostscope", with: scratch + "/etc")
            .replacingOccurrences(of: "/var/lib/hostscope", with: scratch + "/state")
            .replacingOccurrences(of: "0.0.0.0:9464", with: "127.0.0.1:0")
        let words = moved.split(separator: " ").map(String.init)
        #expect(words.first == CLI.binary)
        for folder in ["/etc", "/state/.ssh"] {
            try FileManager.default.createDirectory(atPath: scratch + folder, withIntermediateDirectories: true)
        }
        try "local\n".write(toFile: scratch + "/etc/hosts", atomically: true, encoding: .utf8)
        try "0123456789abcdef0123456789abcdef\n".write(
            toFile: scratch + "/etc/token", atomically: true, encoding: .utf8)
        chmod(scratch + "/etc/token", 0o600)
        let log = scratch + "/serve.log"
        let serve = try RunningCLI(Array(words.dropFirst()), stderr: log)
        try await waitUntil(timeout: .seconds(30), "serve listening, or ended") {
            serve.hasExited || ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("\"listening\"")
        }
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(!serve.hasExited, "\(output)")
        serve.signal(SIGTERM)
        #expect(serve.wait() == 0, "\(output)")
    }
}
