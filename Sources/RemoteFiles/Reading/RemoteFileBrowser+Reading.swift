import SSHTransport
public import ValueFormats

/// A byte range as `--bytes` takes it: `A-B` (inclusive, from 0), `A-` (from A to the end) or
/// `-N` (the last N bytes), as in an HTTP Range header.
public struct ByteRange: Sendable, Equatable, CustomStringConvertible {
    public var first: UInt64?
    public var last: UInt64?
    /// The length of a suffix range (`-N`).
    public var suffixLength: UInt64?

    public init?(parsing text: String) {
        let parts = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        if parts[0].isEmpty {
            guard let length = UInt64(parts[1]), length > 0 else { return nil }
            suffixLength = length
            return
        }
        guard let first = UInt64(parts[0]) else { return nil }
        self.first = first
        if !parts[1].isEmpty {
            guard let last = UInt64(parts[1]), last >= first else { return nil }
            self.last = last
        }
    }

    public var description: String {
        if let suffixLength { return "-\(suffixLength)" }
        return "\(first ?? 0)-" + (last.map(String.init) ?? "")
    }
}

/// Which part of a file ``RemoteFileBrowser/read(_:options:)`` returns.
public enum ReadRange: Sendable, Equatable {
    case whole
    /// The first N lines.
    case head(lines: Int)
    /// The last N lines; only the end of the file is read.
    case tail(lines: Int)
    case bytes(ByteRange)
    /// `count` lines from line `first` (1-based) on, wherever they lie: the file is read from its start to find
    /// that line, keeping only the lines asked for, so memory stays within the byte cap however far it is.
    case lines(from: Int, count: Int)
}

/// How much of a file to read.
public struct ReadOptions: Sendable {
    public var range: ReadRange
    /// The most bytes returned; a longer range is cut (its start kept, or its end for `tail`).
    public var maxBytes: Int

    /// 1 MiB: a preview, not a download.
    public static let defaultMaxBytes = 1 << 20

    public init(range: ReadRange = .whole, maxBytes: Int = ReadOptions.defaultMaxBytes) {
        self.range = range
        self.maxBytes = maxBytes
    }
}

/// Part of a remote file, with what a preview needs to say about it.
public struct FilePreview: Sendable, Equatable {
    public var path: RemotePath
    /// The file's size when it was opened.
    public var fileSize: UInt64
    /// Where ``bytes`` start in the file.
    public var offset: UInt64
    public var bytes: [UInt8]
    /// Whether the range asked for was longer than the byte cap and was cut.
    public var truncated: Bool
    /// Whether the content looks binary (see ``ContentSniffer``).
    public var isBinary: Bool
    /// What a binary file seems to be, from the magic number at its start.
    public var typeGuess: String?
}

extension RemoteFileBrowser {
    /// Reads part of a regular file for a preview: never more than `options.maxBytes`, and for
    /// `tail` only the end of the file.
    ///
    /// - Throws: ``RemoteFilesError`` — `.isADirectory`, `.notAFile` for devices and FIFOs,
    ///   `.changedWhileReading` when the file shrinks under the read.
    public func read(_ path: RemotePath, options: ReadOptions = ReadOptions()) async throws -> FilePreview {
        try await traced("cat", path) { recorder in
            let cap = max(1, options.maxBytes)
            let (file, resolved, attributes) = try await openRegularFile(path)
            do {
                let preview = try await readPreview(
                    file, resolved, size: attributes.size ?? 0, options: options, cap: cap)
                await file.close()
                recorder.bytes = UInt64(preview.bytes.count)
                return preview
            } catch {
                await file.close()
                throw error
            }
        }
    }

