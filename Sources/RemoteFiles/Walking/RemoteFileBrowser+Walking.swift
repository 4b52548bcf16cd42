import SSHTransport
public import ValueFormats

/// How a directory walk (tree, find, recursive grep) proceeds.
public struct WalkOptions: Sendable {
    /// How many levels below the start to enter (1: the start's own entries); `nil` for no limit.
    public var maxDepth: Int?
    /// Include names starting with a dot.
    public var includeHidden: Bool
    /// Enter directories reached through symbolic links; loops (a link back to a directory
    /// above it) are detected and reported instead of entered.
    public var followLinks: Bool

    public init(maxDepth: Int? = nil, includeHidden: Bool = true, followLinks: Bool = false) {
        self.maxDepth = maxDepth
        self.includeHidden = includeHidden
        self.followLinks = followLinks
    }
}

/// One step of a walk, in pre-order with each directory's entries sorted by name.
public enum WalkEvent: Sendable {
    /// An entry at `depth` (0 is the start); `descending` tells whether its entries follow.
    case entry(RemoteFileEntry, depth: Int, descending: Bool)
    /// The directory entered last at `depth` could not be read (or not entered): the walk goes on.
    case failed(RemoteFilesError, depth: Int)
}

extension RemoteFileBrowser {
    /// The tree below `path`, with per-directory errors inline.
    public func tree(_ path: RemotePath, options: WalkOptions = WalkOptions(includeHidden: false)) async throws
        -> RemoteFileTree
    {
        try await traced("tree", path) { recorder in
            var stack: [RemoteFileTree] = []
            var count = 0
            func fold(to depth: Int) {
                while stack.count > depth + 1 {
                    let child = stack.removeLast()
                    stack[stack.count - 1].children?.append(child)
                }
            }
            try await walk(path, options: options) { event in
                switch event {
                case .entry(let entry, let depth, let descending):
                    fold(to: depth - 1)
                    stack.append(RemoteFileTree(entry: entry, children: descending ? [] : nil))
                    count += 1
                case .failed(let error, let depth):
                    fold(to: depth)
                    stack[depth].children = nil
                    stack[depth].error = error
                }
            }
            fold(to: 0)
            recorder.entries = count
            return stack[0]
        }
    }

    /// Walks `path` depth-first, handing each entry to `visit`; unreadable directories and
    /// link loops are reported as ``WalkEvent/failed(_:depth:)`` and skipped.
    ///
    /// - Throws: when the start itself cannot be reached, or when `visit` throws.
    public func walk(
        _ path: RemotePath, options: WalkOptions, _ visit: (WalkEvent) async throws -> Void
    ) async throws {
        try await walkResolved(path, options: options) { event, _ in try await visit(event) }
    }

    /// ``walk(_:options:_:)`` that also hands over the path to ask the server for each entry.
    func walkResolved(
        _ path: RemotePath, options: WalkOptions, _ visit: (WalkEvent, RemotePath?) async throws -> Void
    ) async throws {
        let start = try await resolve(path, followFinalLink: true)
        let attributes: SFTPAttributes
        do {
            attributes = try await session.stat(start.remote)
        } catch {
            throw await explain(error, operation: "read", path: start.display, remote: path)
        }
        var entry = RemoteFileEntry(name: path.lastComponent, path: start.display, attributes: attributes)
        if path.bytes.isEmpty { entry.name = Array(".".utf8) }
        let descending = attributes.type == .directory && (options.maxDepth ?? 1) > 0
        try await visit(.entry(entry, depth: 0, descending: descending), start.remote)
        guard descending else { return }
        var ancestors: [RemotePath] = []
        var base = start
        if options.followLinks, let real = try? await session.realpath(start.remote) {
            // Walk from the canonical path so every directory below has a canonical path too,
            // which is what loop detection compares.
            ancestors.append(real)
            base.remote = real
        }
        try await walkDirectory(base, seen: attributes, depth: 0, ancestors: ancestors, options: options, visit)
    }

