import Foundation
import SSHTransport
import Synchronization
import TestSupport
import Testing
import ValueFormats

@Suite(.serialized) struct HostKeyTests {
    let server: SSHTestServer
    let directory: String

    init() throws {
        server = try SSHTestServer.shared()
        directory = NSTemporaryDirectory() + "hostscope-knownhosts-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// The server's fingerprint as OpenSSH computes it.
    private func expectedFingerprint() throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ssh-keygen")
        process.arguments = ["-l", "-E", "sha256", "-f", server.hostPublicKeyPath]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        process.waitUntilExit()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return String(output.split(separator: " ")[1])
    }

    @Test func anUnknownHostIsRefusedWithItsFingerprintAndHowToAcceptIt() async throws {
        let file = directory + "/known_hosts"
        let secrets = RecordingSecrets(password: "unused")
        do {
            let session = try await SSHSession.connect(
                harnessOptions(server, knownHosts: file, secrets: secrets.provider))
            await session.close()
            Issue.record("connected to an unknown host")
        } catch let error as SSHError {
            #expect(error.code == .hostKeyUnknown)
            #expect(error.message.contains(try expectedFingerprint()))
            #expect(error.message.contains("--accept-new-host-key"))
        }
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(secrets.requests.isEmpty)
    }

    @Test func acceptNewRecordsTheKeyAndTheNextStrictConnectTrustsIt() async throws {
        let file = directory + "/sub/known_hosts"
        let first = try await SSHSession.connect(harnessOptions(server, knownHosts: file, policy: .acceptNew))
        #expect(first.info.hostKeyStatus == .accepted(file: file))
        #expect(first.info.hostKeyFingerprint == (try expectedFingerprint()))
        await first.close()
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.hasPrefix("[127.0.0.1]:\(server.port) ssh-ed25519 "))
        let second = try await SSHSession.connect(harnessOptions(server, knownHosts: file))
        #expect(second.info.hostKeyStatus == .known(file: file))
        await second.close()
    }

    @Test func hashedEntriesAreRecognised() async throws {
        let file = directory + "/known_hosts"
        try FileManager.default.copyItem(atPath: server.knownHostsPath, toPath: file)
        #expect(SSHTestServer.run(["/usr/bin/ssh-keygen", "-q", "-H", "-f", file]) == 0)
        let hashed = try String(contentsOfFile: file, encoding: .utf8)
        #expect(hashed.hasPrefix("|1|"))
        let session = try await SSHSession.connect(harnessOptions(server, knownHosts: file))
        #expect(session.info.hostKeyStatus == .known(file: file))
        await session.close()
    }

    @Test func aFleetsKnownHostsWithAThousandOtherHostsStillVouchesForThisOneAndRefusesAChangedKey() async throws {
        let own = try String(contentsOfFile: server.knownHostsPath, encoding: .utf8)
        // A real ed25519 key that is not the server's: the client key's public half.
        let otherKey = try String(contentsOfFile: server.keyPath + ".pub", encoding: .utf8)
            .split(separator: " ").prefix(2).joined(separator: " ")
        let others = (0..<1000).map { "[10.1.\($0 / 250).\($0 % 250)]:22 \(otherKey)\n" }.joined()
        let file = directory + "/known_hosts"
        try (others + own).write(toFile: file, atomically: true, encoding: .utf8)
        let session = try await SSHSession.connect(harnessOptions(server, knownHosts: file))
        #expect(session.info.hostKeyStatus == .known(file: file))
        await session.close()
        // The same host listed with another key, among the others: refused.
        let changed = directory + "/changed"
        try (others + "[\(server.host)]:\(server.port) \(otherKey)\n").write(
            toFile: changed, atomically: true, encoding: .utf8)
        await #expect {
            _ = try await SSHSession.connect(harnessOptions(server, knownHosts: changed))
        } throws: { error in
            (error as? SSHError)?.code == .hostKeyChanged
        }
    }

    @Test func aChangedKeyIsRefusedBeforeAuthenticationEvenWhenAcceptingNewKeys() async throws {
        let file = directory + "/known_hosts"
        let other = directory + "/other_key"
        #expect(SSHTestServer.run(["/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", other]) == 0)
        let otherPublic = try String(contentsOfFile: other + ".pub", encoding: .utf8).split(separator: " ")
        let lines = "# a comment\n[127.0.0.1]:\(server.port) \(otherPublic[0]) \(otherPublic[1])\n"
        try lines.write(toFile: file, atomically: true, encoding: .utf8)
        let secrets = RecordingSecrets(password: "unused", passphrase: "unused")
        do {
            let session = try await SSHSession.connect(
                harnessOptions(server, knownHosts: file, policy: .acceptNew, secrets: secrets.provider))
            await session.close()
            Issue.record("connected despite a changed host key")
        } catch let error as SSHError {
            #expect(error.code == .hostKeyChanged)
            #expect(error.message.contains("HOST KEY CHANGED"))
            #expect(error.message.contains("line 2"))
            #expect(error.message.contains(try expectedFingerprint()))
            #expect(error.message.contains("ssh-keygen -R"))
        }
        #expect(secrets.requests.isEmpty)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == lines)
    }

    @Test func unparseableLinesDoNotHideTheRestOfTheFile() async throws {
        let file = directory + "/known_hosts"
        let good = try String(contentsOfFile: server.knownHostsPath, encoding: .utf8)
        let noise = """
            @cert-authority *.example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA
            example.org sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29tAAAAIA==
            this line is garbage

            """
        try (noise + good).write(toFile: file, atomically: true, encoding: .utf8)
        let session = try await SSHSession.connect(harnessOptions(server, knownHosts: file))
        #expect(session.info.hostKeyStatus == .known(file: file))
        await session.close()
    }

    /// The harness's host key as a known_hosts key field: `ssh-ed25519 AAAA…`.
    private func hostKeyField() throws -> String {
        let fields = try String(contentsOfFile: server.hostPublicKeyPath, encoding: .utf8).split(separator: " ")
        return "\(fields[0]) \(fields[1])"
    }

    private func expectRevoked(_ files: [String], line: Int, in file: String) async throws {
        var options = harnessOptions(server, policy: .acceptNew)
        options.knownHostsFiles = files
        let secrets = RecordingSecrets(password: "unused", passphrase: "unused")
        options.secrets = secrets.provider
        do {
            let session = try await SSHSession.connect(options)
            await session.close()
            Issue.record("connected with a revoked host key")
        } catch let error as SSHError {
            #expect(error.code == .hostKeyChanged)
            #expect(error.message.contains("marked @revoked in \(file) line \(line)"), "\(error.message)")
            #expect(error.message.contains(try expectedFingerprint()))
        }
        #expect(secrets.requests.isEmpty)
    }

    @Test func aKeyRevokedInALaterFileIsRefusedThoughAnEarlierFileListsIt() async throws {
        let user = directory + "/known_hosts"
        let global = directory + "/ssh_known_hosts"
        try FileManager.default.copyItem(atPath: server.knownHostsPath, toPath: user)
        try "# revoked after the key leaked\n@revoked * \(hostKeyField())\n".write(
            toFile: global, atomically: true, encoding: .utf8)
        try await expectRevoked([user, global], line: 2, in: global)
    }

    @Test func aRevokedLineEndingInCRLFIsStillARevocation() async throws {
        let file = directory + "/known_hosts"
        let listed = try String(contentsOfFile: server.knownHostsPath, encoding: .utf8)
        try (listed + "# edited on Windows\r\n@revoked * \(hostKeyField())\r\n").write(
            toFile: file, atomically: true, encoding: .utf8)
        let number = listed.split(separator: "\n").count + 2
        try await expectRevoked([file], line: number, in: file)
    }

    @Test func bytesThatAreNotUTF8DoNotHideARevocation() async throws {
        let user = directory + "/known_hosts"
        let global = directory + "/ssh_known_hosts"
        try FileManager.default.copyItem(atPath: server.knownHostsPath, toPath: user)
        // A Latin-1 "é" in a comment.
        let text = Data("# r".utf8) + Data([0xE9]) + Data("voqu\u{E9}\n@revoked * \(try hostKeyField())\n".utf8)
        try text.write(to: URL(fileURLWithPath: global))
        try await expectRevoked([user, global], line: 2, in: global)
    }

    /// An ed25519 public key line of a key made for the test, not the server's.
    private func otherPublicKey(_ name: String) throws -> String {
        let path = directory + "/" + name
        #expect(SSHTestServer.run(["/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", path]) == 0)
        return try String(contentsOfFile: path + ".pub", encoding: .utf8)
    }

    private func connectError(revokedHostKeys files: [String]) async throws -> SSHError? {
        var options = harnessOptions(server)
        options.revokedHostKeysFiles = files
        do {
            try await withSSHSession(options) { _ in }
            return nil
        } catch let error as SSHError {
            return error
        }
    }

    @Test func aKeyListedInRevokedHostKeysIsRefusedThoughKnownHostsListsIt() async throws {
        let file = directory + "/revoked_keys"
        try ("# keys that leaked\n" + otherPublicKey("other") + "\(try hostKeyField()) root@old-host\n").write(
            toFile: file, atomically: true, encoding: .utf8)
        let error = try await connectError(revokedHostKeys: [file])
        #expect(error?.code == .hostKeyChanged)
        let message = error?.message ?? ""
        #expect(message.contains("is revoked by \(file) line 3 (RevokedHostKeys)"), "\(message)")
    }

    @Test func revokedHostKeysThatListOnlyOtherKeysLetTheHostThrough() async throws {
        let file = directory + "/revoked_keys"
        try otherPublicKey("other").write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try await connectError(revokedHostKeys: [file]) == nil)
    }

    @Test func aRevokedHostKeysFileHostscopeCannotCheckRefusesTheHost() async throws {
        let other = directory + "/other"
        _ = try otherPublicKey("other")
        let krl = directory + "/revoked.krl"
        #expect(SSHTestServer.run(["/usr/bin/ssh-keygen", "-q", "-k", "-f", krl, other + ".pub"]) == 0)
        let garbage = directory + "/garbage"
        try "this is not a key\n".write(toFile: garbage, atomically: true, encoding: .utf8)
        let cases = [
            (directory + "/missing", "cannot read the RevokedHostKeys file"),
            (krl, "is a key revocation list (KRL), which hostscope cannot read"),
            (garbage, "line 1 is not a public key"),
        ]
        for (file, message) in cases {
            let error = try await connectError(revokedHostKeys: [file])
            #expect(error?.code == .hostKeyFile)
            #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
        }
    }

    @Test func recordingANewKeyTellsTheCallerWhatSSHWouldPrint() async throws {
        let file = directory + "/known_hosts"
        let recorded = Lock<[RecordedHostKey]>([])
        var options = harnessOptions(server, knownHosts: file, policy: .acceptNew)
        options.hostKeyRecorded = { key in recorded.withLock { $0.append(key) } }
        try await withSSHSession(options) { _ in }
        let keys = recorded.withLock { $0 }
        #expect(keys.count == 1)
        #expect(
            keys.first?.notice
                == "Warning: Permanently added '[127.0.0.1]:\(server.port)' (ED25519) to the list of known hosts.")
        #expect(keys.first?.file == file)
        #expect(keys.first?.fingerprint == (try expectedFingerprint()))
        // Known now: nothing more to say.
        try await withSSHSession(options) { _ in }
        #expect(recorded.withLock { $0.count } == 1)
    }
}

