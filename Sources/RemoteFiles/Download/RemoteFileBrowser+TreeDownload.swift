import Foundation
import SSHTransport
public import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// What ``RemoteFileBrowser/downloadTree(_:to:options:_:)`` did with one entry of the tree, as it goes.
public enum TreeDownloadEvent: Sendable {
    /// A file is about to be downloaded to `local` (`size` bytes): a progress line can start.
    case starting(RemotePath, local: String, size: UInt64)
    /// A file was downloaded (or resumed and finished).
    case downloaded(DownloadResult)
    /// A file already complete under its local name (same size and modification time) was left as it is.
    case unchanged(RemotePath, local: String, bytes: UInt64)
    /// A symbolic link that leads to a place inside the tree, made again locally as a relative link there.
    case linked(RemotePath, local: String, target: String)
    /// An entry not copied: a link that leads out of the tree (or nowhere), or something that is not a regular
    /// file, directory or link (a FIFO, device or socket).
    case skipped(RemotePath, reason: String)
}

/// What a tree download did.
public struct TreeDownloadSummary: Sendable, Equatable {
    /// The local directory the tree went to.
    public var localRoot = ""
    public var directories = 0
    /// Files downloaded in this run, and their bytes (resumed files count whole).
    public var downloaded = 0
    public var bytes: UInt64 = 0
    /// Files that were already complete locally.
    public var unchanged = 0
    public var links = 0
    public var skipped = 0
    /// Directories and files that could not be read or written; the rest of the tree was still copied.
    public var problems: [RemoteFilesError] = []
}

extension RemoteFileBrowser {
    /// Downloads the directory tree at `path` into `destination`, read-only on the host: as `rsync -r` places it,
    /// under the tree's own name in `destination` (created when missing), or, when `path` ends with a slash, its
    /// contents into `destination` itself.
    ///
    /// - Every regular file is downloaded as ``download(_:to:options:)`` downloads one: under a partial name
    ///   until complete, resumed from it by the next run; a file whose local copy already has the remote size and
    ///   modification time is left as it is, so running the same command again resumes the whole tree.
    ///   Downloaded files get the remote modification time.
    /// - Symbolic links are never followed: a link whose target (resolved on the server) lies inside the tree is
    ///   made again as a relative link to the same place in the copy; one that leads out of the tree (or of
    ///   `--root`), nowhere, or round in a loop is skipped and reported, as are FIFOs, devices and sockets.
    /// - Each entry is checked again as it is opened or entered, as every walk does; a directory or file that
    ///   cannot be read is a problem in the summary and the rest goes on. A lost connection or a cancelled task
    ///   stops the download, the file in flight keeping its partial bytes.
    /// - Nothing is written outside the local copy: directories met on the way must be real directories (never
    ///   a link left by someone), and files are written through the partial name with `O_NOFOLLOW`.
    public func downloadTree(
        _ path: RemotePath, to destination: String, options: DownloadOptions = DownloadOptions(),
        _ event: (TreeDownloadEvent) async throws -> Void
    ) async throws -> TreeDownloadSummary {
        try await traced("get_tree", path) { recorder in
            var summary = TreeDownloadSummary()
            let start = try await resolve(path, followFinalLink: true)
            let treeRoot: RemotePath
            do {
                treeRoot = root == nil ? try await session.realpath(start.remote) : start.remote
            } catch {
                throw await explain(error, operation: "download", path: start.display, remote: start.remote)
            }
            var name = start.display.lastComponent
            if name == Array(".".utf8) || name == Array("..".utf8) || name == [UInt8(ascii: "/")] {
                name = treeRoot.lastComponent
            }
            // As rsync places it: under its own name in the destination, or, for a path ending in a slash, its
            // contents into the destination itself. Either way the same command writes to the same place again,
            // which is what lets it resume.
            let contentsOnly = path.bytes.count > 1 && path.bytes.last == UInt8(ascii: "/")
            let parent = destination.hasSuffix("/") ? String(destination.dropLast()) : destination
            summary.localRoot =
                contentsOnly ? destination : (parent.isEmpty ? "/" : parent) + "/" + EscapedText.encode(name)
            if !contentsOnly { try Self.makeDestination(parent.isEmpty ? "/" : parent, host: host) }
            // The local directory of each directory being walked, by depth.
            var directories: [String] = []
            // The remote directory whose subtree could not be created locally: skipped until the walk leaves it.
            var blockedDepth: Int?
            try await walkResolved(path, options: WalkOptions(includeHidden: true, followLinks: false)) {
                step, remote in
                switch step {
                case .failed(let error, _):
                    summary.problems.append(error)
                case .entry(let entry, let depth, let descending):
                    if let blocked = blockedDepth {
                        if depth > blocked { return }
                        blockedDepth = nil
                    }
                    if depth == 0, entry.type != .dir, entry.type != .file {
                        throw RemoteFilesError(
                            .notAFile,
                            "\(host): \(entry.path.escaped) is a \(Self.kind(entry.detailedType)), neither a directory nor a regular file; nothing to download"
                        )
                    }
                    directories.removeSubrange(min(depth, directories.count)...)
                    let local = depth == 0 ? summary.localRoot : directories[depth - 1] + "/" + entry.escapedName
                    switch entry.type {
                    case .dir:
                        do {
                            if depth == 0 && contentsOnly {
                                // The destination the user named: a link to a directory is theirs to use.
                                try Self.makeDestination(local, host: host)
                            } else {
                                try Self.makeLocalDirectory(local, mode: entry.mode, host: host)
                            }
                        } catch let error as RemoteFilesError {
                            summary.problems.append(error)
                            blockedDepth = depth
                            return
                        }
                        summary.directories += 1
                        if descending { directories.append(local) }
                    case .file:
                        guard let remote else { return }
                        let resolved = Resolved(display: entry.path, remote: remote)
                        do {
                            try await copyFile(resolved, entry: entry, to: local, options: options, &summary, event)
                        } catch let error as RemoteFilesError
                            where error.code != .connectionLost && error.code != .timeout
                            && error.code != .interrupted && error.partial == nil
                        {
                            summary.problems.append(error)
                        }
                    case .symlink:
                        guard let remote else { return }
                        let relative = Array(entry.path.components.suffix(depth))
                        try await copyLink(
                            entry, remote: remote, relative: relative, treeRoot: treeRoot, to: local, &summary, event)
                    case .other:
                        summary.skipped += 1
                        try await event(
                            .skipped(entry.path, reason: "a \(Self.kind(entry.detailedType)), not a regular file"))
                    }
                }
            }
            recorder.bytes = summary.bytes
            recorder.entries = summary.downloaded + summary.unchanged
            return summary
        }
    }

