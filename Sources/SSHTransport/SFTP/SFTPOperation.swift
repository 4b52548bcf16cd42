import CLibSSH2
import Foundation
import ValueFormats

/// What one non-blocking attempt at an SFTP request achieved.
enum SFTPAttempt<Value> {
    /// libssh2 is waiting for the socket; call again with the same arguments.
    case again
    case done(Value)
    /// The request failed; the SFTP session is still usable.
    case failed(SSHError)
    /// The transport failed; the whole session must end.
    case broken(SSHError)
}

/// The session's SFTP state on its I/O thread, handed to SFTP request bodies.
final class SFTPContext {
    let session: OpaquePointer
    let sftp: OpaquePointer
    let displayName: String
    private var handles: [UInt64: OpaquePointer] = [:]
    private var nextHandle: UInt64 = 1

    init(session: OpaquePointer, sftp: OpaquePointer, displayName: String) {
        self.session = session
        self.sftp = sftp
        self.displayName = displayName
    }

    func register(_ handle: OpaquePointer) -> UInt64 {
        defer { nextHandle += 1 }
        handles[nextHandle] = handle
        return nextHandle
    }

    func handle(_ id: UInt64) -> OpaquePointer? { handles[id] }

    func forget(_ id: UInt64) { handles[id] = nil }

    /// Every open handle, for closing at shutdown.
    var openHandles: [OpaquePointer] { Array(handles.values) }

    /// Classifies the last libssh2 failure of an SFTP call on `path`.
    func failure<Value>(_ operation: String, _ path: RemotePath?) -> SFTPAttempt<Value> {
        let (code, message) = LibSSH2.lastError(session)
        if code == LibSSH2.eagain { return .again }
        if LibSSH2.isFatalTransportError(code) {
            return .broken(
                SSHError(
                    .sessionClosed, "\(displayName): the connection broke during SFTP \(operation) (\(message))",
                    libssh2Code: code))
        }
        let subject = path.map { " \($0)" } ?? ""
        if code == Int32(LIBSSH2_ERROR_SFTP_PROTOCOL) {
            let status = UInt32(truncatingIfNeeded: libssh2_sftp_last_error(sftp))
            return .failed(
                SSHError(
                    .sftp, "\(displayName): cannot \(operation)\(subject): \(SFTPStatus.describe(status))",
                    libssh2Code: code, sftpStatus: status))
        }
        return .failed(
            SSHError(.sftp, "\(displayName): cannot \(operation)\(subject): \(message)", libssh2Code: code))
    }
}

/// One SFTP request driven on the session's I/O thread.
///
/// libssh2 keeps the progress of some SFTP calls (stat, open, fstat…) in the SFTP session
/// rather than per request, so a call that returned EAGAIN must be repeated before any other
/// starts: the loop lets one SFTP operation at a time be active (``SessionLoop/claimSFTP(_:)``),
/// in submission order.
// @unchecked Sendable: `body` and `continuation` are used only on the session's I/O thread after
// submission (the inbox lock orders the hand-over); cancellation has its own lock.
final class SFTPOperation<Value: Sendable>: LoopOperation, @unchecked Sendable {
    let deadline: ContinuousClock.Instant?
    let wantsChannel = false
    let holdsChannel = false
    private unowned let loop: SessionLoop
    private let body: (SFTPContext) -> SFTPAttempt<Value>
    private var continuation: CheckedContinuation<Value, any Error>?
    private let cancellation = CancellationFlag()
    private let operationName: String
    private var started = false
    private var expired = false

    init(
        loop: SessionLoop, name: String, timeout: Duration, continuation: CheckedContinuation<Value, any Error>?,
        body: @escaping (SFTPContext) -> SFTPAttempt<Value>
    ) {
        self.loop = loop
        self.operationName = name
        self.deadline = .now + timeout
        self.continuation = continuation
        self.body = body
    }

    func requestCancel() { cancellation.set() }

    func hasQueuedData() -> Bool { started && loop.sftpHasQueuedData() }

    func expire() { expired = true }

    func abandon(_ error: SSHError) {
        loop.releaseSFTP(self)
        finish(.failure(error))
    }

    func advance(_ session: OpaquePointer) -> Advance {
        if !started && (cancellation.isSet || expired) {
            // Not yet sent: it can go without disturbing the SFTP session.
            finish(
                .failure(
                    cancellation.isSet
                        ? CancellationError()
                        : SSHError(.timeout, "\(loop.options.displayName): SFTP \(operationName) timed out")))
            return .finished
        }
        if started && expired {
            // libssh2 holds this request half done; no other SFTP call may run before it ends.
            return .sessionBroken(
                SSHError(
                    .timeout,
                    "\(loop.options.displayName): SFTP \(operationName) timed out; the session is closed and will be reopened"
                ))
        }
        guard loop.claimSFTP(self) else { return .blocked }
        let context: SFTPContext
        switch loop.sftpContext(session) {
        case .pending: return .blocked
        case .failed(let error):
            loop.releaseSFTP(self)
            finish(.failure(error))
            return .finished
        case .ready(let ready): context = ready
        }
        started = true
        switch body(context) {
        case .again:
            return .blocked
        case .done(let value):
            loop.releaseSFTP(self)
            finish(.success(value))
            return .finished
        case .failed(let error):
            loop.releaseSFTP(self)
            finish(.failure(error))
            return .finished
        case .broken(let error):
            return .sessionBroken(error)
        }
    }

    private func finish(_ result: Result<Value, any Error>) {
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume(with: result)
    }
}
