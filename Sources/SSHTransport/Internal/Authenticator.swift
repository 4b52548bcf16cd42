import CLibSSH2
import Foundation

/// Runs user authentication in OpenSSH's order: ssh-agent keys, then identity files, then a
/// password, as non-blocking steps on the session's I/O thread.
///
/// Each libssh2 call may answer "would block"; ``advance(_:)`` then returns ``Step/blocked`` and
/// is called again with the same call pending once the socket is ready. A secret (a key's
/// passphrase, a password) is never asked for here: the step returns ``Step/needsSecret(_:)`` and
/// the session asks its provider on another thread, then hands the answer to ``supply(_:)``.
///
/// Every attempt is remembered so that a final failure says what was tried and why each
/// failed, instead of a bare "authentication failed".
///
/// Asking the server which methods it takes costs a round trip and, with OpenSSH, the few
/// milliseconds it waits before answering any request that does not authenticate. So the first
/// key (the agent's first usable one, else the first identity file when it needs no passphrase)
/// is offered at once, and the methods are asked for only once a key is refused or before a
/// passphrase or password is asked for: a connection with a key that works (every host of a
/// fleet) authenticates in one exchange, about 6 ms sooner.
// Not Sendable: owned by one session and used on its I/O thread only.
final class Authenticator {
    enum Step {
        case blocked
        case needsSecret(SecretRequest)
        case authenticated(method: String)
        case failed(SSHError)
    }

    private struct Attempt {
        var source: String
        var outcome: String
    }

    private enum Stage {
        case listing
        case agentStart
        case agentNext
        case agentSign(UnsafeMutablePointer<libssh2_agent_publickey>, comment: String, blob: [UInt8])
        case keyFile(Int)
        case passwordChoice
        case password(Secret)
        case interactive(InteractiveResponder)
        case finished
    }

    let options: SSHConnectionOptions
    let serverBanner: String?
    private var stage = Stage.listing
    private var methods: Set<String> = []
    /// Whether the server's methods were asked for yet.
    private var listed = false
    /// Where to go on once they are known (nil: from the start, the agent or the first key file).
    private var afterListing: Stage?
    private var attempts: [Attempt] = []
    private var rsaRejected = false
    private var identityFiles: [PrivateKeyFile] = []
    private var agent: OpaquePointer?
    private var agentConnected = false
    private var agentPrevious: UnsafeMutablePointer<libssh2_agent_publickey>?
    private var agentOffered = 0
    private var allowedBlobs: [[UInt8]]?
    /// The passphrase of the key file being tried, once its provider answered.
    private var passphrases: [Int: Secret] = [:]
    /// The secret asked for and not yet supplied.
    private var pendingSecret: SecretRequest?
    private var suppliedSecret: Secret??

    init(options: SSHConnectionOptions, serverBanner: String?) {
        self.options = options
        self.serverBanner = serverBanner
        identityFiles = Self.inspect(options)
        if options.agentSocket != nil {
            stage = .agentStart
        } else if let first = identityFiles.first, !first.isEncrypted {
            stage = .keyFile(0)
        }
    }

    /// The identity files that hold a key, in order; `-v` is told of the others.
    private static func inspect(_ options: SSHConnectionOptions) -> [PrivateKeyFile] {
        let files = options.identityFiles.compactMap { PrivateKeyFile.inspect($0) }
        if let verbose = options.verbose {
            for path in options.identityFiles where !files.contains(where: { $0.path == path }) {
                verbose("\(options.displayName): no key in \(Self.tilde(path)), skipped")
            }
        }
        return files
    }

    deinit {
        freeAgent()
    }

    /// The provider's answer to the last ``Step/needsSecret(_:)`` (nil: it has none).
    func supply(_ secret: Secret?) {
        suppliedSecret = .some(secret)
    }