@Suite struct ConnectFailureTests {
    @Test func aRefusedPortSaysSo() async throws {
        let port = try freeLoopbackPort()
        let options = SSHConnectionOptions(
            displayName: "closed", hostName: "127.0.0.1", port: port, user: "nobody", knownHostsFiles: [])
        await #expect {
            _ = try await SSHSession.connect(options)
        } throws: { error in
            guard let error = error as? SSHError else { return false }
            return error.code == .connect && error.message.contains("Connection refused")
                && error.message.contains("port \(port)")
        }
    }

    @Test func anUnresolvableNameSaysSo() async throws {
        let options = SSHConnectionOptions(
            displayName: "ghost", hostName: "no-such-host.invalid", user: "nobody", knownHostsFiles: [])
        await #expect {
            _ = try await SSHSession.connect(options)
        } throws: { error in
            guard let error = error as? SSHError else { return false }
            return error.code == .resolve && error.message.contains("no-such-host.invalid")
        }
    }

    @Test func aHostWhoseWayCannotBeWorkedOutIsRefusedWithoutConnectingAnywhere() async throws {
        let listener = try LoopbackListener()
        var options = SSHConnectionOptions(
            displayName: "web1", hostName: "127.0.0.1", port: listener.port, user: "nobody", knownHostsFiles: [],
            connectTimeout: .seconds(1))
        let loop = SSHError(.config, "web1: the jump hosts loop: web1 → a → web1, so no connection can be made")
        options.route = .unusable(loop)
        await #expect {
            _ = try await SSHSession.connect(options)
        } throws: { error in
            (error as? SSHError) == loop
        }
        #expect(!listener.hasPendingConnection)
    }

    @Test func aServerThatNeverSendsABannerTimesOut() async throws {
        // Accepts TCP connections and then says nothing, like a wedged daemon.
        let listener = try LoopbackListener()
        let port = listener.port
        let options = SSHConnectionOptions(
            displayName: "silent", hostName: "127.0.0.1", port: port, user: "nobody", knownHostsFiles: [],
            connectTimeout: .seconds(1))
        let start = ContinuousClock.now
        await #expect {
            _ = try await SSHSession.connect(options)
        } throws: { error in
            (error as? SSHError)?.code == .timeout
        }
        #expect(start.duration(to: .now) < .seconds(4))
        withExtendedLifetime(listener) {}
    }

    private func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = bind(fd, $0, length) }
        }
        withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
