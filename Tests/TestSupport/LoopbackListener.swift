import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP socket listening on 127.0.0.1 that never answers: connections wait in its backlog, so a test can
/// tell whether anything connected at all, or watch a client wait for a banner that never comes.
public final class LoopbackListener {
    public let port: Int
    private let descriptor: Int32

    public init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw HarnessError(description: "socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0, listen(descriptor, 8) == 0 else {
            close(descriptor)
            throw HarnessError(description: "cannot listen on 127.0.0.1: errno \(errno)")
        }
        withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(descriptor, $0, &length) }
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit {
        close(descriptor)
    }

    /// A loopback port that was free a moment ago (bound, read, released), for a server that takes its
    /// port on the command line.
    public static func freePort() throws -> Int {
        try LoopbackListener().port
    }

    /// Whether a connection has arrived (and not been taken), without waiting.
    public var hasPendingConnection: Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 1 && entry.revents & Int16(POLLIN) != 0
    }
}