    /// Goes as far as possible without blocking.
    func advance(_ session: OpaquePointer) -> Step {
        do {
            while true {
                if let step = try advanceStage(session) { return step }
            }
        } catch {
            freeAgent()
            stage = .finished
            return .failed(error)
        }
    }

    /// One stage transition; returns a step for the caller or nil to go on at once.
    private func advanceStage(_ session: OpaquePointer) throws(SSHError) -> Step? {
        switch stage {
        case .listing:
            let user = options.user
            let listed = user.withCString { libssh2_userauth_list(session, $0, UInt32(strlen($0))) }
            guard let listed else {
                if libssh2_userauth_authenticated(session) != 0 { return .authenticated(method: "none") }
                let error = LibSSH2.lastError(session)
                if error.code == LibSSH2.eagain { return .blocked }
                // A server that hangs up after refusing the key offered first: say what was tried.
                if !attempts.isEmpty && LibSSH2.isFatalTransportError(error.code) { throw finalError() }
                throw SSHError(
                    error.code == Int32(LIBSSH2_ERROR_TIMEOUT) ? .timeout : .auth,
                    "\(options.displayName): the server ended the connection before authentication (\(error.message))",
                    libssh2Code: error.code)
            }
            methods = Set(String(cString: listed).split(separator: ",").map(String.init))
            self.listed = true
            options.verbose?(
                "\(options.displayName): the server accepts \(String(cString: listed)) for \(options.user)")
            if methods.contains("publickey") {
                stage = afterListing ?? (options.agentSocket != nil ? .agentStart : .keyFile(0))
            } else {
                freeAgent()
                stage = .passwordChoice
            }
            return nil

        case .agentStart:
            stage = .keyFile(0)
            guard let socket = options.agentSocket, let handle = libssh2_agent_init(session) else { return nil }
            agent = handle
            libssh2_agent_set_identity_path(handle, socket)
            // The agent is a local socket: connecting and listing its keys do not wait on the network.
            guard libssh2_agent_connect(handle) == 0 else {
                record(Attempt(source: "ssh-agent", outcome: "cannot connect to \(socket)"))
                freeAgent()
                return nil
            }
            agentConnected = true
            guard libssh2_agent_list_identities(handle) == 0 else {
                record(Attempt(source: "ssh-agent", outcome: "cannot list its keys"))
                freeAgent()
                return nil
            }
            allowedBlobs = options.identitiesOnly ? identityFiles.compactMap(\.publicKeyBlob) : nil
            stage = .agentNext
            return nil

        case .agentNext:
            guard let agent else {
                stage = .keyFile(0)
                return nil
            }
            var identity: UnsafeMutablePointer<libssh2_agent_publickey>?
            let status = libssh2_agent_get_identity(agent, &identity, agentPrevious)
            guard status == 0, let identity else {
                record(
                    Attempt(
                        source: "ssh-agent",
                        outcome: agentOffered == 0
                            ? "no usable keys" : "\(agentOffered) key\(agentOffered == 1 ? "" : "s") refused"))
                freeAgent()
                stage = .keyFile(0)
                return nil
            }
            agentPrevious = identity
            let blob = Array(UnsafeBufferPointer(start: identity.pointee.blob, count: Int(identity.pointee.blob_len)))
            if let allowedBlobs, !allowedBlobs.contains(blob) { return nil }
            agentOffered += 1
            let comment = identity.pointee.comment.map { String(cString: $0) } ?? ""
            stage = .agentSign(identity, comment: comment, blob: blob)
            return nil

        case .agentSign(let identity, let comment, let blob):
            guard let agent else {
                stage = .keyFile(0)
                return nil
            }
            let result = options.user.withCString { libssh2_agent_userauth(agent, $0, identity) }
            if result == LibSSH2.eagain { return .blocked }
            if result == 0 {
                freeAgent()
                stage = .finished
                return .authenticated(method: "publickey (ssh-agent\(comment.isEmpty ? "" : ": " + comment))")
            }
            try throwIfTransportBroken(session, result)
            var reader = BlobReader(bytes: blob)
            if reader.string().map({ String(decoding: $0, as: UTF8.self) }) == "ssh-rsa" && serverRequiresSHA2 {
                rsaRejected = true
            }
            goOn(to: .agentNext)
            return nil

        case .keyFile(let index):
            guard index < identityFiles.count else {
                let missing = options.identityFiles.filter { path in !identityFiles.contains { $0.path == path } }
                if !missing.isEmpty && identityFiles.isEmpty && options.agentSocket == nil {
                    record(
                        Attempt(
                            source: "identity files",
                            outcome: "none found (\(missing.map(Self.tilde).joined(separator: ", ")))"))
                }
                stage = .passwordChoice
                return nil
            }
            let key = identityFiles[index]
            if key.isEncrypted && !listed {
                // No passphrase is asked for before the server is known to take keys.
                goOn(to: .keyFile(index))
                return nil
            }
            if key.isEncrypted && passphrases[index] == nil {
                switch takeSecret(.passphrase(keyPath: key.path)) {
                case .ask(let request):
                    return .needsSecret(request)
                case .answered(let secret?):
                    passphrases[index] = secret
                case .answered(nil):
                    record(Attempt(source: Self.tilde(key.path), outcome: "encrypted and no passphrase given"))
                    stage = .keyFile(index + 1)
                    return nil
                }
            }
            let passphrase = passphrases[index]
            let result = options.user.withCString { user in
                key.path.withCString { path in
                    (passphrase?.reveal ?? "").withCString { phrase in
                        libssh2_userauth_publickey_fromfile_ex(
                            session, user, UInt32(strlen(user)), nil, path, key.isEncrypted ? phrase : nil)
                    }
                }
            }
            if result == LibSSH2.eagain { return .blocked }
            if result == 0 {
                stage = .finished
                return .authenticated(method: "publickey (\(Self.tilde(key.path)))")
            }
            try throwIfTransportBroken(session, result)
            let outcome: String
            switch result {
            case Int32(LIBSSH2_ERROR_FILE):
                outcome =
                    key.isEncrypted ? "wrong passphrase or unreadable key" : "unreadable or unsupported key format"
            default:
                outcome = "refused by the server"
                if key.isRSA && serverRequiresSHA2 { rsaRejected = true }
            }
            record(Attempt(source: Self.tilde(key.path), outcome: outcome))
            goOn(to: .keyFile(index + 1))
            return nil

        case .passwordChoice:
            guard listed else {
                goOn(to: .passwordChoice)
                return nil
            }
            let interactive = methods.contains("keyboard-interactive")
            if (methods.contains("password") || interactive) && options.allowPassword {
                // The same password through `password` when offered, else through keyboard-interactive
                // (PAM-only servers, macOS, the BSDs). Not both: a refused password would only be
                // refused again, and count twice against the server's MaxAuthTries and fail2ban.
                switch takeSecret(.password(user: options.user, host: options.hostName)) {
                case .ask(let request):
                    return .needsSecret(request)
                case .answered(let secret?):
                    stage =
                        methods.contains("password")
                        ? .password(secret) : .interactive(InteractiveResponder(password: secret.reveal))
                case .answered(nil):
                    record(
                        methods.contains("password")
                            ? Attempt(source: "password", outcome: "none given; use --password-env VAR")
                            : Attempt(
                                source: "keyboard-interactive", outcome: "no password given; use --password-env VAR"))
                    stage = .finished
                }
            } else {
                if !methods.contains("password") && !methods.contains("publickey") && !interactive {
                    record(
                        Attempt(
                            source: "server",
                            outcome:
                                "offers only \(methods.sorted().joined(separator: ", ")), which hostscope does not support"
                        ))
                }
                stage = .finished
            }
            return nil

        case .password(let password):
            let result = options.user.withCString { user in
                password.reveal.withCString { secret in
                    libssh2_userauth_password_ex(
                        session, user, UInt32(strlen(user)), secret, UInt32(strlen(secret)), nil)
                }
            }
            if result == LibSSH2.eagain { return .blocked }
            stage = .finished
            if result == 0 { return .authenticated(method: "password") }
            try throwIfTransportBroken(session, result)
            record(Attempt(source: "password", outcome: "refused"))
            return nil

        case .interactive(let responder):
            let abstract = libssh2_session_abstract(session)
            let previous = abstract?.pointee
            abstract?.pointee = Unmanaged.passUnretained(responder).toOpaque()
            let result = options.user.withCString { user in
                libssh2_userauth_keyboard_interactive_ex(session, user, UInt32(strlen(user)), interactiveResponse)
            }
            abstract?.pointee = previous
            if result == LibSSH2.eagain { return .blocked }
            stage = .finished
            if result == 0 { return .authenticated(method: "keyboard-interactive") }
            try throwIfTransportBroken(session, result)
            if let prompt = responder.unanswered.first {
                record(
                    Attempt(
                        source: "keyboard-interactive",
                        outcome: "the server asked \"\(prompt)\", which only a person can answer; use a key instead"))
            } else {
                record(Attempt(source: "keyboard-interactive", outcome: "password refused"))
            }
            return nil

        case .finished:
            return .failed(finalError())
        }
    }

