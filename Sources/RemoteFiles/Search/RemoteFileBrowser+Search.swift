import SSHTransport
public import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// How ``RemoteFileBrowser/grep(_:in:options:_:)`` searches.
public struct GrepOptions: Sendable {
    /// Search the files below a directory (symbolic links met on the way are not followed, as `grep -r`).
    public var recursive = false
    public var ignoreCase = false
    /// Take the pattern as plain text rather than a regular expression.
    public var fixedString = false
    /// Search only files whose name matches this glob (`*.py`), like `grep --include`.
    public var glob: GlobPattern?
    /// Stop reading a file after this many selected lines, like `grep --max-count` (trailing context still
    /// follows the last one, as grep prints it).
    public var maxCount: Int?
    /// Select the lines that do not match, like `grep -v`.
    public var invertMatch = false
    /// Lines of context before and after each selected line, like `grep -B` and `-A`; context lines are
    /// handed over with ``GrepMatch/isContext`` set, each line once.
    public var before = 0
    public var after = 0

    public init(
        recursive: Bool = false, ignoreCase: Bool = false, fixedString: Bool = false, glob: GlobPattern? = nil,
        maxCount: Int? = nil, invertMatch: Bool = false, before: Int = 0, after: Int = 0
    ) {
        self.recursive = recursive
        self.ignoreCase = ignoreCase
        self.fixedString = fixedString
        self.glob = glob
        self.maxCount = maxCount
        self.invertMatch = invertMatch
        self.before = before
        self.after = after
    }
}

/// A selected line (`path:line:text` in grep's output), or a line of context around one (`path-line-text`).
public struct GrepMatch: Sendable, Equatable {
    public var path: RemotePath
    /// 1-based line number.
    public var lineNumber: Int
    /// The line without its newline.
    public var line: [UInt8]
    /// Whether this is a line of context (`-A`, `-B`) rather than a selected line.
    public var isContext = false
}

/// What a search covered and what it could not read.
public struct GrepSummary: Sendable, Equatable {
    public var matches = 0
    public var filesSearched = 0
    public var filesMatched = 0
    /// Files skipped because they look binary (a NUL in the first 8 KiB), like `grep -I`.
    public var binaryFilesSkipped = 0
    /// Files and directories that could not be read; the search went on without them.
    public var problems: [RemoteFilesError] = []
}

/// What ``RemoteFileBrowser/find(_:options:_:)`` selects.
public struct FindOptions: Sendable {
    /// Names matching this glob, like `find -name`.
    public var name: GlobPattern?
    /// Entries modified at or after this time (seconds since 1970), like `find -newermt`.
    public var modifiedSince: UInt32?
    /// Only entries of this type.
    public var type: RemoteFileType?
    public var walk: WalkOptions

    public init(
        name: GlobPattern? = nil, modifiedSince: UInt32? = nil, type: RemoteFileType? = nil,
        walk: WalkOptions = WalkOptions()
    ) {
        self.name = name
        self.modifiedSince = modifiedSince
        self.type = type
        self.walk = walk
    }
}

extension RemoteFileBrowser {
    /// Searches files for lines matching `pattern`, reading them over SFTP (no command runs on
    /// the host, so no name or pattern can reach a shell), and hands each match to `found` in
    /// file order.
    @discardableResult
    public func grep(
        _ pattern: String, in path: RemotePath, options: GrepOptions = GrepOptions(),
        _ found: (GrepMatch) async throws -> Void
    ) async throws -> GrepSummary {
        try await grep(pattern, in: path, options: options, fileSearched: { _, _ in }, found)
    }

    /// ``grep(_:in:options:_:)`` that also says, after each file searched (binary files skipped included),
    /// how many lines it selected: what `grep -c` and `grep -l` print.
    @discardableResult
    public func grep(
        _ pattern: String, in path: RemotePath, options: GrepOptions = GrepOptions(),
        fileSearched: (RemotePath, Int) async throws -> Void, _ found: (GrepMatch) async throws -> Void
    ) async throws -> GrepSummary {
        let matcher = try LineMatcher(
            pattern: pattern, ignoreCase: options.ignoreCase, fixedString: options.fixedString)
        return try await traced("grep", path) { recorder in
            var summary = GrepSummary()
            let walkOptions = WalkOptions(maxDepth: options.recursive ? nil : 0, includeHidden: true)
            try await walkResolved(path, options: walkOptions) { event, remote in
                switch event {
                case .failed(let error, _):
                    summary.problems.append(error)
                case .entry(let entry, let depth, _):
                    if depth == 0 && entry.type == .dir && !options.recursive {
                        throw RemoteFilesError(
                            .isADirectory,
                            "\(host): \(entry.path.escaped) is a directory; add -r to search the files below it")
                    }
                    guard entry.type == .file, let remote else { return }
                    if depth > 0, let glob = options.glob, !glob.matches(entry.name) { return }
                    do {
                        let selected = try await grepFile(
                            Resolved(display: entry.path, remote: remote), followFinalLink: depth == 0,
                            matcher: matcher, options: options, summary: &summary, recorder: recorder, found)
                        try await fileSearched(entry.path, selected)
                    } catch let error as RemoteFilesError
                        where error.code != .connectionLost && error.code != .timeout && depth > 0
                    {
                        summary.problems.append(error)
                    }
                }
            }
            return summary
        }
    }

