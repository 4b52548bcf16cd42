import CLibSSH2
import Synchronization
public import ValueFormats

// Read-only SFTP. The module exposes no call that writes, renames, removes, changes attributes
// or creates anything on the host: files are opened with LIBSSH2_FXF_READ only, and the
// libssh2 functions that modify (write, rename, unlink, mkdir, rmdir, setstat, symlink
// creation) are not called anywhere in it.

extension SSHSession {
    /// Attributes of `path`; `followSymlinks: false` describes a link itself (lstat).
    public func stat(_ path: RemotePath, followSymlinks: Bool = true, timeout: Duration = .seconds(30)) async throws
        -> SFTPAttributes
    {
        try await sftp(followSymlinks ? "stat" : "lstat", timeout) { context in
            var attributes = LIBSSH2_SFTP_ATTRIBUTES()
            let kind = followSymlinks ? Int32(LIBSSH2_SFTP_STAT) : Int32(LIBSSH2_SFTP_LSTAT)
            let result = path.withCPath { pointer, length in
                libssh2_sftp_stat_ex(context.sftp, pointer, length, kind, &attributes)
            }
            return result == 0 ? .done(SFTPAttributes(attributes)) : context.failure("stat", path)
        }
    }

    /// The canonical absolute path the server resolves `path` to (symlinks and `..` resolved).
    public func realpath(_ path: RemotePath, timeout: Duration = .seconds(30)) async throws -> RemotePath {
        try await resolveLink(path, kind: Int32(LIBSSH2_SFTP_REALPATH), operation: "resolve", timeout: timeout)
    }

    /// The target of the symbolic link at `path`, as stored in the link.
    public func readlink(_ path: RemotePath, timeout: Duration = .seconds(30)) async throws -> RemotePath {
        try await resolveLink(path, kind: Int32(LIBSSH2_SFTP_READLINK), operation: "read link", timeout: timeout)
    }

    /// Opens a directory for listing.
    public func openDirectory(_ path: RemotePath, timeout: Duration = .seconds(30)) async throws -> SFTPDirectory {
        let id = try await open(path, type: Int32(LIBSSH2_SFTP_OPENDIR), operation: "open directory", timeout: timeout)
        return SFTPDirectory(session: self, id: id, path: path)
    }

    /// Opens a file for reading (the only mode this module opens files in).
    public func openFile(_ path: RemotePath, timeout: Duration = .seconds(30)) async throws -> SFTPFile {
        let id = try await open(path, type: Int32(LIBSSH2_SFTP_OPENFILE), operation: "open", timeout: timeout)
        return SFTPFile(session: self, id: id, path: path)
    }

    private func resolveLink(_ path: RemotePath, kind: Int32, operation: String, timeout: Duration) async throws
        -> RemotePath
    {
        try await sftp(operation, timeout) { context in
            var target = [CChar](repeating: 0, count: 4097)
            let length = path.withCPath { pointer, count in
                libssh2_sftp_symlink_ex(context.sftp, pointer, count, &target, UInt32(target.count - 1), kind)
            }
            guard length >= 0 else { return context.failure(operation, path) }
            return .done(RemotePath(bytes: target[0..<Int(length)].map { UInt8(bitPattern: $0) }))
        }
    }

    private func open(_ path: RemotePath, type: Int32, operation: String, timeout: Duration) async throws -> UInt64 {
        try await sftp(operation, timeout) { context in
            let handle = path.withCPath { pointer, length in
                libssh2_sftp_open_ex(context.sftp, pointer, length, UInt(LIBSSH2_FXF_READ), 0, type)
            }
            guard let handle else { return context.failure(operation, path) }
            return .done(context.register(handle))
        }
    }