    /// Makes `next` the stage, once the server's methods are known: until then, asks for them first.
    private func goOn(to next: Stage) {
        if listed {
            stage = next
        } else {
            afterListing = next
            stage = .listing
        }
    }

    private enum SecretAnswer {
        case ask(SecretRequest)
        case answered(Secret?)
    }

    /// The answer to `request` if the provider gave one, else the request to hand out. Without a
    /// provider the answer is "none" at once.
    private func takeSecret(_ request: SecretRequest) -> SecretAnswer {
        guard options.secrets != nil else { return .answered(nil) }
        if pendingSecret == request, let supplied = suppliedSecret {
            pendingSecret = nil
            suppliedSecret = nil
            return .answered(supplied)
        }
        pendingSecret = request
        suppliedSecret = nil
        return .ask(request)
    }

    /// Remembers a failed attempt for the final error, and says it to `-v` as it happens.
    private func record(_ attempt: Attempt) {
        attempts.append(attempt)
        options.verbose?("\(options.displayName): tried \(attempt.source): \(attempt.outcome)")
    }

    private func finalError() -> SSHError {
        var message = "\(options.displayName): authentication failed for user \(options.user)"
        if !attempts.isEmpty {
            message += " — tried " + attempts.map { "\($0.source) (\($0.outcome))" }.joined(separator: ", ")
        }
        if rsaRejected {
            message +=
                ". The RSA key was refused because this libssh2 (1.10) signs RSA only with ssh-rsa (SHA-1), which OpenSSH 8.8 and later reject by default: use an ed25519 or ECDSA key"
        } else {
            message +=
                ". Check the user name (--user), that your public key is in the host's ~/.ssh/authorized_keys, or pass a key with --identity"
        }
        return SSHError(.auth, message)
    }