    /// Searches one file, opened by its resolved path and checked to be that file (a FIFO, device
    /// or a link put in its place since the listing is refused before it is opened); returns how many
    /// lines it selected.
    ///
    /// Each byte is looked at a bounded number of times: lines are cut where the newlines of each
    /// chunk are (a line longer than a chunk is gathered, never searched again from its start), and
    /// each line is matched once, in time linear in its length (see ``LineMatcher``). Context lines are
    /// held only as many as `-B` asks for.
    private func grepFile(
        _ resolved: Resolved, followFinalLink: Bool, matcher: LineMatcher, options: GrepOptions,
        summary: inout GrepSummary, recorder: SpanRecorder, _ found: (GrepMatch) async throws -> Void
    ) async throws -> Int {
        let (file, _) = try await openVerifiedFile(resolved, followFinalLink: followFinalLink)
        let path = resolved.display
        summary.filesSearched += 1
        var lines = GrepLineSelector(options: options)
        // The start of the line that the next chunk continues.
        var pending: [UInt8] = []
        var first = true
        do {
            while !lines.finished {
                let chunk: [UInt8]
                do {
                    chunk = try await file.read(maxBytes: 256 * 1024)
                } catch {
                    throw await explain(error, operation: "read", path: path, remote: resolved.remote)
                }
                recorder.bytes += UInt64(chunk.count)
                if first {
                    first = false
                    // grep -I's rule: a NUL byte early on means binary, and binary files are skipped.
                    if chunk.prefix(ContentSniffer.sampleSize).contains(0) {
                        summary.binaryFilesSkipped += 1
                        break
                    }
                }
                if chunk.isEmpty {
                    if !pending.isEmpty { try await next(pending[...]) }
                    break
                }
                var lineStart = 0
                while !lines.finished, let newline = Self.newline(in: chunk, from: lineStart) {
                    if pending.isEmpty {
                        try await next(chunk[lineStart..<newline])
                    } else {
                        pending += chunk[lineStart..<newline]
                        try await next(pending[...])
                        pending.removeAll(keepingCapacity: true)
                    }
                    lineStart = newline + 1
                }
                if !lines.finished { pending += chunk[lineStart...] }
            }
        } catch {
            await file.close()
            throw error
        }
        await file.close()
        if lines.selected > 0 { summary.filesMatched += 1 }
        return lines.selected

        func next(_ line: ArraySlice<UInt8>) async throws {
            for (number, text, isContext) in lines.step(line, matches: matcher.matches(line)) {
                if !isContext { summary.matches += 1 }
                try await found(GrepMatch(path: path, lineNumber: number, line: text, isContext: isContext))
            }
        }
    }

    /// The index of the first newline in `bytes` at or after `start` (memchr: this is the loop a
    /// search spends most of its time in).
    private static func newline(in bytes: [UInt8], from start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        return bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress,
                let found = memchr(base + start, Int32(UInt8(ascii: "\n")), buffer.count - start)
            else { return nil }
            return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// Entries below `path` that match every criterion, handed to `found` as the walk meets
    /// them; returns the directories that could not be read.
    @discardableResult
    public func find(
        _ path: RemotePath, options: FindOptions = FindOptions(), _ found: (RemoteFileEntry) async throws -> Void
    ) async throws -> [RemoteFilesError] {
        try await traced("find", path) { recorder in
            var problems: [RemoteFilesError] = []
            try await walk(path, options: options.walk) { event in
                switch event {
                case .failed(let error, _):
                    problems.append(error)
                case .entry(let entry, _, _):
                    if let name = options.name, !name.matches(entry.name) { return }
                    if let type = options.type, entry.type != type { return }
                    if let since = options.modifiedSince {
                        guard let modified = entry.modificationTime, modified >= since else { return }
                    }
                    recorder.entries = (recorder.entries ?? 0) + 1
                    try await found(entry)
                }
            }
            return problems
        }
    }
}

/// Which lines of a file grep prints, one line at a time: the selected lines (matching, or not with `-v`), up to
/// `-m` of them, with `-B` lines before and `-A` after each, every line at most once, as GNU grep prints them.
struct GrepLineSelector {
    let invert: Bool
    let before: Int
    let after: Int
    let maxCount: Int?
    /// Lines selected so far.
    private(set) var selected = 0
    /// Whether nothing more will be printed from this file (`-m` reached and its trailing context shown).
    private(set) var finished = false
    private var number = 0
    /// The last lines not printed, for `-B`.
    private var held: [(Int, [UInt8])] = []
    /// Lines of trailing context still to print.
    private var trailing = 0

    init(options: GrepOptions) {
        invert = options.invertMatch
        before = max(0, options.before)
        after = max(0, options.after)
        maxCount = options.maxCount
        finished = maxCount == 0
    }

    /// The lines to print for the next line of the file, which `matches` the pattern or not: each with its
    /// number, its text and whether it is context.
    mutating func step(_ line: ArraySlice<UInt8>, matches: Bool) -> [(Int, [UInt8], Bool)] {
        guard !finished else { return [] }
        number += 1
        let limitReached = maxCount.map { selected >= $0 } ?? false
        if matches != invert, !limitReached {
            var out = held.map { ($0.0, $0.1, true) }
            held.removeAll(keepingCapacity: true)
            out.append((number, Array(line), false))
            selected += 1
            trailing = after
            if let maxCount, selected >= maxCount, trailing == 0 { finished = true }
            return out
        }
        if trailing > 0 {
            // After -m's last line, grep prints the trailing context whatever the lines hold.
            trailing -= 1
            if limitReached, trailing == 0 { finished = true }
            return [(number, Array(line), true)]
        }
        if before > 0 {
            held.append((number, Array(line)))
            if held.count > before { held.removeFirst() }
        }
        return []
    }
}
