import CLibSSH2
import Foundation
import Synchronization
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// The parts of a session that depend on how it reaches its host: a jump session's channel or a
/// `ProxyCommand`, and the messages that name the hop when something on the way fails.
extension SessionLoop {
    // MARK: - Any thread

    /// Whether a new target may be carried by this session (as a jump host): it is up, not closing, and
    /// no channel open on it has hung.
    var acceptsTunnels: Bool { isRunning && !tunnelsRetired.load(ordering: .acquiring) }

    /// New targets go to another session from now on: a channel open on this one outlived its target's
    /// connect timeout, and libssh2 opens one channel at a time, so every open after it would wait too.
    func retireForTunnels() {
        tunnelsRetired.store(true, ordering: .releasing)
    }

    /// The jump session opened this session's channel.
    func tunnelOpened() {
        inbox.withLock { $0.tunnel = .opened }
        wake()
    }

    /// The jump session could not open this session's channel, or it broke.
    func tunnelFailed(_ error: SSHError) {
        inbox.withLock { $0.tunnel = .failed(error) }
        wake()
    }

    // MARK: - Messages of a jump session about its targets (called on the jump session's thread)

    /// The jump session's own connection broke while it carried targets.
    func brokenError(_ error: (code: Int32, message: String)) -> SSHError {
        SSHError(
            .sessionClosed, "\(options.displayName): the connection broke (\(error.message))", libssh2Code: error.code)
    }

    /// What a target behind this jump session hears when the session ended under its open channel.
    func tunnelBrokenError(_ error: SSHError, target: String) -> SSHError {
        SSHError(
            error.code == .timeout ? .timeout : .sessionClosed,
            "\(target): the connection through jump host \(options.hopDescription) ended: "
                + Self.withoutName(options.displayName, error.message),
            libssh2Code: error.libssh2Code)
    }

    /// What a target hears when this jump session failed or ended before its channel opened.
    func jumpFailure(_ error: SSHError, for target: SSHConnectionOptions) -> SSHError {
        Self.jumpFailure(error, hop: options, target: target)
    }

    /// The jump host refused or failed to open the channel to `host` `port`.
    func channelRefusal(_ error: (code: Int32, message: String), host: String, port: Int, target: String) -> SSHError {
        let hop = options.hopDescription
        let reason = error.message.lowercased()
        if reason.contains("administratively prohibited") {
            return SSHError(
                .connect,
                "\(target): jump host \(hop) refused to forward a connection to \(host) port \(port) "
                    + "(administratively prohibited); its sshd_config must allow it (AllowTcpForwarding, PermitOpen)",
                libssh2Code: error.code)
        }
        if reason.contains("connect failed") {
            return SSHError(
                .connect,
                "\(target): jump host \(hop) could not connect to \(host) port \(port) (connect failed); is sshd "
                    + "running there, and can the jump host reach it?",
                libssh2Code: error.code)
        }
        return SSHError(
            .connect,
            "\(target): jump host \(hop) did not open a connection to \(host) port \(port) (\(error.message))",
            libssh2Code: error.code)
    }

    /// A jump host's connect error as a target behind it reports it: the target's name first, then the hop
    /// that failed (the one furthest along the way, when the hop itself is behind others).
    static func jumpFailure(_ error: SSHError, hop: SSHConnectionOptions, target: SSHConnectionOptions) -> SSHError {
        let rest = withoutName(hop.displayName, error.message)
        if rest.hasPrefix("jump host ") || rest.hasPrefix("the connection through jump host ") {
            return SSHError(error.code, "\(target.displayName): \(rest)", libssh2Code: error.libssh2Code)
        }
        return SSHError(
            error.code, "\(target.displayName): jump host \(hop.hopDescription): \(rest)",
            libssh2Code: error.libssh2Code)
    }

    /// `message` without its leading `name: ` (or `name (…): `), which a message about a hop replaces.
    private static func withoutName(_ name: String, _ message: String) -> String {
        guard message.hasPrefix(name) else { return message }
        let after = message.dropFirst(name.count)
        if after.hasPrefix(": ") { return String(after.dropFirst(2)) }
        if after.hasPrefix(" ("), let end = after.range(of: "): ") { return String(after[end.upperBound...]) }
        return message
    }

    // MARK: - The session's own messages (its I/O thread)