    private func freeAgent() {
        guard let agent else { return }
        if agentConnected { libssh2_agent_disconnect(agent) }
        libssh2_agent_free(agent)
        self.agent = nil
        agentConnected = false
        agentPrevious = nil
    }

    /// OpenSSH 8.8 and later refuse `ssh-rsa` (SHA-1) signatures by default.
    private var serverRequiresSHA2: Bool {
        guard let banner = serverBanner, let range = banner.range(of: "OpenSSH_") else { return false }
        let version = banner[range.upperBound...].prefix { $0.isNumber || $0 == "." }
        let parts = version.split(separator: ".").compactMap { Int($0) }
        guard let major = parts.first else { return false }
        return major > 8 || (major == 8 && (parts.dropFirst().first ?? 0) >= 8)
    }

    private func throwIfTransportBroken(_ session: OpaquePointer, _ code: Int32) throws(SSHError) {
        if code == Int32(LIBSSH2_ERROR_TIMEOUT) || code == Int32(LIBSSH2_ERROR_SOCKET_TIMEOUT) {
            throw SSHError(
                .timeout, "\(options.displayName): timed out during authentication; the host may be overloaded",
                libssh2Code: code)
        }
        if LibSSH2.isFatalTransportError(code) {
            let error = LibSSH2.lastError(session)
            throw SSHError(
                .auth, "\(options.displayName): the connection broke during authentication (\(error.message))",
                libssh2Code: code)
        }
    }

