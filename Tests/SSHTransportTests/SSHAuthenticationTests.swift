import Foundation
import SSHTransport
import Synchronization
import TestSupport
import Testing
import ValueFormats

/// Records which secrets were asked for, and answers from a table.
final class RecordingSecrets: Sendable {
    private let asked = Lock<[SecretRequest]>([])
    private let password: String?
    private let passphrase: String?

    init(password: String? = nil, passphrase: String? = nil) {
        self.password = password
        self.passphrase = passphrase
    }

    var requests: [SecretRequest] { asked.withLock { $0 } }

    var provider: SecretProvider {
        { [self] request in
            asked.withLock { $0.append(request) }
            switch request {
            case .password: return password.map(Secret.init)
            case .passphrase: return passphrase.map(Secret.init)
            }
        }
    }
}

@Suite(.serialized) struct SSHAuthenticationTests {
    let server: SSHTestServer

    init() throws {
        server = try SSHTestServer.shared()
    }

    @Test func anEd25519KeyFileAuthenticates() async throws {
        let session = try await SSHSession.connect(harnessOptions(server, identities: [server.keyPath]))
        #expect(session.info.authMethod.contains("id_ed25519"))
        #expect(session.info.hostKeyType == "ssh-ed25519")
        // OpenSSH's own first choice among libssh2's ciphers, not libssh2's aes256-ctr.
        #expect(session.info.cipher == "aes128-ctr")
        // The HMAC this CPU computes faster: SHA-256 where it has SHA instructions, else SHA-512.
        let flags = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let shaInstructions = flags.split(separator: "\n").contains { line in
            let words = line.split(separator: " ")
            return (line.hasPrefix("flags") && words.contains("sha_ni"))
                || (line.hasPrefix("Features") && words.contains("sha2") && !words.contains("sha512"))
        }
        #expect(session.info.mac == (shaInstructions ? "hmac-sha2-256" : "hmac-sha2-512"))
        await session.close()
    }

    @Test func aKeyThatWorksIsOfferedBeforeAskingForMethodsAndARefusedOneFallsBackToTheList() async throws {
        let said = Lock<[String]>([])
        var options = harnessOptions(server, identities: [server.keyPath])
        options.verbose = { line in said.withLock { $0.append(line) } }
        let session = try await SSHSession.connect(options)
        #expect(session.info.authMethod.contains("id_ed25519"))
        await session.close()
        // One exchange: the methods were never asked for.
        #expect(!said.withLock { $0 }.contains { $0.contains("the server accepts") }, "\(said.withLock { $0 })")

        // A first key the server refuses: then the methods are asked for and the next key is tried.
        said.withLock { $0 = [] }
        options.identityFiles = [server.rsaKeyPath, server.keyPath]
        let second = try await SSHSession.connect(options)
        #expect(second.info.authMethod.contains("id_ed25519"))
        await second.close()
        let lines = said.withLock { $0 }
        let refused = lines.firstIndex { $0.contains("tried ") && $0.contains("id_rsa: refused by the server") }
        let listed = lines.firstIndex { $0.contains("the server accepts ") && $0.contains("publickey") }
        #expect(refused != nil && listed != nil && refused! < listed!, "\(lines)")
        #expect(lines.filter { $0.contains("id_rsa") && $0.hasPrefix("harness: tried") }.count == 1, "\(lines)")
    }

    @Test func sshConfigAlgorithmListsChooseWhatIsNegotiated() async throws {
        var options = harnessOptions(server)
        // A hardened list: the names libssh2 lacks are passed over, the rest keep their order.
        options.algorithms = SSHAlgorithmPreferences(
            ciphers: "chacha20-poly1305@openssh.com,aes256-gcm@openssh.com,aes256-ctr",
            macs: "hmac-sha2-512-etm@openssh.com,hmac-sha2-512", kexAlgorithms: "-ecdh-sha2-*")
        let session = try await SSHSession.connect(options)
        #expect(session.info.cipher == "aes256-ctr")
        #expect(session.info.mac == "hmac-sha2-512")
        await session.close()

        options.algorithms = SSHAlgorithmPreferences(ciphers: "-aes128-ctr")
        let second = try await SSHSession.connect(options)
        #expect(second.info.cipher == "aes192-ctr")
        await second.close()
    }

