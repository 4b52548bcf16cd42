import HummingbirdCore
import Logging
import NIOCore
import Synchronization
import ValueFormats

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The connections open now, in all and per client address, against `serve`'s caps.
///
/// A connection over a cap is closed as soon as it is accepted, before any byte of it is read: one
/// address cannot hold every descriptor of the process, and the other clients (a load balancer's
/// `/healthz`, Prometheus) are still served while it tries.
final class ConnectionCounter: Sendable {
    private struct State {
        var total = 0
        var perAddress: [String: Int] = [:]
    }

    let maximum: Int
    let maximumPerAddress: Int
    private let state = Lock(State())

    init(maximum: Int, maximumPerAddress: Int) {
        self.maximum = max(1, maximum)
        self.maximumPerAddress = max(1, maximumPerAddress)
    }

    /// Counts a new connection from `address`; `false` (and nothing counted) when a cap is reached.
    func open(_ address: String) -> Bool {
        state.withLock { state in
            let fromAddress = state.perAddress[address, default: 0]
            guard state.total < maximum, fromAddress < maximumPerAddress else { return false }
            state.total += 1
            state.perAddress[address] = fromAddress + 1
            return true
        }
    }

    /// A connection counted by ``open(_:)`` closed.
    func close(_ address: String) {
        state.withLock { state in
            state.total -= 1
            let left = state.perAddress[address, default: 1] - 1
            state.perAddress[address] = left > 0 ? left : nil
        }
    }

    var openConnections: Int { state.withLock { $0.total } }
}

/// A child channel of the server (HTTP/1, or TLS around it) with `serve`'s connection guards in front:
/// the caps of ``ConnectionCounter``, and ``FirstRequestDeadline``.
struct GuardedChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let counter: ConnectionCounter
    let headerTimeout: TimeAmount

    /// Why a connection was closed at once.
    struct Refused: Error {}

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let address = channel.remoteAddress?.ipAddress ?? "unknown"
        guard counter.open(address) else {
            logger.debug("connection refused: too many open", metadata: ["client": "\(address)"])
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(Refused())
        }
        let counter = counter
        channel.closeFuture.whenComplete { _ in counter.close(address) }
        let timeout = headerTimeout
        return channel.eventLoop.makeCompletedFuture {
            // First in the pipeline, before TLS: the handshake counts against the same deadline.
            try channel.pipeline.syncOperations.addHandler(FirstRequestDeadline(timeout: timeout), position: .first)
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// The event a request handler sends down its channel once a request's head has been read.
struct RequestArrived: Sendable {}

/// Closes a connection that has not delivered its first request's head (TLS handshake included)
/// within the header timeout of opening. Partial headers, a handshake never finished, a connection
/// that sends nothing: each holds a descriptor for that long at most. Later requests on the connection
/// are bounded by Hummingbird's idle timeout instead.
final class FirstRequestDeadline: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?
    private var arrived = false

    init(timeout: TimeAmount) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) { disarm() }

    func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is RequestArrived else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        arrived = true
        disarm()
        promise?.succeed(())
    }

    private func arm(_ context: ChannelHandlerContext) {
        guard deadline == nil, !arrived else { return }
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            context.close(promise: nil)
        }
    }

    private func disarm() {
        deadline?.cancel()
        deadline = nil
    }
}

/// The process's limit on open descriptors, raised at start as servers do.
enum DescriptorLimit {
    /// Raises the soft limit on open files to the hard limit; the soft limit in force after.
    static func raise() -> Int {
        var limits = rlimit()
        #if canImport(Glibc)
            let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
            let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limits) == 0 else { return 1024 }
        if limits.rlim_cur < limits.rlim_max {
            var raised = limits
            raised.rlim_cur = limits.rlim_max
            if setrlimit(resource, &raised) == 0 { limits = raised }
        }
        return limits.rlim_cur > rlim_t(Int.max) ? Int.max : Int(limits.rlim_cur)
    }

    /// The connection cap that leaves room under `descriptors` for what else the process opens (SSH
    /// sessions, the database, logs): at most half of the limit.
    static func connectionCap(_ wanted: Int, descriptors: Int) -> Int {
        max(16, min(wanted, descriptors / 2))
    }
}
