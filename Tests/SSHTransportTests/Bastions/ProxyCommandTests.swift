import Foundation
import SSHTransport
import TestSupport
import Testing

/// Sessions over a `ProxyCommand`'s standard input and output, and what is said when the command fails.
@Suite(.serialized) struct ProxyCommandTests {
    let server: SSHTestServer
    let directory: String

    init() throws {
        server = try SSHTestServer.shared()
        directory = NSTemporaryDirectory() + "hostscope-proxy-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// `web1` with `proxyCommand`, resolved as the command line would, for the harness's user and keys.
    private func web1(_ proxyCommand: String, timeout: Duration = .seconds(5)) throws -> (SSHConnectionOptions, String)
    {
        let path = directory + "/config"
        try """
        Host web1
            HostName \(server.host)
            Port \(server.port)
            User \(server.user)
            IdentityFile \(server.keyPath)
            IdentitiesOnly yes
            UserKnownHostsFile \(server.knownHostsPath)
            ProxyCommand \(proxyCommand)
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let overrides = SSHConnectionOverrides(connectTimeout: timeout)
        return (try SSHConfig.load(configFile: path).connection("web1", overrides: overrides), path)
    }

    private func failure(_ options: SSHConnectionOptions) async -> SSHError? {
        do {
            let session = try await SSHSession.connect(options, engine: SSHEngine(threads: 1))
            await session.close()
            return nil
        } catch {
            return error as? SSHError
        }
    }

    @Test func sshDashWAsAProxyCommandCarriesTheSession() async throws {
        let marker = "hs-w-\(UUID().uuidString.prefix(8))"
        let (options, _) = try web1(
            "ssh -o BatchMode=yes -o UserKnownHostsFile=\(server.knownHostsPath) -o IdentitiesOnly=yes "
                + "-i \(server.keyPath) -p %p -l %r -o SetEnv=MARKER=\(marker) %h -W %h:%p")
        let session = try await SSHSession.connect(options, engine: SSHEngine(threads: 1))
        let result = try await session.exec("echo through", timeout: .seconds(10))
        #expect(String(decoding: result.stdout, as: UTF8.self) == "through\n")
        #expect(!processes(containing: marker).isEmpty)
        await session.close()
        try await waitUntil { processes(containing: marker).isEmpty }
    }

    @Test func aProxyCommandThatExitsIsAConnectErrorWithItsStatusAndLastWords() async throws {
        let (options, path) = try web1("sh -c 'echo \"no route to %h\" >&2; exit 7'")
        let error = try #require(await failure(options))
        #expect(error.code == .connect)
        #expect(
            error.message
                == "web1: the ProxyCommand sh -c 'echo \"no route to %h\" >&2; exit 7' (\(path) line 8) exited with "
                + "status 7 before the SSH handshake finished; it wrote \"no route to \(server.host)\" to standard "
                + "error; check that it reaches \(server.host) port \(server.port)")
    }

    @Test func whatAProxyCommandWritesIsEscapedToOneLine() async throws {
        let (options, _) = try web1("printf 'first\\nbad \\033[31mred\\r\\n' >&2; exit 1")
        let error = try #require(await failure(options))
        #expect(
            error.message.contains("it wrote \"first\" / \"bad \\x1b[31mred\" to standard error"), "\(error.message)")
        #expect(!error.message.contains("\u{1B}"))
    }

    @Test func aProxyCommandThatPrintsSomethingElseThanSSHSaysWhatItPrinted() async throws {
        let (options, _) = try web1("printf 'HTTP/1.1 400 Bad Request\\r\\n\\r\\n'; exec sleep 5", timeout: .seconds(3))
        let start = ContinuousClock.now
        let error = try #require(await failure(options))
        #expect(start.duration(to: .now) < .seconds(5))
        #expect(error.code == .handshake)
        #expect(
            error.message.contains(
                "printed \"HTTP/1.1 400 Bad Request\" where an SSH banner (SSH-2.0-…) was expected; it must connect "
                    + "its standard input and output to the host's sshd, as ssh -W %h:%p bastion does"),
            "\(error.message)")
    }

    @Test func aProxyCommandThatNeverConnectsTimesOutAndIsEnded() async throws {
        // A duration no other process has, to find the command by.
        let marker = "30.\(Int.random(in: 100_000...999_999))"
        let (options, path) = try web1("sleep \(marker)", timeout: .seconds(1))
        let start = ContinuousClock.now
        let error = try #require(await failure(options))
        let waited = start.duration(to: .now)
        #expect(waited >= .milliseconds(900) && waited < .seconds(3), "\(waited)")
        #expect(error.code == .timeout)
        #expect(
            error.message
                == "web1: the ProxyCommand sleep \(marker) (\(path) line 8) sent nothing within 1 s; it must "
                + "connect its standard input and output to the host's sshd, as ssh -W %h:%p bastion does")
        try await waitUntil { processes(containing: marker).isEmpty }
    }

    @Test func aProxyCommandThatCannotBeStartedIsNamed() async throws {
        let (options, _) = try web1("/nonexistent/proxy %h")
        let error = try #require(await failure(options))
        #expect(error.code == .connect)
        #expect(error.message.contains("exited with status 127"), "\(error.message)")
        #expect(error.message.contains("/nonexistent/proxy"), "\(error.message)")
    }
}