    /// Lists `directory` by its resolved path and walks its entries; each child's path is that
    /// resolved path plus the child's name, and each child is checked again when it is opened
    /// or entered (the listing only says what to try).
    private func walkDirectory(
        _ directory: Resolved, seen: SFTPAttributes?, depth: Int, ancestors: [RemotePath], options: WalkOptions,
        _ visit: (WalkEvent, RemotePath?) async throws -> Void
    ) async throws {
        var entries: [RemoteFileEntry] = []
        var listing = ListOptions(includeHidden: options.includeHidden, readLinkTargets: true, sorted: true)
        listing.sortMemoryLimit = Int.max
        var summary = ListSummary()
        do {
            try await listDirectory(directory, seen: seen, options: listing, summary: &summary) { entries += $0 }
        } catch let error as RemoteFilesError where error.code != .connectionLost && error.code != .timeout {
            try await visit(.failed(error, depth: depth), nil)
            return
        }
        let childDepth = depth + 1
        let mayDescend = options.maxDepth.map { childDepth < $0 } ?? true
        for entry in entries {
            let remote = directory.remote.appending(entry.name)
            switch entry.type {
            case .dir where mayDescend:
                try await visit(.entry(entry, depth: childDepth, descending: true), remote)
                var chain = ancestors
                if options.followLinks { chain.append(remote) }
                try await walkDirectory(
                    Resolved(display: entry.path, remote: remote), seen: Self.directoryAttributes(entry),
                    depth: childDepth, ancestors: chain, options: options, visit)
            case .symlink where options.followLinks && mayDescend:
                switch await followedDirectory(entry, remote: remote, ancestors: ancestors) {
                case .notADirectory:
                    try await visit(.entry(entry, depth: childDepth, descending: false), remote)
                case .failed(let error):
                    try await visit(.entry(entry, depth: childDepth, descending: true), remote)
                    try await visit(.failed(error, depth: childDepth), nil)
                case .directory(let real, let attributes):
                    try await visit(.entry(entry, depth: childDepth, descending: true), real)
                    try await walkDirectory(
                        Resolved(display: entry.path, remote: real), seen: attributes, depth: childDepth,
                        ancestors: ancestors + [real], options: options, visit)
                }
            default:
                try await visit(.entry(entry, depth: childDepth, descending: false), remote)
            }
        }
    }

    /// What a listing said about a directory entry, as attributes to compare with later.
    private static func directoryAttributes(_ entry: RemoteFileEntry) -> SFTPAttributes {
        SFTPAttributes(uid: entry.uid, gid: entry.gid, permissions: entry.mode.map { 0o040000 | $0 })
    }

    private enum LinkDestination {
        case notADirectory
        case directory(RemotePath, SFTPAttributes)
        case failed(RemoteFilesError)
    }

    /// Where a link found during a walk leads, and whether entering it is allowed.
    private func followedDirectory(_ entry: RemoteFileEntry, remote: RemotePath, ancestors: [RemotePath]) async
        -> LinkDestination
    {
        let attributes: SFTPAttributes
        do {
            attributes = try await session.stat(remote)
        } catch {
            let explained = await explain(error, operation: "follow", path: entry.path, remote: remote)
            // A link to nowhere is listed as a link; only a loop is worth an error.
            if let explained = explained as? RemoteFilesError, explained.code == .symlinkLoop {
                return .failed(explained)
            }
            return .notADirectory
        }
        guard attributes.type == .directory else { return .notADirectory }
        guard let real = try? await session.realpath(remote) else { return .notADirectory }
        let canonical = real
        if let root, !canonical.isWithin(root) {
            return .failed(outsideRoot(entry.path, resolved: canonical))
        }
        if ancestors.contains(canonical) {
            return .failed(
                RemoteFilesError(
                    .symlinkLoop,
                    "\(host): \(entry.path.escaped) is a symbolic link loop: it leads back to \(canonical.escaped), a directory above it; not entered",
                    sftpStatus: 21))
        }
        return .directory(canonical, attributes)
    }
}
