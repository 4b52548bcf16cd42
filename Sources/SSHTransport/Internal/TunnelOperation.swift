import CLibSSH2
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Carries one target session's SSH stream over a `direct-tcpip` channel of a jump host's session.
///
/// The target session (on any I/O thread) reads and writes its end of a socketpair as it would a TCP
/// socket; this operation, on the jump session's I/O thread, owns the other end and the channel, and
/// copies bytes between them without blocking. The two sessions share nothing but the socketpair and the
/// target's inbox, so neither touches the other's libssh2 session.
///
/// The channel is opened once no other tunnel of the jump session is opening one: libssh2 keeps a single
/// channel-open in progress per session, and a second caller would be handed the first one's channel.
// @unchecked Sendable: created on the target's connecting task and handed to the jump session through its
// inbox lock; from then on touched only by the jump session's I/O thread, except `abandon` when the jump
// session had already ended (then no I/O thread has it).
final class TunnelOperation: LoopOperation, @unchecked Sendable {
    private enum Phase {
        case opening
        case forwarding
        case closing
        case finished
    }

    let deadline: ContinuousClock.Instant? = nil
    var wantsChannel: Bool { false }
    // sshd's MaxSessions counts session channels only; forwarded connections are not limited by it.
    var holdsChannel: Bool { false }

    private let jump: SessionLoop
    private weak var target: SessionLoop?
    private let host: String
    private let port: Int
    private let targetName: String
    private var descriptor: Int32
    private var watch: DescriptorWatch?
    private var channel: OpaquePointer?
    private var phase = Phase.opening

    /// Bytes from the target, not yet accepted by the channel (the window or the socket is full).
    private var toChannel: [UInt8] = []
    private var toChannelOffset = 0
    /// Bytes from the channel, not yet taken by the target.
    private var toTarget: [UInt8] = []
    private var toTargetOffset = 0
    /// The target closed its end: nothing more will come from it.
    private var targetClosed = false
    /// The far end closed the forwarded connection.
    private var remoteClosed = false
    private var targetWriteShut = false

    /// Past this many bytes held for a target that does not read, the channel is not read either, and the
    /// server stops at the channel's window.
    private static let holdLimit = 1 << 20
    private static let chunk = 32 * 1024

    /// - Parameters:
    ///   - descriptor: the engine's end of the socketpair; this operation closes it.
    init(jump: SessionLoop, target: SessionLoop, host: String, port: Int, descriptor: Int32) {
        self.jump = jump
        self.target = target
        self.host = host
        self.port = port
        self.targetName = target.options.displayName
        self.descriptor = descriptor
    }

    var isWaitingForConsumer: Bool {
        phase == .forwarding && pendingToTarget >= Self.holdLimit && pendingToChannel == 0
    }

    private var pendingToTarget: Int { toTarget.count - toTargetOffset }
    private var pendingToChannel: Int { toChannel.count - toChannelOffset }

    func hasQueuedData() -> Bool {
        guard phase == .forwarding, let channel, pendingToTarget < Self.holdLimit else { return false }
        return LibSSH2.hasQueuedData(channel, stream: 0)
    }

    func expire() {}
    func requestCancel() {}

    func abandon(_ error: SSHError) {
        let wasOpen = phase == .forwarding || phase == .closing
        phase = .finished
        channel = nil
        closeDescriptor()
        guard let target else { return }
        target.tunnelFailed(
            wasOpen ? jump.tunnelBrokenError(error, target: targetName) : jump.jumpFailure(error, for: target.options))
    }

    func advance(_ session: OpaquePointer) -> Advance {
        switch phase {
        case .opening:
            return open(session)
        case .forwarding:
            return forward(session)
        case .closing:
            return close(session)
        case .finished:
            return .finished
        }
    }

    // MARK: - Opening

    private func open(_ session: OpaquePointer) -> Advance {
        guard jump.claimChannelOpen(self) else { return .blocked }
        let opened = host.withCString { host in
            libssh2_channel_direct_tcpip_ex(session, host, Int32(port), "127.0.0.1", 22)
        }
        guard let opened else {
            let error = LibSSH2.lastError(session)
            if error.code == LibSSH2.eagain { return .blocked }
            jump.releaseChannelOpen(self)
            // Another tunnel's packet is half sent: this request was not sent, and is tried again.
            if error.code == Int32(LIBSSH2_ERROR_BAD_USE) { return .blocked }
            if LibSSH2.isFatalTransportError(error.code) {
                return .sessionBroken(jump.brokenError(error))
            }
            phase = .finished
            closeDescriptor()
            target?.tunnelFailed(jump.channelRefusal(error, host: host, port: port, target: targetName))
            return .finished
        }
        jump.releaseChannelOpen(self)
        channel = opened
        guard let target else {
            // The target gave up while the channel was being opened.
            phase = .closing
            return .progressed
        }
        phase = .forwarding
        watch = jump.reactor.watch(descriptor, for: jump)
        target.tunnelOpened()
        return .progressed
    }

    // MARK: - Forwarding

