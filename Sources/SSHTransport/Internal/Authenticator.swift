import CLibSSH2
import Foundation

/// Runs user authentication in OpenSSH's order: ssh-agent keys, then identity files, then a
/// password. The session is in blocking mode with a timeout while this runs, on the session's
/// own thread.
///
/// Every attempt is remembered so that a final failure says what was tried and why each
/// failed, instead of a bare "authentication failed".
struct Authenticator {
    var options: SSHConnectionOptions
    var serverBanner: String?

    private struct Attempt {
        var source: String
        var outcome: String
    }

    func authenticate(_ session: OpaquePointer) throws(SSHError) -> String {
        let user = options.user
        let listed = user.withCString { libssh2_userauth_list(session, $0, UInt32(strlen($0))) }
        if listed == nil {
            if libssh2_userauth_authenticated(session) != 0 { return "none" }
            let error = LibSSH2.lastError(session)
            throw SSHError(
                error.code == Int32(LIBSSH2_ERROR_TIMEOUT) ? .timeout : .auth,
                "\(options.displayName): the server ended the connection before authentication (\(error.message))",
                libssh2Code: error.code)
        }
        let methods = Set(String(cString: listed!).split(separator: ",").map(String.init))
        var attempts: [Attempt] = []
        var rsaRejected = false

        if methods.contains("publickey") {
            let identityFiles = options.identityFiles.compactMap { path -> PrivateKeyFile? in
                guard let info = PrivateKeyFile.inspect(path) else { return nil }
                return info
            }
            if let socket = options.agentSocket {
                if let method = try authenticateWithAgent(session, socket: socket, identityFiles: identityFiles,
                                                          attempts: &attempts, rsaRejected: &rsaRejected)
                {
                    return method
                }
            }
            for key in identityFiles {
                if let method = try authenticateWithKey(session, key: key, attempts: &attempts, rsaRejected: &rsaRejected) {
                    return method
                }
            }
            let missing = options.identityFiles.filter { path in !identityFiles.contains { $0.path == path } }
            if !missing.isEmpty && identityFiles.isEmpty && options.agentSocket == nil {
                attempts.append(Attempt(source: "identity files", outcome: "none found (\(missing.map(Self.tilde).joined(separator: ", ")))"))
            }
        }

        let interactive = methods.contains("keyboard-interactive")
        if (methods.contains("password") || interactive) && options.allowPassword {
            // The same password through `password` when offered, else through keyboard-interactive
            // (PAM-only servers, macOS, the BSDs). Not both: a refused password would only be
            // refused again, and count twice against the server's MaxAuthTries and fail2ban.
            if methods.contains("password") {
                if let method = try authenticateWithPassword(session, attempts: &attempts) { return method }
            } else if let method = try authenticateInteractively(session, attempts: &attempts) {
                return method
            }
        } else if !methods.contains("password") && !methods.contains("publickey") && !interactive {
            attempts.append(
                Attempt(source: "server", outcome: "offers only \(methods.sorted().joined(separator: ", ")), which hostscope does not support"))
        }

        var message =
            "\(options.displayName): authentication failed for user \(user)"
        if !attempts.isEmpty {
            message += " — tried " + attempts.map { "\($0.source) (\($0.outcome))" }.joined(separator: ", ")
        }
        if rsaRejected {
            message +=
                ". The RSA key was refused because this libssh2 (1.10) signs RSA only with ssh-rsa (SHA-1), which OpenSSH 8.8 and later reject by default: use an ed25519 or ECDSA key"
        } else {
            message += ". Check the user name (--user), that your public key is in the host's ~/.ssh/authorized_keys, or pass a key with --identity"
        }
        throw SSHError(.auth, message)
    }

    private func authenticateWithAgent(
        _ session: OpaquePointer, socket: String, identityFiles: [PrivateKeyFile], attempts: inout [Attempt],
        rsaRejected: inout Bool
    ) throws(SSHError) -> String? {
        guard let agent = libssh2_agent_init(session) else { return nil }
        defer { libssh2_agent_free(agent) }
        libssh2_agent_set_identity_path(agent, socket)
        guard libssh2_agent_connect(agent) == 0 else {
            attempts.append(Attempt(source: "ssh-agent", outcome: "cannot connect to \(socket)"))
            return nil
        }
        defer { libssh2_agent_disconnect(agent) }
        guard libssh2_agent_list_identities(agent) == 0 else {
            attempts.append(Attempt(source: "ssh-agent", outcome: "cannot list its keys"))
            return nil
        }
        let allowedBlobs = options.identitiesOnly ? identityFiles.compactMap(\.publicKeyBlob) : nil
        var previous: UnsafeMutablePointer<libssh2_agent_publickey>?
        var offered = 0
        while true {
            var identity: UnsafeMutablePointer<libssh2_agent_publickey>?
            let status = libssh2_agent_get_identity(agent, &identity, previous)
            guard status == 0, let identity else { break }
            previous = identity
            let blob = Array(UnsafeBufferPointer(start: identity.pointee.blob, count: Int(identity.pointee.blob_len)))
            if let allowedBlobs, !allowedBlobs.contains(blob) { continue }
            offered += 1
            let comment = identity.pointee.comment.map { String(cString: $0) } ?? ""
            let result = options.user.withCString { libssh2_agent_userauth(agent, $0, identity) }
            if result == 0 {
                return "publickey (ssh-agent\(comment.isEmpty ? "" : ": " + comment))"
            }
            try throwIfTransportBroken(session, result)
            var reader = BlobReader(bytes: blob)
            if reader.string().map({ String(decoding: $0, as: UTF8.self) }) == "ssh-rsa" && serverRequiresSHA2 {
                rsaRejected = true
            }
        }
        attempts.append(
            Attempt(source: "ssh-agent", outcome: offered == 0 ? "no usable keys" : "\(offered) key\(offered == 1 ? "" : "s") refused"))
        return nil
    }

