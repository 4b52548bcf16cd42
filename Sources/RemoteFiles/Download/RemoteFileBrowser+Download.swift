import Digests
import Foundation
import SSHTransport
public import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// How ``RemoteFileBrowser/download(_:to:options:)`` downloads.
public struct DownloadOptions: Sendable {
    /// Continue from a partial file left by an earlier attempt (after checking that its last
    /// bytes still match the remote file).
    public var resume = true
    /// Bytes asked for per SFTP read; libssh2 keeps several requests in flight for a large
    /// value, which is what makes a download fast over a link with latency.
    public var readSize = 2 << 20
    /// Compute the SHA-256 of the file (through OpenSSL: with SHA CPU extensions, under a tenth of the
    /// client CPU a download takes).
    public var checksum = true
    /// Called after each chunk (up to 4 MiB, or what arrived in a quarter second) with the bytes written
    /// so far and the file's size.
    public var progress: (@Sendable (_ done: UInt64, _ total: UInt64) -> Void)?

    public init(resume: Bool = true, checksum: Bool = true, progress: (@Sendable (UInt64, UInt64) -> Void)? = nil) {
        self.resume = resume
        self.checksum = checksum
        self.progress = progress
    }
}

/// A finished download.
public struct DownloadResult: Sendable, Equatable {
    public var remotePath: RemotePath
    /// Where the file now is, under its final name.
    public var localPath: String
    public var bytes: UInt64
    /// Bytes taken from a partial file of an earlier attempt (0 when it started afresh).
    public var resumedFrom: UInt64
    /// SHA-256 of the whole file as written; `nil` when the download was asked not to compute it.
    public var sha256: [UInt8]?

    public var sha256Hex: String? { sha256.map(SHA256.hex) }
}

extension RemoteFileBrowser {
    /// The name a download to `localPath` is written under until it is complete: a hidden file
    /// in the same directory, so the final rename is atomic and never crosses file systems.
    public static func partialPath(for localPath: String) -> String {
        let url = URL(fileURLWithPath: localPath)
        let directory = url.deletingLastPathComponent().path
        return (directory == "/" ? "" : directory) + "/." + url.lastPathComponent + ".hostscope-partial"
    }

    /// Downloads a regular file to `destination` (a file name, or a directory to put it in).
    ///
    /// The bytes go to ``partialPath(for:)`` and are renamed to the final name only when
    /// complete, so a failed download never leaves a partial file under the final name; a
    /// later call resumes from the partial file. The SHA-256 of the whole file is reported.
    /// A file that grows while it is read is downloaded as it was when opened, up to the size it
    /// had then.
    public func download(_ path: RemotePath, to destination: String, options: DownloadOptions = DownloadOptions())
        async throws -> DownloadResult
    {
        try await traced("get", path) { recorder in
            let (file, resolved, attributes) = try await openRegularFile(path)
            let finalPath = Self.finalLocalPath(destination, remoteName: resolved.display.lastComponent)
            do {
                let result = try await download(
                    file, resolved, attributes: attributes, to: finalPath, options: options, recorder: recorder)
                await file.close()
                return result
            } catch {
                await file.close()
                throw error
            }
        }
    }

    /// Downloads the regular file at `resolved` (an entry of a walk, checked again as it is opened) to exactly
    /// `finalPath`, as ``download(_:to:options:)`` does.
    func download(_ resolved: Resolved, to finalPath: String, options: DownloadOptions) async throws
        -> (DownloadResult, SFTPAttributes)
    {
        try await traced("get", resolved.display) { recorder in
            let (file, attributes) = try await openVerifiedFile(resolved, followFinalLink: false)
            do {
                let result = try await download(
                    file, resolved, attributes: attributes, to: finalPath, options: options, recorder: recorder)
                await file.close()
                return (result, attributes)
            } catch {
                await file.close()
                throw error
            }
        }
    }

