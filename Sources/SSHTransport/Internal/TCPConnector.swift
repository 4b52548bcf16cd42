import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Opens a TCP connection with a deadline: resolves the name, then tries each address in
/// turn with a non-blocking connect, as OpenSSH does.
enum TCPConnector {
    struct Connection {
        var socket: Int32
        var address: String
    }

    static func connect(
        host: String, port: Int, displayName: String, deadline: ContinuousClock.Instant,
        keepalive: (interval: Duration, count: Int)? = nil
    ) throws(SSHError) -> Connection {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>?
        // getaddrinfo has no timeout of its own; the resolver's (a few seconds) bounds it.
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let reason = String(cString: gai_strerror(status))
            throw SSHError(
                .resolve,
                "\(displayName): cannot resolve host name \"\(host)\" (\(reason)); check the name, or its HostName in ~/.ssh/config"
            )
        }
        defer { freeaddrinfo(list) }

        var lastError: SSHError?
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            entry = current.pointee.ai_next
            let address = numericAddress(current.pointee.ai_addr, length: current.pointee.ai_addrlen)
            do {
                let socket = try attempt(current.pointee, address: address, port: port, displayName: displayName,
                                         deadline: deadline)
                if let keepalive { enableKeepalive(socket, interval: keepalive.interval, count: keepalive.count) }
                return Connection(socket: socket, address: address)
            } catch {
                lastError = error
                if error.code == .timeout { break }
            }
        }
        throw lastError ?? SSHError(.connect, "\(displayName): no address to connect to for \"\(host)\"")
    }

    private static func attempt(
        _ info: addrinfo, address: String, port: Int, displayName: String, deadline: ContinuousClock.Instant
    ) throws(SSHError) -> Int32 {
        let fd = socket(info.ai_family, info.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), info.ai_protocol)
        guard fd >= 0 else {
            throw SSHError(.connect, "\(displayName): cannot create a socket (\(String(cString: strerror(errno))))")
        }
        var keep = false
        defer { if !keep { close(fd) } }

        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        var result = Glibc.connect(fd, info.ai_addr, info.ai_addrlen)
        if result != 0 && errno == EINPROGRESS {
            let remaining = ContinuousClock.now.duration(to: deadline)
            var pollfd = Glibc.pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = remaining > .zero ? poll(&pollfd, 1, Int32(remaining.roundedUpMilliseconds)) : 0
            if ready == 0 {
                throw SSHError(
                    .timeout,
                    "\(displayName): timed out connecting to \(address) port \(port); check that the host is up and reachable, or raise --connect-timeout"
                )
            }
            var socketError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &socketError, &length)
            result = socketError == 0 ? 0 : -1
            errno = socketError
        }
        guard result == 0 else {
            let code = errno
            let reason = String(cString: strerror(code))
            let hint =
                code == ECONNREFUSED
                ? "is sshd running there, and is the port right?" : "check the address and the network path"
            throw SSHError(.connect, "\(displayName): cannot connect to \(address) port \(port): \(reason); \(hint)")
        }
        // libssh2 runs the handshake in blocking mode first; it switches the session to
        // non-blocking itself later, so the descriptor goes back to blocking here.
        _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        keep = true
        return fd
    }

    /// TCP keepalive probes every `interval` once the connection is idle that long; after
    /// `count` unanswered ones the kernel fails the socket, which the session loop sees.
    static func enableKeepalive(_ socket: Int32, interval: Duration, count: Int) {
        var on: Int32 = 1
        var seconds = Int32(clamping: max(1, interval.components.seconds))
        var probes = Int32(clamping: max(1, count))
        let size = socklen_t(MemoryLayout<Int32>.size)
        setsockopt(socket, SOL_SOCKET, SO_KEEPALIVE, &on, size)
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_KEEPIDLE, &seconds, size)
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_KEEPINTVL, &seconds, size)
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_KEEPCNT, &probes, size)
    }

    private static func numericAddress(_ address: UnsafeMutablePointer<sockaddr>?, length: socklen_t) -> String {
        guard let address else { return "?" }
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(address, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else {
            return "?"
        }
        return String(cString: host)
    }
}