    private func readPreview(_ file: SFTPFile, _ resolved: Resolved, size: UInt64, options: ReadOptions, cap: Int)
        async throws -> FilePreview
    {
        var preview = FilePreview(
            path: resolved.display, fileSize: size, offset: 0, bytes: [], truncated: false, isBinary: false)
        let reader = ChunkReader(file: file, browser: self, path: resolved.display, size: size)
        switch options.range {
        case .whole:
            preview.bytes = try await reader.readForward(from: 0, limit: cap) { _, _ in false }
            if preview.bytes.count == cap {
                preview.truncated = size > UInt64(cap) ? true : try await reader.hasMore()
            }
        case .head(let lines):
            var newlines = 0
            var cut: Int?
            preview.bytes = try await reader.readForward(from: 0, limit: cap) { chunk, base in
                guard lines > 0 else {
                    cut = 0
                    return true
                }
                for index in chunk.indices where chunk[index] == UInt8(ascii: "\n") {
                    newlines += 1
                    if newlines == lines {
                        cut = base + index + 1
                        return true
                    }
                }
                return false
            }
            if let cut {
                preview.bytes.removeSubrange(cut...)
            } else if preview.bytes.count == cap {
                preview.truncated = try await reader.hasMore()
            }
        case .tail(let lines):
            (preview.offset, preview.bytes, preview.truncated) = try await reader.readTail(lines: lines, limit: cap)
        case .lines(let first, let count):
            (preview.offset, preview.bytes, preview.truncated) = try await reader.readLines(
                from: first, count: count, limit: cap)
        case .bytes(let range):
            let first: UInt64
            var end: UInt64 = size  // exclusive
            if let suffix = range.suffixLength {
                first = size > suffix ? size - suffix : 0
            } else {
                first = range.first ?? 0
                if let last = range.last { end = min(size, last &+ 1) }
            }
            guard first < size || size == 0 else {
                throw RemoteFilesError(
                    .invalidArgument,
                    "\(host): \(resolved.display.escaped) has \(size) bytes, so --bytes \(range) starts past its end; pick a range below \(size)"
                )
            }
            let wanted = end > first ? end - first : 0
            let count = Int(min(wanted, UInt64(cap)))
            preview.offset = first
            preview.bytes = try await reader.readExactly(at: first, count: count)
            preview.truncated = wanted > UInt64(cap)
        }
        // A range from the middle of a file says little: the file's own start decides too,
        // as it does for `file`.
        var start = Array(preview.bytes.prefix(ContentSniffer.sampleSize))
        if preview.offset != 0 && size > 0 {
            start = try await reader.readExactly(at: 0, count: Int(min(UInt64(ContentSniffer.sampleSize), size)))
        }
        preview.isBinary = ContentSniffer.isBinary(preview.bytes) || ContentSniffer.isBinary(start)
        if preview.isBinary { preview.typeGuess = ContentSniffer.typeGuess(start) }
        return preview
    }

    /// Opens `path` (following links, inside the root when there is one) and checks that the
    /// handle holds the regular file the path resolved to.
    func openRegularFile(_ path: RemotePath) async throws -> (SFTPFile, Resolved, SFTPAttributes) {
        let resolved = try await resolve(path, followFinalLink: true)
        let (file, attributes) = try await openVerifiedFile(resolved, followFinalLink: true)
        return (file, resolved, attributes)
    }
}

/// Reads an open file in chunks and notices when it shrinks under the read.
struct ChunkReader {
    let file: SFTPFile
    let browser: RemoteFileBrowser
    let path: RemotePath
    /// The size at open.
    let size: UInt64
    var chunkSize = 64 * 1024

    /// Bytes from `offset` until the end of file, `limit`, or `stop` says a chunk was enough.
    func readForward(from offset: UInt64, limit: Int, stop: ([UInt8], Int) -> Bool) async throws -> [UInt8] {
        try await seek(offset)
        var bytes: [UInt8] = []
        while bytes.count < limit {
            let chunk = try await read(min(chunkSize, limit - bytes.count))
            if chunk.isEmpty {
                if offset + UInt64(bytes.count) < size { throw shrank(at: offset + UInt64(bytes.count)) }
                break
            }
            let base = bytes.count
            bytes += chunk
            if stop(chunk, base) { break }
        }
        return bytes
    }