    private func download(
        _ file: SFTPFile, _ resolved: Resolved, attributes: SFTPAttributes, to finalPath: String,
        options: DownloadOptions, recorder: SpanRecorder
    ) async throws -> DownloadResult {
        let size = attributes.size ?? 0
        let partialPath = Self.partialPath(for: finalPath)
        let local = LocalPartialFile(
            path: partialPath, finalPath: finalPath, host: host, mode: Self.localMode(remote: attributes.mode))
        let reader = ChunkReader(file: file, browser: self, path: resolved.display, size: size)

        var hasher = SHA256()
        var offset: UInt64 = 0
        if options.resume, let existing = local.existingSize(), existing > 0, existing <= size {
            // The partial file is reused only if its end still matches the remote bytes there;
            // otherwise the remote file changed since and the download starts over.
            let overlap = Int(min(existing, 64 * 1024))
            let remoteTail = try await reader.readExactly(at: existing - UInt64(overlap), count: overlap)
            if try local.readTail(count: overlap, endingAt: existing) == remoteTail {
                offset = existing
                if options.checksum { try local.hashPrefix(existing, into: &hasher) }
            }
        }
        let resumedFrom = offset
        try local.open(keeping: offset)
        do {
            try await file.seek(to: offset)
        } catch {
            local.closeKeeping()
            throw await explain(error, operation: "download", path: resolved.display, remote: resolved.remote)
        }

        let readSize = max(32 * 1024, options.readSize)
        // The session thread reads ahead into its own buffers while chunks are hashed and written.
        let stream = file.stream(readSize: readSize, chunkBytes: 2 * readSize)
        defer { stream.cancel() }
        do {
            while true {
                let chunk: SFTPReadChunk
                do {
                    guard let next = try await stream.next() else { break }
                    chunk = next
                } catch {
                    throw await explain(error, operation: "download", path: resolved.display, remote: resolved.remote)
                }
                // The file as it was when opened: one that grows while it is read (a log written
                // faster than it downloads) would otherwise never end.
                let kept = Int(min(UInt64(chunk.count), size - min(size, offset)))
                try chunk.withUnsafeBytes { whole in
                    let bytes = UnsafeRawBufferPointer(rebasing: whole[..<kept])
                    // Slices that fit in the core's cache: hashed, then written while still there.
                    var start = 0
                    while start < bytes.count {
                        let slice = UnsafeRawBufferPointer(
                            rebasing: bytes[start..<min(bytes.count, start + Self.sliceBytes)])
                        if options.checksum { hasher.update(slice.assumingMemoryBound(to: UInt8.self)) }
                        try local.write(slice)
                        start += slice.count
                    }
                }
                offset += UInt64(kept)
                recorder.bytes = offset - resumedFrom
                options.progress?(offset, size)
                if offset >= size { break }
            }
        } catch {
            // What was written stays for the next attempt, which resumes from it; an empty file is no use.
            local.closeKeeping()
            let partial = offset > 0 ? PartialDownload(path: partialPath, bytes: offset, size: size) : nil
            if partial == nil { local.discard() }
            let shown = resolved.display.escaped
            switch error {
            case let error as RemoteFilesError where error.code == .connectionLost || error.code == .timeout:
                throw RemoteFilesError(
                    error.code,
                    "\(host): the connection dropped while downloading \(shown) after \(offset) of \(size) bytes; \(finalPath) was not created",
                    partial: partial)
            case var error as RemoteFilesError:
                error.partial = partial
                throw error
            case is CancellationError:
                guard partial != nil else { throw error }
                throw RemoteFilesError(
                    .interrupted,
                    "the download of \(shown) from \(host) was interrupted after \(offset) of \(size) bytes; \(finalPath) was not created",
                    partial: partial)
            default:
                throw error
            }
        }
        if offset < size {
            local.discard()
            throw RemoteFilesError(
                .changedWhileReading,
                "\(host): \(resolved.display.escaped) shrank while it was downloaded (it had \(size) bytes, it ended at \(offset)); it is being rewritten or truncated: download it again"
            )
        }
        try local.commit()
        return DownloadResult(
            remotePath: resolved.display, localPath: finalPath, bytes: offset, resumedFrom: resumedFrom,
            sha256: options.checksum ? hasher.finalize() : nil)
    }

    /// How much of a chunk is hashed and written at a time.
    static let sliceBytes = 256 * 1024

    /// The mode a download is created with, as `sftp` creates it: the remote permission bits
    /// (without set-id and sticky bits) plus write for the owner, so that a later resume can
    /// write; `open` then takes the umask away. Without a remote mode, 0666 before the umask.
    static func localMode(remote: UInt32?) -> mode_t {
        guard let remote else { return 0o666 }
        return mode_t(remote & 0o777) | 0o200
    }

    /// `destination` itself, or `destination/name` when it is a directory (or ends with `/`).
    static func finalLocalPath(_ destination: String, remoteName: [UInt8]) -> String {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: destination, isDirectory: &isDirectory)
        guard destination.hasSuffix("/") || (exists && isDirectory.boolValue) else { return destination }
        // A name that is not UTF-8 is written in its escaped form: local tools can type it.
        let name = EscapedText.encode(remoteName)
        return (destination.hasSuffix("/") ? destination : destination + "/") + name
    }
}

