public import RemoteFiles
public import ValueFormats

/// One page of a directory's entries, in byte order.
public struct FileListPage: Sendable {
    /// The path listed, as asked for.
    public var path: RemotePath
    /// Whether the path is a directory (else the page holds the path's own entry).
    public var isDirectory: Bool
    public var entries: [RemoteFileEntry]
    /// Entries in the whole directory.
    public var total: Int
    /// Where the page starts.
    public var offset: Int
}

/// Which part of a file a preview shows.
public enum PreviewPart: Sendable, Equatable {
    /// The whole file when it fits in a preview, else its last lines.
    case automatic
    /// The last lines.
    case tail(lines: Int)
    /// The lines around a line (1-based), as a search result links to it, wherever it lies in the file.
    case around(line: Int)
}

/// A preview and where its lines stand in the file.
public struct ServedPreview: Sendable {
    public var preview: FilePreview
    /// The number of the first line shown, when the preview starts at a known line (not for a tail).
    public var firstLine: Int?
}

/// What a grep or a find gathered, bounded.
public struct ServedSearch<Item: Sendable>: Sendable {
    public var items: [Item]
    /// Whether the search ran to its end (else it stopped at the limit).
    public var complete: Bool
    /// Files searched, matched, binary skipped (grep only).
    public var summary: GrepSummary?
    /// Directories or files that could not be read, as sentences.
    public var problems: [String]
}

extension ServedFiles {
    /// Lines kept on each side of a line a link names.
    public static let contextLines = 100
    /// The last lines shown of a file too large to show whole.
    public static let tailLines = 1000
    /// The most bytes of one matching line.
    static let lineBytes = 2048

    /// Entries `offset..<offset+limit` of the directory at `path` (sorted in bounded memory however large it is).
    public func list(_ host: ResolvedHost, path: String, offset: Int, limit: Int) async throws -> FileListPage {
        let limit = min(max(1, limit), limits.entries)
        return try await withTimeLimit("\(host.displayName): listing \(path)") {
            try await self.with(host, path: path) { browser, path in
                var page = FileListPage(path: path, isDirectory: false, entries: [], total: 0, offset: offset)
                var options = ListOptions(includeHidden: true, readLinkTargets: true)
                options.batchSize = 500
                let summary = try await browser.list(path, options: options) { batch in
                    let start = page.total
                    page.total += batch.count
                    let from = max(offset, start)
                    let to = min(offset + limit, page.total)
                    if from < to { page.entries += batch[(from - start)..<(to - start)] }
                }
                page.isDirectory = summary.isDirectory
                return page
            }
        }
    }

    /// The entry of `path` itself (a link described as a link).
    public func stat(_ host: ResolvedHost, path: String) async throws -> RemoteFileEntry {
        try await withTimeLimit("\(host.displayName): stat of \(path)") {
            try await self.with(host, path: path) { browser, path in try await browser.stat(path) }
        }
    }

    /// A preview of a regular file, at most ``Limits/previewBytes``: a device, FIFO or socket is refused before
    /// it is opened, so nothing waits on one.
    public func preview(_ host: ResolvedHost, path: String, part: PreviewPart) async throws -> ServedPreview {
        let cap = limits.previewBytes
        return try await withTimeLimit("\(host.displayName): the preview of \(path)") {
            try await self.with(host, path: path) { browser, path in
                switch part {
                case .automatic:
                    let whole = try await browser.read(path, options: ReadOptions(range: .whole, maxBytes: cap))
                    guard whole.truncated, !whole.isBinary else { return ServedPreview(preview: whole, firstLine: 1) }
                    let tail = try await browser.read(
                        path, options: ReadOptions(range: .tail(lines: Self.tailLines), maxBytes: cap))
                    return ServedPreview(preview: tail, firstLine: tail.offset == 0 ? 1 : nil)
                case .tail(let lines):
                    let tail = try await browser.read(
                        path, options: ReadOptions(range: .tail(lines: lines), maxBytes: cap))
                    return ServedPreview(preview: tail, firstLine: tail.offset == 0 ? 1 : nil)
                case .around(let line):
                    let first = max(1, line - Self.contextLines)
                    let shown = try await browser.read(
                        path,
                        options: ReadOptions(
                            range: .lines(from: first, count: line - first + 1 + Self.contextLines), maxBytes: cap))
                    return ServedPreview(preview: shown, firstLine: first)
                }
            }
        }
    }

