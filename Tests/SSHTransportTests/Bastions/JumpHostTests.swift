import Foundation
import SSHTransport
import TestSupport
import Testing

/// Sessions through jump hosts, against real sshds in network namespaces that the test process reaches only
/// through the lab's bastion (see ``BastionLab``).
@Suite(
    .serialized,
    .disabled(
        if: BastionLab.unavailableReason != nil,
        "the bastion lab needs root and ip netns (iproute2) to build network namespaces"))
struct JumpHostTests {
    let lab: BastionLab

    init() throws {
        lab = try BastionLab.shared()
    }

    /// Options for `host` resolved through a config with the lab's hosts, as the command line would.
    private func options(
        _ host: String, _ config: String, jump: String? = nil, timeout: Duration = .seconds(10)
    ) throws -> SSHConnectionOptions {
        var overrides = SSHConnectionOverrides(connectTimeout: timeout)
        overrides.proxyJump = jump
        return try SSHConfig.load(configFile: lab.config(config)).connection(host, overrides: overrides)
    }

    /// The lab's jump host as the alias `bastion`.
    private var bastionBlock: String { "Host bastion\n    HostName \(lab.bastion)" }

    /// `SSH_CONNECTION` as the target's sshd sees it: the address the connection came from, first.
    private func clientAddress(_ session: SSHSession) async throws -> String {
        let result = try await session.exec("echo $SSH_CONNECTION", timeout: .seconds(10))
        return String(decoding: result.stdout, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
    }

    @Test func aHostOnlyTheJumpHostReachesIsReachedThroughItsChannel() async throws {
        let web1 = try options(
            "web1",
            """
            Host web1
                HostName \(lab.inner)
                ProxyJump bastion
            \(bastionBlock)
            """)
        let engine = SSHEngine(threads: 2)
        let session = try await SSHSession.connect(web1, engine: engine)
        // The target's sshd saw the connection come from the bastion's address on their shared link.
        #expect(try await clientAddress(session) == lab.bastion.replacingLastOctet(with: 5))
        #expect(session.info.remoteAddress == "\(lab.inner) via bastion (\(lab.bastion):22)")
        #expect(session.info.hostKeyStatus == .known(file: lab.knownHostsPath))
        #expect(engine.jumpSessions.map(\.displayName) == ["bastion"])
        await session.close()
        try await waitUntil { engine.jumpSessions.isEmpty }
    }

    @Test func aTwoHopChainReachesAHostOnlyTheSecondJumpHostReaches() async throws {
        let config = """
            Host deep
                HostName \(lab.deep)
                ProxyJump \(lab.bastion),\(lab.bastion2)
            Host deep-by-config
                HostName \(lab.deep)
                ProxyJump b2
            Host b2
                HostName \(lab.bastion2)
                ProxyJump \(lab.bastion)
            """
        let engine = SSHEngine(threads: 2)
        for host in ["deep", "deep-by-config"] {
            let session = try await SSHSession.connect(try options(host, config), engine: engine)
            #expect(try await clientAddress(session) == lab.bastion2.replacingLastOctet(with: 13), "\(host)")
            await session.close()
        }
    }

    @Test func everyTargetBehindAJumpHostSharesOneJumpSessionAndItsBytesArriveIntact() async throws {
        let config = """
            Host web1 web2
                HostName \(lab.inner)
            Host web3 web4
                HostName \(lab.inner)
                Port 2222
            Host web*
                ProxyJump bastion
            \(bastionBlock)
            """
        let engine = SSHEngine(threads: 2)
        let targets = try ["web1", "web2", "web3", "web4"].map { try options($0, config) }
        let sessions = try await withThrowingTaskGroup(of: SSHSession.self) { group in
            for target in targets {
                group.addTask { try await SSHSession.connect(target, engine: engine) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(engine.jumpSessions.count == 1)
        #expect(engine.jumpSessions.first?.targets == 4)
        // One connection from the test process to the bastion; the targets see four from the bastion.
        let root = lab.bastion.replacingLastOctet(with: 1)
        let bastionInside = lab.bastion.replacingLastOctet(with: 5)
        #expect(try establishedConnections(in: "b1", port: 22, from: root) == 1)
        #expect(try establishedConnections(in: "in", port: 22, from: bastionInside) == 2)
        #expect(try establishedConnections(in: "in", port: 2222, from: bastionInside) == 2)

        // Megabytes each way at once on every target: what reaches the channel is what the target sent.
        let expected = (1...150_000).map { "\($0)\n" }.joined()
        let outputs = try await withThrowingTaskGroup(of: String.self) { group in
            for session in sessions {
                group.addTask {
                    let result = try await session.exec("seq 1 150000", timeout: .seconds(30))
                    return String(decoding: result.stdout, as: UTF8.self)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outputs.count == 4)
        #expect(outputs.allSatisfy { $0 == expected })

        for session in sessions { await session.close() }
        try await waitUntil { engine.jumpSessions.isEmpty }
        try await waitUntil { (try? establishedConnections(in: "b1", port: 22, from: root)) == 0 }
    }

    @Test func dashJTakesTheTargetThroughTheJumpHostWhateverTheConfigSays() async throws {
        let target = try options(
            "\(lab.user)@\(lab.inner):2222", "Host \(lab.inner)\n    ProxyCommand false\n", jump: lab.bastion)
        let session = try await SSHSession.connect(target, engine: SSHEngine(threads: 1))
        #expect(try await clientAddress(session) == lab.bastion.replacingLastOctet(with: 5))
        await session.close()
    }

    @Test func aProxyCommandRunningSSHDashWReachesAHostBehindTheBastion() async throws {
        let marker = "hs-proxy-\(UUID().uuidString.prefix(8))"
        let configPath = try lab.config("Host \(marker)\n    HostName \(lab.bastion)\n", name: marker)
        let target = try options(
            "web1",
            """
            Host web1
                HostName \(lab.inner)
                Port 2222
                ProxyCommand ssh -F \(configPath) -o BatchMode=yes -W %h:%p \(marker)
            """)
        let session = try await SSHSession.connect(target, engine: SSHEngine(threads: 1))
        #expect(try await clientAddress(session) == lab.bastion.replacingLastOctet(with: 5))
        #expect(!processes(containing: marker).isEmpty)
        await session.close()
        // The command's process group is ended with the session.
        try await waitUntil { processes(containing: marker).isEmpty }
    }

    // MARK: - Faults

    @Test func aJumpHostThatIsDownFailsTheTargetNamingTheHop() async throws {
        let target = try options("web1", "Host web1\n    HostName \(lab.inner)\n", jump: "\(lab.bastion):2200")
        await expectFailure(connecting: target, code: .connect) { message in
            message.hasPrefix(
                "web1: jump host \(lab.bastion):2200: cannot connect to \(lab.bastion) port 2200: Connection refused")
        }
    }

    @Test func aJumpHostThatRefusesAuthenticationFailsTheTargetNamingTheHop() async throws {
        let target = try options(
            "web1",
            """
            Host web1
                HostName \(lab.inner)
                ProxyJump bastion
            Host bastion
                HostName \(lab.bastion)
                User nobody-here
            """)
        await expectFailure(connecting: target, code: .auth) { message in
            message.hasPrefix("web1: jump host bastion (\(lab.bastion):22): authentication failed for user nobody-here")
        }
    }

    @Test func aJumpHostWhoseKeyChangedIsRefusedBeforeAuthentication() async throws {
        // known_hosts gives the bastion's address the inner host's key.
        let innerKey = try String(
            contentsOfFile: lab.server("in").directory + "/ssh_host_ed25519_key.pub", encoding: .utf8)
        let knownHosts = lab.directory + "/known_hosts-changed"
        try "\(lab.bastion) \(innerKey.split(separator: " ").prefix(2).joined(separator: " "))\n"
            .write(toFile: knownHosts, atomically: true, encoding: .utf8)
        let target = try options(
            "web1",
            """
            Host web1
                HostName \(lab.inner)
                ProxyJump bastion
            Host bastion
                HostName \(lab.bastion)
                UserKnownHostsFile \(knownHosts)
            """)
        await expectFailure(connecting: target, code: .hostKeyChanged) { message in
            message.hasPrefix("web1: jump host bastion (\(lab.bastion):22): HOST KEY CHANGED for \(lab.bastion)")
        }
    }

    @Test func theTargetsOwnHostKeyIsCheckedBehindAKnownJumpHost() async throws {
        // A known_hosts that vouches for the bastion alone.
        let bastionOnly = try lab.server("b1").knownHostsPath
        let target = try options(
            "web1",
            """
            Host web1
                HostName \(lab.inner)
                ProxyJump bastion
            Host web1 bastion
                UserKnownHostsFile \(bastionOnly)
            \(bastionBlock)
            """)
        await expectFailure(connecting: target, code: .hostKeyUnknown) { message in
            message.hasPrefix("web1 (via jump host bastion (\(lab.bastion):22)): ")
                && message.contains("\(lab.inner)")
        }
    }

    @Test func aTargetTheJumpHostCannotReachFailsNamingBothWhileTheJumpSessionServesOthers() async throws {
        let config = """
            Host web1
                HostName \(lab.inner)
                Port 2200
            Host web2
                HostName \(lab.inner)
            Host web*
                ProxyJump bastion
            \(bastionBlock)
            """
        let engine = SSHEngine(threads: 2)
        let healthy = try await SSHSession.connect(try options("web2", config), engine: engine)
        await expectFailure(connecting: try options("web1", config), engine: engine, code: .connect) { message in
            message
                == "web1: jump host bastion (\(lab.bastion):22) could not connect to \(lab.inner) port 2200 "
                + "(connect failed); is sshd running there, and can the jump host reach it?"
        }
        #expect(try await clientAddress(healthy) == lab.bastion.replacingLastOctet(with: 5))
        #expect(engine.jumpSessions.first?.targets == 1)
        await healthy.close()
    }

    @Test func aHostThatAcceptsTheJumpHostsConnectionButNeverAnswersTimesOutAlone() async throws {
        let config = """
            Host silent
                HostName \(lab.inner)
                Port \(lab.silentPort)
            Host web2
                HostName \(lab.inner)
            Host silent web2
                ProxyJump bastion
            \(bastionBlock)
            """
        let engine = SSHEngine(threads: 1)
        let busy = try await SSHSession.connect(try options("web2", config), engine: engine)
        let stop = StopFlag()
        let ticker = Task { try await keepTicking(busy, until: stop) }
        let start = ContinuousClock.now
        await expectFailure(
            connecting: try options("silent", config, timeout: .seconds(2)), engine: engine, code: .timeout
        ) {
            message in
            message.hasPrefix(
                "silent (via jump host bastion (\(lab.bastion):22)): no SSH handshake within 2 s from \(lab.inner) "
                    + "port \(lab.silentPort)")
        }
        let waited = start.duration(to: .now)
        #expect(waited >= .milliseconds(1900) && waited < .seconds(5), "\(waited)")
        stop.set()
        let (slowest, count) = try await ticker.value
        #expect(count >= 10)
        #expect(slowest < .milliseconds(500), "a command behind the same jump host waited \(slowest)")
        await busy.close()
    }

    @Test func aHostBehindTheJumpHostThatStopsAnsweringTimesOutItsCommandsWhileOthersStayOnTime() async throws {
        let config = """
            Host frozen
                HostName \(lab.inner)
                Port 2222
            Host web2
                HostName \(lab.inner)
            Host frozen web2
                ProxyJump bastion
            \(bastionBlock)
            """
        let engine = SSHEngine(threads: 1)
        let frozen = try await SSHSession.connect(try options("frozen", config), engine: engine)
        let healthy = try await SSHSession.connect(try options("web2", config), engine: engine)
        let server = try lab.server("in2")
        server.freezeSSHD()
        defer { server.thawSSHD() }
        let stop = StopFlag()
        let ticker = Task { try await keepTicking(healthy, until: stop) }
        let start = ContinuousClock.now
        await #expect {
            _ = try await frozen.exec("echo hello", timeout: .seconds(1))
        } throws: { error in
            (error as? SSHError)?.code == .timeout
        }
        #expect(start.duration(to: .now) < .seconds(8))
        stop.set()
        let (slowest, count) = try await ticker.value
        #expect(count >= 10)
        #expect(slowest < .milliseconds(500), "a command behind the same jump host waited \(slowest)")
        server.thawSSHD()
        await frozen.close()
        await healthy.close()
    }

    @Test func aChannelTheJumpHostCannotOpenSendsNewTargetsToAFreshJumpSessionAndKeepsTheOldOnesTargets()
        async throws
    {
        let config = """
            Host unanswered
                HostName \(lab.inner)
                Port \(lab.unansweredPort)
            Host web2
                HostName \(lab.inner)
            Host web3
                HostName \(lab.inner)
                Port 2222
            Host unanswered web2 web3
                ProxyJump bastion
            \(bastionBlock)
            """
        let engine = SSHEngine(threads: 2)
        // One connect timeout for all three: it is part of what decides which targets share a jump session.
        let web3 = try await SSHSession.connect(try options("web3", config, timeout: .seconds(2)), engine: engine)
        // The bastion's connect to the unanswered port hangs (its SYNs are dropped), and libssh2 opens one
        // channel at a time per session: nothing else could open a channel on this jump session for minutes.
        await expectFailure(
            connecting: try options("unanswered", config, timeout: .seconds(2)), engine: engine, code: .timeout
        ) { message in
            message
                == "unanswered: jump host bastion (\(lab.bastion):22) did not open a connection to \(lab.inner) port "
                + "\(lab.unansweredPort) within 2 s; the jump host may be overloaded, or \(lab.inner) may not answer it"
        }
        // Behind the hung open on the old jump session, this connect would time out too.
        let web2 = try await SSHSession.connect(try options("web2", config, timeout: .seconds(2)), engine: engine)
        #expect(engine.jumpSessions.map(\.acceptsTargets) == [false, true])
        #expect(engine.jumpSessions.map(\.targets) == [1, 1])
        // The old session still carries the target it had.
        #expect(try await clientAddress(web3) == lab.bastion.replacingLastOctet(with: 5))
        #expect(try await clientAddress(web2) == lab.bastion.replacingLastOctet(with: 5))
        await web3.close()
        await web2.close()
        try await waitUntil { engine.jumpSessions.isEmpty }
    }

    @Test func whenTheJumpSessionBreaksItsTargetsEndNamingItAndTheNextConnectOpensANewOne() async throws {
        let config = """
            Host web1
                HostName \(lab.inner)
                ProxyJump bastion
            \(bastionBlock)
            """
        let engine = SSHEngine(threads: 1)
        let session = try await SSHSession.connect(try options("web1", config), engine: engine)
        // End every process serving the bastion's connections, as a jump host that crashed would; its
        // listener stays, so the next connect can go through again.
        let bastion = try lab.server("b1")
        let listener = try #require(bastion.sshdPID)
        for pid in bastion.sshdProcessTree() where pid != listener { kill(pid, SIGKILL) }
        try await waitUntil { !session.isAlive }
        await #expect {
            _ = try await session.exec("true", timeout: .seconds(5))
        } throws: { error in
            let message = (error as? SSHError)?.message ?? ""
            return message.hasPrefix("web1: the connection through jump host bastion (\(lab.bastion):22) ended")
        }
        let again = try await SSHSession.connect(try options("web1", config), engine: engine)
        #expect(try await clientAddress(again) == lab.bastion.replacingLastOctet(with: 5))
        await again.close()
    }

    // MARK: - Helpers

    private func expectFailure(
        connecting options: SSHConnectionOptions, engine: SSHEngine = SSHEngine(threads: 1), code: SSHError.Code,
        sourceLocation: SourceLocation = #_sourceLocation, _ message: (String) -> Bool
    ) async {
        do {
            let session = try await SSHSession.connect(options, engine: engine)
            Issue.record(
                "connected to \(options.displayName) (\(session.info.remoteAddress))", sourceLocation: sourceLocation)
            await session.close()
        } catch let error as SSHError {
            #expect(error.code == code, "\(error.message)", sourceLocation: sourceLocation)
            #expect(message(error.message), "\(error.message)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
    }

    /// TCP connections established to `port` inside the lab namespace of `server`, from `address`.
    private func establishedConnections(in server: String, port: Int, from address: String) throws -> Int {
        let output = lab.directory + "/ss-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let namespace = "hsl\(lab.index)-\(server)"
        SSHTestServer.run([
            "/bin/sh", "-c",
            "ip netns exec \(namespace) ss -Htn state established '( sport = :\(port) )' > \(output)",
        ])
        let text = try String(contentsOfFile: output, encoding: .utf8)
        return text.split(separator: "\n").filter { $0.contains(" \(address):") }.count
    }
}

/// Waits up to 5 s for `condition`, failing the test if it never holds.
func waitUntil(
    _ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let deadline = ContinuousClock.now + .seconds(5)
    while !condition() {
        if ContinuousClock.now > deadline {
            Issue.record("condition still false after 5 s", sourceLocation: sourceLocation)
            return
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// Processes whose command line contains `text`.
func processes(containing text: String) -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { entry -> Int32? in
        guard let pid = Int32(entry), pid != getpid(),
            let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline")
        else { return nil }
        let command = String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
        return command.contains(text) ? pid : nil
    }
}

extension String {
    /// `10.231.4.2` with its last number replaced: the lab's addresses on one link differ only there.
    func replacingLastOctet(with value: Int) -> String {
        (split(separator: ".").dropLast().map(String.init) + [String(value)]).joined(separator: ".")
    }
}