    /// `count` lines from line `first` (1-based) on, at most `limit` bytes (keeping their start): the bytes before
    /// that line are read and dropped chunk by chunk. A file with fewer lines gives no bytes, at its end.
    func readLines(from first: Int, count: Int, limit: Int) async throws -> (
        offset: UInt64, bytes: [UInt8], truncated: Bool
    ) {
        guard count > 0 else { return (0, [], false) }
        let first = max(1, first)
        try await seek(0)
        var position: UInt64 = 0  // the file offset of the next chunk's first byte
        var skipped = 0  // newlines before the first line asked for
        var start: UInt64?
        var kept: [UInt8] = []
        var newlines = 0
        while true {
            let chunk = try await read(chunkSize)
            if chunk.isEmpty {
                if position < size { throw shrank(at: position) }
                return (start ?? position, kept, false)
            }
            var index = chunk.startIndex
            if start == nil {
                while skipped < first - 1, let newline = chunk[index...].firstIndex(of: UInt8(ascii: "\n")) {
                    skipped += 1
                    index = newline + 1
                }
                guard skipped == first - 1 else {
                    position += UInt64(chunk.count)
                    continue
                }
                start = position + UInt64(index)
            }
            while index < chunk.endIndex {
                let end = chunk[index...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? chunk.endIndex
                kept += chunk[index..<end]
                if kept.count >= limit {
                    let whole = kept.count == limit && chunk[end - 1] == UInt8(ascii: "\n") && newlines + 1 == count
                    kept.removeSubrange(min(limit, kept.count)...)
                    return (start ?? 0, kept, !whole)
                }
                index = end
                if chunk[end - 1] == UInt8(ascii: "\n") {
                    newlines += 1
                    if newlines == count { return (start ?? 0, kept, false) }
                }
            }
            position += UInt64(chunk.count)
        }
    }

    /// Exactly `count` bytes at `offset`; fewer means the file shrank.
    func readExactly(at offset: UInt64, count: Int) async throws -> [UInt8] {
        try await seek(offset)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        while bytes.count < count {
            let chunk = try await read(min(max(chunkSize, 256 * 1024), count - bytes.count))
            if chunk.isEmpty { throw shrank(at: offset + UInt64(bytes.count)) }
            bytes += chunk
        }
        return bytes
    }

    /// Whether a byte follows the current position.
    func hasMore() async throws -> Bool {
        !(try await read(1)).isEmpty
    }

    /// The last `lines` lines (at most `limit` bytes, keeping the end), reading backwards in chunks.
    func readTail(lines: Int, limit: Int) async throws -> (offset: UInt64, bytes: [UInt8], truncated: Bool) {
        guard lines > 0, size > 0 else { return (size, [], false) }
        var position = size
        var collected: [UInt8] = []
        var foundStart = false
        while position > 0 {
            let start = position > UInt64(chunkSize) ? position - UInt64(chunkSize) : 0
            let chunk = try await readExactly(at: start, count: Int(position - start))
            collected = chunk + collected
            position = start
            if let cut = Self.startOfLast(lines, in: collected) {
                collected.removeSubrange(..<cut)
                position += UInt64(cut)
                foundStart = true
                break
            }
            if collected.count >= limit { break }
        }
        if collected.count > limit {
            let excess = collected.count - limit
            collected.removeSubrange(..<excess)
            return (position + UInt64(excess), collected, true)
        }
        // Cut short only when the lines asked for start before what was read; the whole file
        // (position 0) holding fewer lines is complete.
        return (position, collected, !foundStart && position > 0)
    }

    /// Index where the last `lines` lines of `bytes` start, or `nil` when `bytes` holds fewer
    /// (a final newline ends the last line rather than starting another).
    static func startOfLast(_ lines: Int, in bytes: [UInt8]) -> Int? {
        var end = bytes.count
        if end > 0 && bytes[end - 1] == UInt8(ascii: "\n") { end -= 1 }
        var seen = 0
        var index = end - 1
        while index >= 0 {
            if bytes[index] == UInt8(ascii: "\n") {
                seen += 1
                if seen == lines { return index + 1 }
            }
            index -= 1
        }
        return nil
    }

    private func seek(_ offset: UInt64) async throws {
        do {
            try await file.seek(to: offset)
        } catch {
            throw await browser.explain(error, operation: "read", path: path, remote: file.path)
        }
    }

    private func read(_ count: Int) async throws -> [UInt8] {
        do {
            return try await file.read(maxBytes: count)
        } catch {
            throw await browser.explain(error, operation: "read", path: path, remote: file.path)
        }
    }

    private func shrank(at offset: UInt64) -> RemoteFilesError {
        RemoteFilesError(
            .changedWhileReading,
            "\(browser.host): \(path.escaped) shrank while it was read (it had \(size) bytes, it ended at \(offset)); it is being rewritten or truncated: read it again"
        )
    }
}