    /// Lines matching `pattern` under `path`, at most `limit`, each line cut at 2 KiB.
    public func grep(_ host: ResolvedHost, path: String, pattern: String, options: GrepOptions, limit: Int)
        async throws -> ServedSearch<GrepMatch>
    {
        let limit = min(max(1, limit), limits.entries)
        return try await withTimeLimit("\(host.displayName): grep under \(path)") {
            try await self.with(host, path: path) { browser, path in
                var found = ServedSearch<GrepMatch>(items: [], complete: true, summary: nil, problems: [])
                do {
                    let summary = try await browser.grep(pattern, in: path, options: options) { match in
                        guard found.items.count < limit else { throw EnoughResults() }
                        var match = match
                        if match.line.count > Self.lineBytes {
                            match.line = Array(HostTools.matchingLine(match.line, maxBytes: Self.lineBytes).utf8)
                        }
                        found.items.append(match)
                    }
                    found.summary = summary
                    found.problems = summary.problems.prefix(5).map(\.message)
                } catch is EnoughResults {
                    found.complete = false
                }
                return found
            }
        }
    }

    /// Entries under `path` that match `options`, at most `limit`.
    public func find(_ host: ResolvedHost, path: String, options: FindOptions, limit: Int) async throws
        -> ServedSearch<RemoteFileEntry>
    {
        let limit = min(max(1, limit), limits.entries)
        return try await withTimeLimit("\(host.displayName): find under \(path)") {
            try await self.with(host, path: path) { browser, path in
                var found = ServedSearch<RemoteFileEntry>(items: [], complete: true, summary: nil, problems: [])
                do {
                    let problems = try await browser.find(path, options: options) { entry in
                        guard found.items.count < limit else { throw EnoughResults() }
                        found.items.append(entry)
                    }
                    found.problems = problems.prefix(5).map(\.message)
                } catch is EnoughResults {
                    found.complete = false
                }
                return found
            }
        }
    }

    /// The path and size of the regular file at `path`, opened with the checks of every read: a directory, a
    /// device, a FIFO or a socket is refused before anything is opened.
    public func regularFile(_ host: ResolvedHost, path: String) async throws -> (path: RemotePath, size: UInt64) {
        let opened = try await withTimeLimit("\(host.displayName): opening \(path)") {
            try await self.with(host, path: path) { browser, path in
                try await browser.read(path, options: ReadOptions(range: .head(lines: 0), maxBytes: 1))
            }
        }
        return (opened.path, opened.fileSize)
    }

    /// ``regularFile(_:path:)``, checked before a download starts: a file larger than ``Limits/downloadBytes``
    /// is refused with a sentence while an HTTP status can still say so.
    public func downloadSize(_ host: ResolvedHost, path: String) async throws -> (path: RemotePath, size: UInt64) {
        let cap = limits.downloadBytes
        let file = try await regularFile(host, path: path)
        guard file.size <= cap else {
            throw CoreError(
                .tooLarge,
                "\(host.displayName): \(file.path.escaped) has \(file.size) bytes, more than the \(cap) one "
                    + "download from the dashboard may have; copy it with hostscope files get")
        }
        return file
    }

    /// Sends the regular file at `path` to `output`, chunk by chunk, as it was when opened.
    public func download(_ host: ResolvedHost, path: String, _ output: ([UInt8]) async throws -> Void) async throws {
        _ = try await with(host, path: path) { browser, path in
            try await browser.stream(path, maxBytes: limits.downloadBytes, output)
        }
    }

    /// The last `lines` lines of a regular file, then what is appended to it, handed to `output`, until the file
    /// is replaced, truncated or removed (the value says which), ``Limits/followTime`` passes or serve stops
    /// (`nil`), or the task is cancelled.
    public func follow(
        _ host: ResolvedHost, path: String, lines: Int, _ output: @escaping @Sendable ([UInt8]) async throws -> Void
    ) async throws -> FollowEnd? {
        let time = limits.followTime
        let options = FollowOptions(lines: lines, maxInitialBytes: limits.previewBytes)
        return try await withThrowingTaskGroup(of: FollowEnd?.self) { group in
            group.addTask {
                try await self.with(host, path: path) { browser, path in
                    try await browser.follow(path, options: options, output)
                }
            }
            group.addTask {
                // Time's up, or serve is stopping: its listener waits for requests under way to end.
                let end = ContinuousClock.now + time
                while ContinuousClock.now < end, !self.isClosed { try await Task.sleep(for: .milliseconds(250)) }
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw CancellationError() }
            return first
        }
    }
}