    /// Shows paths under the home directory with `~`, as people write them.
    static func tilde(_ path: String) -> String {
        let home = NSHomeDirectory()
        if !home.isEmpty, home != "/", path.hasPrefix(home + "/") { return "~" + path.dropFirst(home.count) }
        return path
    }
}

/// What the keyboard-interactive callback answers with, reached through the session's abstract
/// pointer while `libssh2_userauth_keyboard_interactive_ex` runs on the session's I/O thread.
final class InteractiveResponder {
    let password: String
    /// Rounds that asked for the password so far: a server that keeps asking has refused it.
    var passwordRounds = 0
    /// Prompts that were not for a password, for the error message.
    var unanswered: [String] = []

    init(password: String) {
        self.password = password
    }

    /// The answer to one prompt of a round, or nil to answer empty.
    func answer(prompt: String, hidden: Bool, hiddenPromptsInRound: Int) -> String? {
        let asksPassword = prompt.lowercased().contains("password") || prompt.lowercased().contains("passphrase")
        guard hidden, asksPassword || hiddenPromptsInRound == 1 else {
            unanswered.append(prompt.trimmingCharacters(in: .whitespaces))
            return nil
        }
        return password
    }
}

/// libssh2's keyboard-interactive callback: fills `responses` with malloc'ed answers, which
/// libssh2 frees.
private let interactiveResponse:
    @convention(c) (
        UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, Int32, Int32,
        UnsafePointer<LIBSSH2_USERAUTH_KBDINT_PROMPT>?, UnsafeMutablePointer<LIBSSH2_USERAUTH_KBDINT_RESPONSE>?,
        UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    ) -> Void = { _, _, _, _, count, prompts, responses, abstract in
        guard count > 0, let prompts, let responses, let context = abstract?.pointee else { return }
        let responder = Unmanaged<InteractiveResponder>.fromOpaque(context).takeUnretainedValue()
        let texts = (0..<Int(count)).map { index -> (text: String, hidden: Bool) in
            let prompt = prompts[index]
            let bytes =
                prompt.text.map {
                    UnsafeRawBufferPointer(start: $0, count: Int(prompt.length)).map { $0 }
                } ?? []
            return (String(decoding: bytes, as: UTF8.self), prompt.echo == 0)
        }
        let hiddenCount = texts.filter(\.hidden).count
        var gavePassword = false
        for (index, prompt) in texts.enumerated() {
            var answer = responder.answer(prompt: prompt.text, hidden: prompt.hidden, hiddenPromptsInRound: hiddenCount)
            if answer != nil {
                gavePassword = true
                // A third round asking again: the password was refused; stop feeding it.
                if responder.passwordRounds >= 2 { answer = nil }
            }
            let utf8 = Array((answer ?? "").utf8)
            let copy = malloc(max(1, utf8.count))!.assumingMemoryBound(to: CChar.self)
            utf8.withUnsafeBufferPointer { bytes in
                if let base = bytes.baseAddress { memcpy(copy, base, utf8.count) }
            }
            responses[index].text = copy
            responses[index].length = UInt32(utf8.count)
        }
        if gavePassword { responder.passwordRounds += 1 }
    }