    /// Runs one SFTP request on the session's thread.
    func sftp<Value: Sendable>(
        _ name: String, _ timeout: Duration, _ body: @escaping (SFTPContext) -> SFTPAttempt<Value>
    ) async throws -> Value {
        let box = OperationBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let operation = SFTPOperation(
                    loop: loop, name: name, timeout: timeout, continuation: continuation, body: body)
                box.set(operation)
                loop.submit(operation)
            }
        } onCancel: {
            box.cancel()
            loop.wake()
        }
    }

    /// Closes a handle and waits for the server's answer; a failure to close is not worth
    /// reporting (the handle goes with the session at the latest).
    ///
    /// In a cancelled task (a grep or read given up on closes the file it was reading) the close is
    /// still sent, without waiting: a cancelled request never starts, and the handle would stay open
    /// on the server for as long as the session lives.
    func closeHandle(_ id: UInt64) async {
        guard !Task.isCancelled else { return closeHandleInBackground(id) }
        do {
            try await sftp("close", .seconds(30), Self.closeBody(id))
        } catch is CancellationError {
            closeHandleInBackground(id)
        } catch {}
    }

    /// Closes a handle without waiting (from `deinit` of a handle object).
    func closeHandleInBackground(_ id: UInt64) {
        loop.submit(
            SFTPOperation<Void>(
                loop: loop, name: "close", timeout: .seconds(30), continuation: nil, body: Self.closeBody(id)))
    }

    private static func closeBody(_ id: UInt64) -> (SFTPContext) -> SFTPAttempt<Void> {
        { context in
            guard let handle = context.handle(id) else { return .done(()) }
            if libssh2_sftp_close_handle(handle) == LibSSH2.eagain { return .again }
            context.forget(id)
            return .done(())
        }
    }
}

/// An open remote directory. Read it with ``next(maxEntries:timeout:)`` until it returns no
/// entries; close it with ``close()`` (dropping it closes it in the background).
public final class SFTPDirectory: Sendable {
    public let path: RemotePath
    let session: SSHSession
    let id: UInt64
    private let closed = Lock(false)

    init(session: SSHSession, id: UInt64, path: RemotePath) {
        self.session = session
        self.id = id
        self.path = path
    }

    deinit {
        if !closed.withLock({ $0 }) { session.closeHandleInBackground(id) }
    }

    /// Up to `maxEntries` further entries (`.` and `..` included, as the server sends them);
    /// empty at the end of the directory.
    public func next(maxEntries: Int = 512, timeout: Duration = .seconds(30)) async throws -> [SFTPDirectoryEntry] {
        let id = id
        let path = path
        final class Batch { var entries: [SFTPDirectoryEntry] = [] }
        let batch = Batch()
        return try await session.sftp("list", timeout) { context in
            guard let handle = context.handle(id) else {
                return .failed(SSHError(.sftp, "\(context.displayName): directory \(path) is already closed"))
            }
            var name = [CChar](repeating: 0, count: 4096)
            var long = [CChar](repeating: 0, count: 4096)
            while batch.entries.count < maxEntries {
                var attributes = LIBSSH2_SFTP_ATTRIBUTES()
                let length = libssh2_sftp_readdir_ex(handle, &name, name.count, &long, long.count, &attributes)
                if length == 0 { break }
                if length < 0 {
                    let outcome: SFTPAttempt<[SFTPDirectoryEntry]> = context.failure("list", path)
                    if case .again = outcome { return .again }
                    // End of directory may also be reported as an EOF status.
                    if case .failed(let error) = outcome, error.sftpStatus == SFTPStatus.endOfFile { break }
                    return outcome
                }
                let nameBytes = name[0..<Int(length)].map { UInt8(bitPattern: $0) }
                let longName = long.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                batch.entries.append(
                    SFTPDirectoryEntry(
                        name: nameBytes, longName: longName.isEmpty ? nil : longName,
                        attributes: SFTPAttributes(attributes)))
            }
            defer { batch.entries = [] }
            return .done(batch.entries)
        }
    }

    /// Closes the directory handle on the server.
    public func close() async {
        guard
            closed.withLock({ state in
                defer { state = true }; return !state
            })
        else { return }
        await session.closeHandle(id)
    }
}

/// A remote file open for reading. Close it with ``close()`` (dropping it closes it in the
/// background).
public final class SFTPFile: Sendable {
    public let path: RemotePath
    let session: SSHSession
    let id: UInt64
    private let closed = Lock(false)
    /// Kept between reads: a download makes hundreds of them, each usually returning much less
    /// than it asked for, and a fresh zeroed buffer per read cost more than the copy.
    private let readBuffer = SFTPReadBuffer()

    init(session: SSHSession, id: UInt64, path: RemotePath) {
        self.session = session
        self.id = id
        self.path = path
    }

    deinit {
        if !closed.withLock({ $0 }) { session.closeHandleInBackground(id) }
    }