    private func copyFile(
        _ resolved: Resolved, entry: RemoteFileEntry, to local: String, options: DownloadOptions,
        _ summary: inout TreeDownloadSummary, _ event: (TreeDownloadEvent) async throws -> Void
    ) async throws {
        if let size = entry.size, let time = entry.modificationTime, Self.isComplete(local, size: size, time: time) {
            summary.unchanged += 1
            try await event(.unchanged(entry.path, local: local, bytes: size))
            return
        }
        try await event(.starting(entry.path, local: local, size: entry.size ?? 0))
        let (result, attributes) = try await download(resolved, to: local, options: options)
        if let time = attributes.modificationTime { Self.setModificationTime(local, time) }
        summary.downloaded += 1
        summary.bytes += result.bytes
        try await event(.downloaded(result))
    }

    /// Makes the link `entry` again inside the local copy when its target lies inside the tree.
    private func copyLink(
        _ entry: RemoteFileEntry, remote: RemotePath, relative: [[UInt8]], treeRoot: RemotePath, to local: String,
        _ summary: inout TreeDownloadSummary, _ event: (TreeDownloadEvent) async throws -> Void
    ) async throws {
        let stored = entry.linkTarget.map(EscapedText.encode) ?? "?"
        func skip(_ reason: String) async throws {
            summary.skipped += 1
            try await event(.skipped(entry.path, reason: reason))
        }
        let target: RemotePath
        do {
            target = try await session.realpath(remote)
            _ = try await session.stat(target, followSymlinks: false)
        } catch let error as SSHError where error.code == .sftp {
            return try await skip("a symbolic link to \(stored), which leads nowhere (or round in a loop)")
        } catch {
            throw await explain(error, operation: "download", path: entry.path, remote: remote)
        }
        guard target.isWithin(treeRoot), root.map(target.isWithin) ?? true else {
            return try await skip("a symbolic link to \(stored), which leads out of the tree (to \(target.escaped))")
        }
        // From the link's directory up to the top of the copy, then down to the target's place in it.
        let up = Array(repeating: "..", count: relative.count - 1)
        let down = target.components.dropFirst(treeRoot.components.count).map(EscapedText.encode)
        let text = (up + down).joined(separator: "/")
        let linkText = text.isEmpty ? "." : text
        do {
            try Self.makeLocalLink(local, target: linkText, host: host)
        } catch let error as RemoteFilesError {
            summary.problems.append(error)
            return
        }
        summary.links += 1
        try await event(.linked(entry.path, local: local, target: linkText))
    }