    @Test func anAlgorithmListLeavingNothingSupportedNamesWhatIsAvailable() async throws {
        var options = harnessOptions(server)
        options.algorithms = SSHAlgorithmPreferences(ciphers: "chacha20-poly1305@openssh.com")
        options.algorithms.sources[.cipher] = "/home/u/.ssh/config line 4"
        let error = await #expect(throws: SSHError.self) { try await SSHSession.connect(options) }
        #expect(error?.code == .config)
        #expect(error?.message.contains("Ciphers chacha20-poly1305@openssh.com (/home/u/.ssh/config line 4)") == true)
        #expect(error?.message.contains("aes128-ctr") == true)
    }

    @Test func anAlgorithmTheServerRefusesIsAHandshakeErrorThatPointsAtTheList() async throws {
        var options = harnessOptions(server)
        // libssh2 has hmac-md5; OpenSSH 9 no longer offers it.
        options.algorithms = SSHAlgorithmPreferences(macs: "hmac-md5")
        let error = await #expect(throws: SSHError.self) { try await SSHSession.connect(options) }
        #expect(error?.code == .handshake)
        #expect(error?.message.contains("MACs hmac-md5") == true)
    }

    @Test func anECDSAKeyFileAuthenticates() async throws {
        let session = try await SSHSession.connect(harnessOptions(server, identities: [server.ecdsaKeyPath]))
        #expect(session.info.authMethod.contains("id_ecdsa"))
        await session.close()
    }

    @Test func theAgentIsTriedFirst() async throws {
        let said = Lock<[String]>([])
        let session = try await SSHSession.connect(
            harnessOptions(server, identities: [server.ecdsaKeyPath], agent: true)
                .with {
                    $0.identitiesOnly = false
                    $0.verbose = { line in said.withLock { $0.append(line) } }
                })
        #expect(session.info.authMethod.hasPrefix("publickey (ssh-agent"))
        await session.close()
        // The agent's key was offered at once, without asking the server for its methods first.
        #expect(!said.withLock { $0 }.contains { $0.contains("the server accepts") }, "\(said.withLock { $0 })")
    }

    @Test func agentKeysTheServerRefusesLeadToItsMethodsThenTheKeyFiles() async throws {
        // A user the server does not know refuses every key: the agent's, offered at once, then (the server's
        // methods asked for in between) the key file; the error lists both.
        let said = Lock<[String]>([])
        var options = harnessOptions(server, identities: [server.ecdsaKeyPath], agent: true)
        options.identitiesOnly = false
        options.user = "no-such-user-\(getpid())"
        options.verbose = { line in said.withLock { $0.append(line) } }
        let error = await connectError(options)
        #expect(error?.code == .auth)
        #expect(error?.message.contains("ssh-agent (1 key refused)") == true, "\(String(describing: error))")
        #expect(error?.message.contains("id_ecdsa (refused by the server)") == true, "\(String(describing: error))")
        let lines = said.withLock { $0 }
        let agent = lines.firstIndex { $0.contains("tried ssh-agent") }
        let listed = lines.firstIndex { $0.contains("the server accepts") }
        let file = lines.firstIndex { $0.contains("tried ") && $0.contains("id_ecdsa") }
        #expect(listed != nil && file != nil && listed! < file!, "\(lines)")
        #expect(agent != nil, "\(lines)")
    }

    @Test func anEncryptedKeyUsesThePassphraseFromTheProvider() async throws {
        let secrets = RecordingSecrets(passphrase: server.passphrase)
        let session = try await SSHSession.connect(
            harnessOptions(server, identities: [server.encryptedKeyPath], secrets: secrets.provider))
        #expect(session.info.authMethod.contains("id_ed25519_pass"))
        #expect(secrets.requests == [.passphrase(keyPath: server.encryptedKeyPath)])
        await session.close()
    }