    /// Up to `maxBytes` from the current position; empty at the end of the file.
    ///
    /// libssh2 keeps several read requests in flight for a large `maxBytes` (up to four
    /// times it), which is what makes a download fast over a link with latency.
    public func read(maxBytes: Int = 1 << 20, timeout: Duration = .seconds(60)) async throws -> [UInt8] {
        let id = id
        let path = path
        let buffer = readBuffer
        return try await session.sftp("read", timeout) { context in
            guard let handle = context.handle(id) else {
                return .failed(SSHError(.sftp, "\(context.displayName): file \(path) is already closed"))
            }
            let storage = buffer.storage(count: max(1, maxBytes))
            let count = libssh2_sftp_read(handle, storage, max(1, maxBytes))
            if count < 0 { return context.failure("read", path) }
            // libssh2 often returns far less than asked (what has arrived so far): copy only that.
            return .done(
                [UInt8](unsafeUninitializedCapacity: count) { bytes, initialized in
                    if count > 0 {
                        bytes.baseAddress!.update(
                            from: UnsafeRawPointer(storage).assumingMemoryBound(to: UInt8.self), count: count)
                    }
                    initialized = count
                })
        }
    }

    /// Moves the read position to `offset` bytes from the start.
    public func seek(to offset: UInt64) async throws {
        let id = id
        try await session.sftp("seek", .seconds(30)) { context -> SFTPAttempt<Void> in
            guard let handle = context.handle(id) else { return .done(()) }
            libssh2_sftp_seek64(handle, offset)
            return .done(())
        }
    }

    /// The attributes of the open file (fstat): size and times as of now, even if the path
    /// has since been replaced.
    public func attributes(timeout: Duration = .seconds(30)) async throws -> SFTPAttributes {
        let id = id
        let path = path
        return try await session.sftp("stat", timeout) { context in
            guard let handle = context.handle(id) else {
                return .failed(SSHError(.sftp, "\(context.displayName): file \(path) is already closed"))
            }
            var attributes = LIBSSH2_SFTP_ATTRIBUTES()
            if libssh2_sftp_fstat_ex(handle, &attributes, 0) == 0 { return .done(SFTPAttributes(attributes)) }
            return context.failure("stat", path)
        }
    }

    /// Closes the file handle on the server.
    public func close() async {
        guard
            closed.withLock({ state in
                defer { state = true }; return !state
            })
        else { return }
        await session.closeHandle(id)
    }
}

extension SFTPAttributes {
    init(_ raw: LIBSSH2_SFTP_ATTRIBUTES) {
        let flags = UInt(raw.flags)
        self.init(
            size: flags & UInt(LIBSSH2_SFTP_ATTR_SIZE) != 0 ? raw.filesize : nil,
            uid: flags & UInt(LIBSSH2_SFTP_ATTR_UIDGID) != 0 ? UInt32(truncatingIfNeeded: raw.uid) : nil,
            gid: flags & UInt(LIBSSH2_SFTP_ATTR_UIDGID) != 0 ? UInt32(truncatingIfNeeded: raw.gid) : nil,
            permissions: flags & UInt(LIBSSH2_SFTP_ATTR_PERMISSIONS) != 0
                ? UInt32(truncatingIfNeeded: raw.permissions) : nil,
            accessTime: flags & UInt(LIBSSH2_SFTP_ATTR_ACMODTIME) != 0 ? UInt32(truncatingIfNeeded: raw.atime) : nil,
            modificationTime: flags & UInt(LIBSSH2_SFTP_ATTR_ACMODTIME) != 0
                ? UInt32(truncatingIfNeeded: raw.mtime) : nil)
    }
}

extension RemotePath {
    /// Calls `body` with the path as a C string pointer and its length (paths may contain any
    /// byte but NUL, and the length, not a terminator, tells libssh2 where they end).
    func withCPath<Result>(_ body: (UnsafePointer<CChar>, UInt32) -> Result) -> Result {
        let terminated = bytes + [0]
        return terminated.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                body(chars.baseAddress!, UInt32(bytes.count))
            }
        }
    }
}

/// A read buffer reused across the reads of one file.
// @unchecked Sendable: `storage(count:)` is called only from SFTP request bodies, which run one
// at a time on the session's I/O thread.
final class SFTPReadBuffer: @unchecked Sendable {
    private var pointer: UnsafeMutablePointer<CChar>?
    private var capacity = 0

    deinit {
        pointer?.deallocate()
    }

    /// Storage for at least `count` bytes (its contents are undefined).
    func storage(count: Int) -> UnsafeMutablePointer<CChar> {
        if let pointer, capacity >= count { return pointer }
        pointer?.deallocate()
        let fresh = UnsafeMutablePointer<CChar>.allocate(capacity: count)
        pointer = fresh
        capacity = count
        return fresh
    }
}