    /// A file type in words (`character device`).
    static func kind(_ type: SFTPFileType) -> String {
        switch type {
        case .characterDevice: "character device"
        case .blockDevice: "block device"
        case .unknown: "file of unknown type"
        default: type.rawValue
        }
    }

    /// Whether `local` is a regular file of `size` bytes modified at `time`: a copy an earlier run finished.
    static func isComplete(_ local: String, size: UInt64, time: UInt32) -> Bool {
        var status = Glibc.stat()
        guard lstat(local, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return false }
        return UInt64(status.st_size) == size && Int(status.st_mtim.tv_sec) == Int(time)
    }

    /// Gives a finished copy the remote modification time (for the next run's check), its access time now.
    static func setModificationTime(_ local: String, _ time: UInt32) {
        // UTIME_NOW, a C macro Swift does not import: ((1 << 30) - 1).
        let now = (1 << 30) - 1
        var times = [timespec(tv_sec: 0, tv_nsec: now), timespec(tv_sec: Int(time), tv_nsec: 0)]
        _ = utimensat(AT_FDCWD, local, &times, AT_SYMLINK_NOFOLLOW)
    }

    /// Creates the directory `local` (its owner may always enter and write it, so that a later run can resume),
    /// or checks that what is there is a real directory: never a link, which would take the copy elsewhere.
    static func makeLocalDirectory(_ local: String, mode: UInt32?, host: String) throws {
        let permissions = mode_t((mode ?? 0o755) & 0o777) | 0o700
        if mkdir(local, permissions) == 0 { return }
        let reason = errno
        var status = Glibc.stat()
        if reason == EEXIST, lstat(local, &status) == 0 {
            if status.st_mode & S_IFMT == S_IFDIR { return }
            throw RemoteFilesError(
                .localFile,
                "cannot copy a directory from \(host) to \(local): something that is not a directory is there (a file or a symbolic link); move it away or pick another destination"
            )
        }
        throw RemoteFilesError(
            .localFile,
            "cannot create \(local) while downloading from \(host) (\(String(cString: strerror(reason)))); check the destination directory's permissions and free space"
        )
    }

    /// Creates the destination the user named, and the directories above it, as `mkdir -p` does; it may be a
    /// link to a directory (the user's own choice), but must lead to one.
    static func makeDestination(_ local: String, host: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: local, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw RemoteFilesError(
                    .localFile,
                    "cannot download a directory tree from \(host) into \(local): it is not a directory; name a directory (it is created when missing)"
                )
            }
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: local, withIntermediateDirectories: true)
        } catch {
            throw RemoteFilesError(
                .localFile,
                "cannot create \(local) while downloading from \(host) (\(error.localizedDescription)); check the path and its permissions"
            )
        }
    }

    /// Makes `local` a symbolic link to `target`, replacing a link an earlier run left, never anything else.
    static func makeLocalLink(_ local: String, target: String, host: String) throws {
        var status = Glibc.stat()
        if lstat(local, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFLNK else {
                throw RemoteFilesError(
                    .localFile,
                    "cannot make the link \(local) while downloading from \(host): a file or directory is there; move it away or pick another destination"
                )
            }
            unlink(local)
        }
        guard symlink(target, local) == 0 else {
            throw RemoteFilesError(
                .localFile,
                "cannot make the link \(local) while downloading from \(host) (\(String(cString: strerror(errno)))); check the destination directory's permissions"
            )
        }
    }
}