    private func forward(_ session: OpaquePointer) -> Advance {
        guard let channel, let watch else { return .finished }
        var progressed = false

        // Channel to target.
        if !remoteClosed && pendingToTarget < Self.holdLimit {
            // One read per round goes to the socket; the others take what libssh2 already holds.
            let queuedOnly = jump.transportDrained
            if !queuedOnly { jump.transportDrained = true }
            let outcome = LibSSH2.drain(
                channel, stream: 0, buffer: &jump.reactor.readBuffer, queuedOnly: queuedOnly,
                while: { self.pendingToTarget < Self.holdLimit }
            ) { bytes in
                self.toTarget.append(contentsOf: bytes)
            }
            switch outcome {
            case .progressed: progressed = true
            case .broken(let code): return .sessionBroken(jump.brokenError((code, LibSSH2.lastError(session).message)))
            case .idle: break
            }
            if libssh2_channel_eof(channel) != 0 && !LibSSH2.hasQueuedData(channel, stream: 0) {
                remoteClosed = true
                progressed = true
            }
        } else if !jump.transportDrained {
            // This channel is not read now, but the jump session's socket must still be emptied (other
            // channels' data, keepalive replies): a read of no bytes does that without taking this
            // channel's data or widening its window.
            jump.transportDrained = true
            let result = jump.reactor.readBuffer.withUnsafeMutableBytes { buffer in
                libssh2_channel_read_ex(channel, 0, buffer.baseAddress?.assumingMemoryBound(to: CChar.self), 0)
            }
            if result < 0 && LibSSH2.isFatalTransportError(Int32(truncatingIfNeeded: result)) {
                return .sessionBroken(jump.brokenError(LibSSH2.lastError(session)))
            }
        }
        if pendingToTarget > 0 && watch.writable {
            let written = toTarget.withUnsafeBytes { bytes in
                // send, not write: a target that closed its end must not raise SIGPIPE in the process.
                Glibc.send(descriptor, bytes.baseAddress! + toTargetOffset, pendingToTarget, Int32(MSG_NOSIGNAL))
            }
            if written > 0 {
                toTargetOffset += written
                progressed = true
                if toTargetOffset == toTarget.count {
                    toTarget.removeAll(keepingCapacity: true)
                    toTargetOffset = 0
                }
            } else if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                watch.writable = false
            } else {
                // The target is gone: nothing more to deliver.
                targetClosed = true
                toTarget = []
                toTargetOffset = 0
            }
        }
        if remoteClosed && pendingToTarget == 0 && !targetWriteShut {
            // The target's session sees the end of its stream, as over TCP, and closes its end.
            Glibc.shutdown(descriptor, Int32(SHUT_WR))
            targetWriteShut = true
        }

        // Target to channel.
        if pendingToChannel == 0 && !targetClosed && watch.readable {
            toChannel.removeAll(keepingCapacity: true)
            toChannelOffset = 0
            let count = jump.reactor.readBuffer.withUnsafeMutableBytes { buffer in
                Glibc.read(descriptor, buffer.baseAddress, min(buffer.count, Self.chunk))
            }
            if count > 0 {
                toChannel.append(contentsOf: jump.reactor.readBuffer[0..<count])
                progressed = true
            } else if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                watch.readable = false
            } else {
                targetClosed = true
                progressed = true
            }
        }
        if pendingToChannel > 0 && !remoteClosed {
            let written = toChannel.withUnsafeBytes { bytes in
                bytes.baseAddress!.advanced(by: toChannelOffset).withMemoryRebound(
                    to: CChar.self, capacity: pendingToChannel
                ) { libssh2_channel_write_ex(channel, 0, $0, pendingToChannel) }
            }
            if written > 0 {
                toChannelOffset += written
                progressed = true
            } else if written == LibSSH2.eagain || written == Int(LIBSSH2_ERROR_BAD_USE) || written == 0 {
                // The window or the socket is full, or another tunnel's packet is half sent.
            } else if LibSSH2.isFatalTransportError(Int32(truncatingIfNeeded: written)) {
                return .sessionBroken(jump.brokenError(LibSSH2.lastError(session)))
            } else {
                // The far end closed the channel: what the target still sends goes nowhere.
                remoteClosed = true
                toChannel = []
                toChannelOffset = 0
            }
        } else if remoteClosed {
            toChannel = []
            toChannelOffset = 0
        }

        if targetClosed && (pendingToChannel == 0 || remoteClosed) {
            phase = .closing
            return .progressed
        }
        jump.reactor.update(
            watch, readable: pendingToChannel == 0 && !targetClosed, writable: pendingToTarget > 0 && !targetClosed)
        return progressed ? .progressed : .blocked
    }

    // MARK: - Closing

    private func close(_ session: OpaquePointer) -> Advance {
        closeDescriptor()
        if let channel {
            let result = libssh2_channel_free(channel)
            if result == LibSSH2.eagain || result == Int32(LIBSSH2_ERROR_BAD_USE) { return .blocked }
            if LibSSH2.isFatalTransportError(result) {
                self.channel = nil
                return .sessionBroken(jump.brokenError(LibSSH2.lastError(session)))
            }
            self.channel = nil
        }
        phase = .finished
        return .finished
    }

    private func closeDescriptor() {
        if let watch {
            jump.reactor.unwatch(watch)
            self.watch = nil
        }
        if descriptor >= 0 {
            Glibc.close(descriptor)
            descriptor = -1
        }
    }
}