    /// Names the hop in an error of this session when it runs over a jump session, and what a
    /// `ProxyCommand` said when it ended under the session; a failure the jump session reported explains
    /// itself and is used as it is.
    func routeAnnotated(_ error: SSHError) -> SSHError {
        switch carrier {
        case .tcp:
            return error
        case .tunnel(let lease):
            let reported =
                tunnelFailure
                ?? inbox.withLock { state -> SSHError? in
                    if case .failed(let error)? = state.tunnel { return error }
                    return nil
                }
            if let reported { return reported }
            let name = options.displayName
            let prefix = name + ": "
            guard error.message.hasPrefix(prefix) else { return error }
            let rest = error.message.dropFirst(prefix.count)
            if rest.hasPrefix("jump host ") || rest.hasPrefix("the connection through jump host ") { return error }
            var annotated = error
            annotated.message = "\(name) (via jump host \(lease.hopDescription)): \(rest)"
            return annotated
        case .command(let process):
            guard error.code == .sessionClosed, let termination = process.reap() else { return error }
            drainProxyErrors()
            var annotated = error
            annotated.message += "; the \(process.command.description) \(termination.description)"
            if let said = process.errorExcerpt { annotated.message += ", after writing \(said) to standard error" }
            return annotated
        }
    }

    /// The channel of a session behind a jump host did not open in time.
    func tunnelTimeout() -> SSHError {
        let hop: String
        if case .tunnel(let lease) = carrier {
            hop = lease.hopDescription
            lease.loop.retireForTunnels()
        } else {
            hop = "?"
        }
        return SSHError(
            .timeout,
            "\(options.displayName): jump host \(hop) did not open a connection to \(options.hostName) port "
                + "\(options.port) within \(ExecOperation.describe(options.connectTimeout)); the jump host may be "
                + "overloaded, or \(options.hostName) may not answer it")
    }

    /// What answered instead of an SSH server, when that is known: the first line libssh2 took for a banner,
    /// or the first bytes seen, when they do not start as an SSH banner does.
    var nonSSHEvidence: [UInt8]? {
        let banner = session.flatMap { libssh2_session_banner_get($0) }.map { Array(String(cString: $0).utf8) }
        return Self.nonSSHEvidence(banner: banner, firstBytes: firstBytes)
    }

    /// What answered instead of an SSH server, from the line libssh2 took for a banner or, when it took none,
    /// the first bytes seen: the first line of those, as libssh2 would have taken it (line ends before it
    /// skipped, after it dropped), so that the message does not depend on which of the two saw the bytes.
    static func nonSSHEvidence(banner: [UInt8]?, firstBytes: [UInt8]?) -> [UInt8]? {
        let prefix = Array("SSH-".utf8)
        if let banner { return banner.starts(with: prefix) ? nil : banner }
        guard let firstBytes else { return nil }
        let isLineEnd = { (byte: UInt8) in byte == ASCIIByte.cr || byte == ASCIIByte.lf }
        let text = firstBytes.drop(while: isLineEnd)
        guard !text.isEmpty else { return nil }
        let line = Array(text.prefix(while: { !isLineEnd($0) }))
        let head = Array(line.prefix(prefix.count))
        return prefix.starts(with: head) ? nil : line
    }

    /// Looks at what the server sent first without taking it from libssh2.
    func peekFirstBytes() {
        guard socket >= 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = recv(socket, &buffer, buffer.count, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
        if count > 0 { firstBytes = Array(buffer[0..<count]) }
    }

    /// Reads what a `ProxyCommand` wrote to standard error since last time, when its pipe has something.
    func drainProxyErrors() {
        guard case .command(let process) = carrier, let watch = errorWatch, watch.readable else { return }
        watch.readable = false
        if !process.drainErrors() {
            // The pipe closed: nothing more will come, and a closed pipe would be reported for ever.
            reactor.unwatch(watch)
            errorWatch = nil
        }
    }

    /// Why the connect over a `ProxyCommand` failed, from what it did.
    func proxyCommandFailure(_ error: SSHError, _ process: ProxyCommandProcess) -> SSHError {
        let name = options.displayName
        let what = "the \(process.command.description)"
        let said = process.errorExcerpt.map { "; it wrote \($0) to standard error" } ?? ""
        let advice =
            "it must connect its standard input and output to the host's sshd, as ssh -W %h:%p bastion does"
        if let evidence = nonSSHEvidence {
            return SSHError(
                .handshake,
                "\(name): \(what) printed \(ForeignText.quoted(evidence)) where an SSH banner (SSH-2.0-…) was "
                    + "expected\(said); \(advice)",
                libssh2Code: error.libssh2Code)
        }
        if let termination = process.termination {
            return SSHError(
                .connect,
                "\(name): \(what) \(termination.description) before the SSH handshake finished\(said); check that it "
                    + "reaches \(options.hostName) port \(options.port)",
                libssh2Code: error.libssh2Code)
        }
        if error.code == .timeout {
            return SSHError(
                .timeout,
                "\(name): \(what) sent nothing within \(ExecOperation.describe(options.connectTimeout))\(said); "
                    + advice,
                libssh2Code: error.libssh2Code)
        }
        return SSHError(
            .handshake, "\(name): \(what) closed the connection during the SSH handshake\(said); \(advice)",
            libssh2Code: error.libssh2Code)
    }
}