/// The partial file of a download: written, then renamed to the final name on success.
final class LocalPartialFile {
    let path: String
    let finalPath: String
    let host: String
    /// The mode the file is created with (the umask applies); a partial file left with wider
    /// permissions by an earlier attempt is narrowed to it.
    let mode: mode_t
    private var descriptor: Int32 = -1
    /// The file's size so far, and how much of it has been handed to writeback.
    private var written: UInt64 = 0
    private var flushed: UInt64 = 0
    private static let writebackStep: UInt64 = 8 << 20
    /// Linux's `sync_file_range`, which Glibc's module map hides behind _GNU_SOURCE.
    private static let syncFileRange: (@convention(c) (Int32, off_t, off_t, UInt32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sync_file_range") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, off_t, off_t, UInt32) -> Int32).self)
    }()
    /// SYNC_FILE_RANGE_WRITE: start writeback of the range's dirty pages without waiting.
    private static let syncFileRangeWrite: UInt32 = 2

    init(path: String, finalPath: String, host: String, mode: mode_t) {
        self.path = path
        self.finalPath = finalPath
        self.host = host
        self.mode = mode
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// The size of a regular partial file left by an earlier attempt.
    func existingSize() -> UInt64? {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return UInt64(status.st_size)
    }

    func readTail(count: Int, endingAt end: UInt64) throws -> [UInt8] {
        let descriptor = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("read") }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(end) - off_t(count)) }
        guard read == count else { throw failure("read") }
        return bytes
    }

    func hashPrefix(_ length: UInt64, into hasher: inout SHA256) throws {
        let descriptor = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("read") }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var remaining = length
        while remaining > 0 {
            let want = Int(min(remaining, UInt64(buffer.count)))
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, want) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw failure("read") }
            buffer.withUnsafeBufferPointer { hasher.update(UnsafeBufferPointer(rebasing: $0[0..<count])) }
            remaining -= UInt64(count)
        }
    }

    /// Opens the partial file for writing after its first `keeping` bytes (0: a fresh file).
    func open(keeping: UInt64) throws {
        // O_NOFOLLOW: a link planted under the partial name must not redirect the write.
        let flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (keeping == 0 ? O_TRUNC : 0)
        descriptor = Glibc.open(path, flags, mode)
        guard descriptor >= 0 else { throw failure("create") }
        // An existing partial file keeps the mode it was created with: narrow it to this
        // download's (never widen it, which would undo the umask).
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw failure("write") }
        let current = status.st_mode & 0o7777
        if current & ~mode != 0 {
            guard fchmod(descriptor, current & mode) == 0 else { throw failure("write") }
        }
        guard ftruncate(descriptor, off_t(keeping)) == 0, lseek(descriptor, off_t(keeping), SEEK_SET) >= 0 else {
            throw failure("write")
        }
        written = keeping
        flushed = keeping
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw failure("write")
            }
            offset += written
        }
        written += UInt64(bytes.count)
        if written - flushed >= Self.writebackStep {
            // Start writing back what the download has so far, so that the `fsync` before the
            // rename waits for the last few megabytes only, not for the whole file.
            _ = Self.syncFileRange?(descriptor, off_t(flushed), off_t(written - flushed), Self.syncFileRangeWrite)
            flushed = written
        }
    }

    /// Flushes, closes and renames to the final name.
    func commit() throws {
        guard fsync(descriptor) == 0 else { throw failure("write") }
        close(descriptor)
        descriptor = -1
        guard rename(path, finalPath) == 0 else {
            let reason = String(cString: strerror(errno))
            throw RemoteFilesError(
                .localFile,
                "cannot rename the finished download \(path) to \(finalPath) (\(reason)); the complete file is kept under the first name"
            )
        }
    }

    /// Closes, keeping what was written for a later resume.
    func closeKeeping() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }

    /// Closes and removes the partial file (its content is no longer worth resuming from).
    func discard() {
        closeKeeping()
        unlink(path)
    }

    private func failure(_ operation: String) -> RemoteFilesError {
        let reason = String(cString: strerror(errno))
        return RemoteFilesError(
            .localFile,
            "cannot \(operation) \(path) while downloading from \(host) (\(reason)); check the destination directory's permissions and free space"
        )
    }
}
