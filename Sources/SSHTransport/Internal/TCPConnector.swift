import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Opens a TCP connection without blocking: the name is resolved first (off the I/O threads when
/// it is not a numeric address), then each address is tried in turn with a non-blocking connect,
/// as OpenSSH does, driven by an I/O thread's readiness events.
enum TCPConnector {
    /// One address of the host, as `getaddrinfo` gave it.
    struct Address: Sendable {
        var storage: sockaddr_storage
        var length: socklen_t
        var family: Int32
        var text: String
    }

    /// Resolves a numeric address without any lookup; `nil` for a name.
    static func numericAddresses(host: String, port: Int) -> [Address]? {
        try? lookup(host: host, port: port, displayName: host, flags: AI_NUMERICHOST)
    }

    /// Resolves `host` with `getaddrinfo`, which may block for the resolver's timeout: never call
    /// it on an I/O thread. `origin` is the ssh_config line that set `host` as a `HostName`, if one did.
    /// `configFile` is the user's ssh_config as the advice names it.
    static func resolve(
        host: String, port: Int, displayName: String, origin: String? = nil,
        configFile: String = SSHConfig.userConfigPath
    ) throws(SSHError) -> [Address] {
        try lookup(host: host, port: port, displayName: displayName, origin: origin, configFile: configFile, flags: 0)
    }

    private static func lookup(
        host: String, port: Int, displayName: String, origin: String? = nil,
        configFile: String = SSHConfig.userConfigPath, flags: Int32
    ) throws(SSHError) -> [Address] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        hints.ai_flags = flags
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let reason = String(cString: gai_strerror(status))
            let advice =
                origin.map { "check HostName \(host) at \($0)" }
                ?? "check the name, or give it a HostName in \(configFile)"
            throw SSHError(.resolve, "\(displayName): cannot resolve host name \"\(host)\" (\(reason)); \(advice)")
        }
        defer { freeaddrinfo(list) }
        var addresses: [Address] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            entry = current.pointee.ai_next
            guard let pointer = current.pointee.ai_addr else { continue }
            var storage = sockaddr_storage()
            let length = current.pointee.ai_addrlen
            withUnsafeMutableBytes(of: &storage) { target in
                target.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: Int(length)))
            }
            addresses.append(
                Address(
                    storage: storage, length: length, family: current.pointee.ai_family,
                    text: numericAddress(pointer, length: length)))
        }
        if addresses.isEmpty {
            throw SSHError(.connect, "\(displayName): no address to connect to for \"\(host)\"")
        }
        return addresses
    }

    /// A connect in progress over the host's addresses, one at a time.
    struct Attempt {
        enum Outcome {
            /// Waiting for the socket to become writable.
            case waiting(Int32)
            case connected(socket: Int32, address: String)
            case failed(SSHError)
        }

        let addresses: [Address]
        let port: Int
        let displayName: String
        private var index = 0
        private(set) var socket: Int32 = -1
        private var lastError: SSHError?

        init(addresses: [Address], port: Int, displayName: String) {
            self.addresses = addresses
            self.port = port
            self.displayName = displayName
        }

        /// Starts or continues the connect; call again when the socket becomes writable.
        mutating func step() -> Outcome {
            if socket >= 0 {
                var socketError: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(socket, SOL_SOCKET, SO_ERROR, &socketError, &length)
                if socketError == 0 {
                    // A writable socket without an error may still be connecting (a spurious
                    // wake-up): getpeername tells.
                    var peer = sockaddr_storage()
                    var peerLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
                    let connected = withUnsafeMutablePointer(to: &peer) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(socket, $0, &peerLength) }
                    }
                    if connected == 0 { return finish() }
                    if errno == ENOTCONN { return .waiting(socket) }
                    socketError = errno
                }
                failCurrent(socketError)
            }
            while index < addresses.count {
                let address = addresses[index]
                let fd = Glibc.socket(
                    address.family,
                    Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
                        | Int32(SOCK_NONBLOCK.rawValue), Int32(IPPROTO_TCP))
                guard fd >= 0 else {
                    lastError = SSHError(
                        .connect, "\(displayName): cannot create a socket (\(String(cString: strerror(errno))))")
                    index += 1
                    continue
                }
                socket = fd
                var storage = address.storage
                let result = withUnsafePointer(to: &storage) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, address.length) }
                }
                if result == 0 { return finish() }
                if errno == EINPROGRESS { return .waiting(fd) }
                failCurrent(errno)
            }
            return .failed(lastError ?? SSHError(.connect, "\(displayName): no address to connect to"))
        }

        /// The deadline passed: the socket (if any) is closed.
        mutating func timedOut() -> SSHError {
            let address = index < addresses.count ? addresses[index].text : (addresses.last?.text ?? "?")
            if socket >= 0 {
                close(socket)
                socket = -1
            }
            return SSHError(
                .timeout,
                "\(displayName): timed out connecting to \(address) port \(port); check that the host is up and reachable, or raise --connect-timeout"
            )
        }

        private mutating func finish() -> Outcome {
            var one: Int32 = 1
            setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let fd = socket
            socket = -1
            return .connected(socket: fd, address: addresses[index].text)
        }

        private mutating func failCurrent(_ code: Int32) {
            let address = addresses[index].text
            close(socket)
            socket = -1
            index += 1
            let reason = String(cString: strerror(code))
            let hint =
                code == ECONNREFUSED
                ? "is sshd running there, and is the port right?" : "check the address and the network path"
            lastError = SSHError(
                .connect, "\(displayName): cannot connect to \(address) port \(port): \(reason); \(hint)")
        }
    }

    /// TCP keepalive probes every `interval` once the connection is idle that long; after
    /// `count` unanswered ones the kernel fails the socket, which the session's I/O thread sees.
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
