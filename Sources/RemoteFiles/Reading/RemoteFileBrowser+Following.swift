import SSHTransport
public import ValueFormats

/// How ``RemoteFileBrowser/follow(_:options:_:)`` follows a file.
public struct FollowOptions: Sendable {
    /// The last lines shown before following, as `tail -f` shows the last 10.
    public var lines = 10
    /// Most bytes of those lines shown (their end kept).
    public var maxInitialBytes = ReadOptions.defaultMaxBytes
    /// How often the file is looked at for new bytes (and for being replaced or truncated).
    public var interval = Duration.milliseconds(500)

    public init(lines: Int = 10, maxInitialBytes: Int = ReadOptions.defaultMaxBytes) {
        self.lines = lines
        self.maxInitialBytes = maxInitialBytes
    }
}

/// Why following a file ended (Ctrl-C ends it by cancelling the task, which throws `CancellationError`).
public enum FollowEnd: Sendable, Equatable {
    /// Another file now has the name (a log rotated by renaming, a file rewritten by renaming a new one over it).
    case replaced(RemotePath)
    /// The file shrank below what was already shown (truncated, or rewritten in place).
    case truncated(RemotePath, shown: UInt64, size: UInt64)
    /// The name no longer exists.
    case removed(RemotePath)

    /// One sentence saying what happened and what to do.
    public func message(host: String) -> String {
        switch self {
        case .replaced(let path):
            "\(host): \(path.escaped) was replaced by another file (rotated or rewritten); stopped following it: run the command again to follow the new one"
        case .truncated(let path, let shown, let size):
            "\(host): \(path.escaped) was truncated (to \(size) bytes, after \(shown) were shown); stopped following it: run the command again to follow it from its new end"
        case .removed(let path):
            "\(host): \(path.escaped) was removed; stopped following it"
        }
    }
}

extension RemoteFileBrowser {
    /// Shows the last lines of a regular file and then, as `tail -f` does, every byte appended to it, handing
    /// each piece to `output` as it arrives, until the file is replaced, truncated or removed (the return
    /// value says which) or the task is cancelled.
    ///
    /// The file is opened once, with the checks of every read (only a regular file, inside the root, the handle
    /// confirmed to be the file the path resolved to). Each look costs a few requests: the handle's attributes
    /// (the file grew or shrank), the name's resolution, and where the server's handle leads (on Linux hosts,
    /// its `/proc/self/fd`) or, where the server cannot tell, the name's attributes against the handle's.
    public func follow(
        _ path: RemotePath, options: FollowOptions = FollowOptions(), _ output: ([UInt8]) async throws -> Void
    ) async throws -> FollowEnd {
        try await traced("follow", path) { recorder in
            let (file, resolved, attributes) = try await openRegularFile(path)
            do {
                let end = try await follow(file, resolved, attributes: attributes, options: options, recorder, output)
                await file.close()
                return end
            } catch {
                await file.close()
                throw error
            }
        }
    }

    private func follow(
        _ file: SFTPFile, _ resolved: Resolved, attributes: SFTPAttributes, options: FollowOptions,
        _ recorder: SpanRecorder, _ output: ([UInt8]) async throws -> Void
    ) async throws -> FollowEnd {
        let display = resolved.display
        var offset = attributes.size ?? 0
        let reader = ChunkReader(file: file, browser: self, path: display, size: offset)
        let start = try await reader.readTail(lines: options.lines, limit: max(1, options.maxInitialBytes))
        if !start.bytes.isEmpty { try await output(start.bytes) }
        recorder.bytes = UInt64(start.bytes.count)
        // The canonical path the name led to when opened: the name leading anywhere else later means the file
        // was replaced.
        let canonical: RemotePath
        do {
            canonical = root == nil ? try await session.realpath(resolved.remote) : resolved.remote
        } catch {
            throw await explain(error, operation: "follow", path: display, remote: resolved.remote)
        }
        while true {
            try await Task.sleep(for: options.interval)
            let now: SFTPAttributes
            do {
                now = try await file.attributes()
            } catch {
                throw await explain(error, operation: "follow", path: display, remote: resolved.remote)
            }
            let size = now.size ?? offset
            if size < offset { return .truncated(display, shown: offset, size: size) }
            if size > offset {
                do {
                    try await file.seek(to: offset)
                    while offset < size {
                        let chunk = try await file.read(maxBytes: Int(min(256 * 1024, size - offset)))
                        if chunk.isEmpty { break }
                        offset += UInt64(chunk.count)
                        recorder.bytes += UInt64(chunk.count)
                        try await output(chunk)
                    }
                } catch let error as CancellationError {
                    throw error
                } catch {
                    throw await explain(error, operation: "follow", path: display, remote: resolved.remote)
                }
            }
            if let end = try await lookForReplacement(resolved, canonical: canonical, handle: now, file: file) {
                return end
            }
        }
    }

    /// Whether the name no longer leads to the open file: `nil` while it does.
    private func lookForReplacement(
        _ resolved: Resolved, canonical: RemotePath, handle: SFTPAttributes, file: SFTPFile
    ) async throws -> FollowEnd? {
        let display = resolved.display
        let now: RemotePath
        do {
            now = try await session.realpath(resolved.remote)
            _ = try await session.stat(now, followSymlinks: false)
        } catch let error as SSHError where error.code == .sftp && error.sftpStatus == SFTPStatus.noSuchFile {
            return .removed(display)
        } catch {
            throw await explain(error, operation: "follow", path: display, remote: resolved.remote)
        }
        guard now == canonical else { return .replaced(display) }
        switch await handles.confirm(canonical, on: session) {
        case .confirmed:
            return nil
        case .elsewhere:
            return .replaced(display)
        case .unavailable:
            // By attributes: the name's must be the handle's, unless the file changed between the two looks
            // (it is being written): then the next look decides.
            do {
                let named = try await session.stat(canonical, followSymlinks: false)
                if Self.sameFile(handle, named) && Self.sameFile(named, handle) { return nil }
                let again = try await file.attributes()
                let unchanged = again.size == handle.size && again.modificationTime == handle.modificationTime
                return unchanged ? .replaced(display) : nil
            } catch let error as SSHError where error.code == .sftp && error.sftpStatus == SFTPStatus.noSuchFile {
                return .removed(display)
            } catch {
                throw await explain(error, operation: "follow", path: display, remote: resolved.remote)
            }
        }
    }
}