    @Test func anEncryptedKeyWithoutAPassphraseFailsSayingSo() async throws {
        let error = await connectError(harnessOptions(server, identities: [server.encryptedKeyPath]))
        #expect(error?.code == .auth)
        #expect(error?.message.contains("encrypted and no passphrase given") == true)
    }

    @Test func aPAMOnlyServerTakesThePasswordThroughKeyboardInteractive() async throws {
        guard let port = server.keyboardInteractivePort, let password = server.password else {
            // The harness starts that server only as root: a non-root sshd cannot check passwords.
            try #require(getuid() != 0, "the harness started no keyboard-interactive sshd")
            return
        }
        var options = harnessOptions(server, identities: [], secrets: RecordingSecrets(password: password).provider)
        options.port = port
        let session = try await SSHSession.connect(options)
        #expect(session.info.authMethod == "keyboard-interactive")
        #expect(try await session.exec("echo in", timeout: .seconds(10)).stdout == Array("in\n".utf8))
        await session.close()

        let wrong = "wrong-\(password)-marker"
        options.secrets = RecordingSecrets(password: wrong).provider
        let error = await connectError(options)
        #expect(error?.code == .auth)
        #expect(error?.message.contains("keyboard-interactive (password refused)") == true)
        #expect(error?.message.contains(wrong) == false)

        options.secrets = nil
        let none = await connectError(options)
        #expect(none?.message.contains("keyboard-interactive (no password given; use --password-env VAR)") == true)
    }

    @Test(.enabled(if: getuid() == 0, "a non-root sshd cannot check passwords"))
    func passwordAuthenticationWorksAndThePasswordNeverAppearsInErrors() async throws {
        let password = try #require(server.password)
        let good = RecordingSecrets(password: password)
        let session = try await SSHSession.connect(harnessOptions(server, identities: [], secrets: good.provider))
        #expect(session.info.authMethod == "password")
        await session.close()

        let wrong = "wrong-\(password)-marker"
        let bad = RecordingSecrets(password: wrong)
        let error = await connectError(harnessOptions(server, identities: [], secrets: bad.provider))
        #expect(error?.code == .auth)
        #expect(error?.message.contains("password (refused)") == true)
        #expect(error?.message.contains(wrong) == false)
        #expect("\(String(describing: error))".contains(wrong) == false)
    }

    @Test func anUnknownUserGetsAnErrorThatSaysWhatWasTried() async throws {
        var options = harnessOptions(server)
        options.user = "no-such-user-\(getpid())"
        let error = await connectError(options)
        #expect(error?.code == .auth)
        #expect(error?.message.contains("authentication failed for user no-such-user") == true)
        #expect(error?.message.contains("id_ed25519") == true)
    }

    @Test func anAgentWithNoUsableKeysIsReported() async throws {
        // The agent holds id_ed25519; IdentitiesOnly with another key filters it out.
        let error = await connectError(
            harnessOptions(server, identities: ["/nonexistent/key"], agent: true))
        #expect(error?.code == .auth)
        #expect(error?.message.contains("ssh-agent (no usable keys)") == true)
    }

    @Test func anRSAKeyRefusedForItsSHA1SignatureGetsAnExplanation() async throws {
        // OpenSSH ≥ 8.8 refuses ssh-rsa (SHA-1) signatures, which is all libssh2 1.10 makes;
        // sshd logs "signature algorithm ssh-rsa not in PubkeyAcceptedAlgorithms".
        let error = await connectError(harnessOptions(server, identities: [server.rsaKeyPath]))
        #expect(error?.code == .auth)
        #expect(error?.message.contains("signs RSA only with ssh-rsa (SHA-1)") == true)
        #expect(error?.message.contains("use an ed25519 or ECDSA key") == true)
    }

    private func connectError(_ options: SSHConnectionOptions) async -> SSHError? {
        do {
            let session = try await SSHSession.connect(options)
            await session.close()
            return nil
        } catch {
            return error as? SSHError
        }
    }
}

extension SSHConnectionOptions {
    func with(_ change: (inout SSHConnectionOptions) -> Void) -> SSHConnectionOptions {
        var copy = self
        change(&copy)
        return copy
    }
}