    private func authenticateWithKey(
        _ session: OpaquePointer, key: PrivateKeyFile, attempts: inout [Attempt], rsaRejected: inout Bool
    ) throws(SSHError) -> String? {
        var passphrase: Secret?
        if key.isEncrypted {
            passphrase = options.secrets?(.passphrase(keyPath: key.path))
            if passphrase == nil {
                attempts.append(Attempt(source: Self.tilde(key.path), outcome: "encrypted and no passphrase given"))
                return nil
            }
        }
        let result = options.user.withCString { user in
            key.path.withCString { path in
                (passphrase?.reveal ?? "").withCString { phrase in
                    libssh2_userauth_publickey_fromfile_ex(
                        session, user, UInt32(strlen(user)), nil, path, key.isEncrypted ? phrase : nil)
                }
            }
        }
        if result == 0 { return "publickey (\(Self.tilde(key.path)))" }
        try throwIfTransportBroken(session, result)
        let outcome: String
        switch result {
        case Int32(LIBSSH2_ERROR_FILE):
            outcome = key.isEncrypted ? "wrong passphrase or unreadable key" : "unreadable or unsupported key format"
        default:
            outcome = "refused by the server"
            if key.isRSA && serverRequiresSHA2 { rsaRejected = true }
        }
        attempts.append(Attempt(source: Self.tilde(key.path), outcome: outcome))
        return nil
    }

    private func authenticateWithPassword(_ session: OpaquePointer, attempts: inout [Attempt]) throws(SSHError) -> String? {
        guard let password = options.secrets?(.password(user: options.user, host: options.hostName)) else {
            attempts.append(Attempt(source: "password", outcome: "none given; use --password-env VAR"))
            return nil
        }
        let result = options.user.withCString { user in
            password.reveal.withCString { secret in
                libssh2_userauth_password_ex(session, user, UInt32(strlen(user)), secret, UInt32(strlen(secret)), nil)
            }
        }
        if result == 0 { return "password" }
        try throwIfTransportBroken(session, result)
        attempts.append(Attempt(source: "password", outcome: "refused"))
        return nil
    }

    /// keyboard-interactive with the password: every hidden prompt that asks for a password (or
    /// the one hidden prompt of a round) gets it; anything else (a one-time code, a question) is
    /// answered empty and named in the error, since hostscope has no one to ask.
    private func authenticateInteractively(_ session: OpaquePointer, attempts: inout [Attempt]) throws(SSHError)
        -> String?
    {
        guard let password = options.secrets?(.password(user: options.user, host: options.hostName)) else {
            attempts.append(Attempt(source: "keyboard-interactive", outcome: "no password given; use --password-env VAR"))
            return nil
        }
        let responder = InteractiveResponder(password: password.reveal)
        let abstract = libssh2_session_abstract(session)
        let previous = abstract?.pointee
        abstract?.pointee = Unmanaged.passUnretained(responder).toOpaque()
        let result = options.user.withCString { user in
            libssh2_userauth_keyboard_interactive_ex(session, user, UInt32(strlen(user)), interactiveResponse)
        }
        abstract?.pointee = previous
        withExtendedLifetime(responder) {}
        if result == 0 { return "keyboard-interactive" }
        try throwIfTransportBroken(session, result)
        if let prompt = responder.unanswered.first {
            attempts.append(
                Attempt(
                    source: "keyboard-interactive",
                    outcome: "the server asked \"\(prompt)\", which only a person can answer; use a key instead"))
        } else {
            attempts.append(Attempt(source: "keyboard-interactive", outcome: "password refused"))
        }
        return nil
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
/// pointer while `libssh2_userauth_keyboard_interactive_ex` runs on the session's thread.
private final class InteractiveResponder {
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
            let bytes = prompt.text.map {
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
