import Foundation
import SSHTransport
public import ValueFormats

/// How ``RemoteFileBrowser/list(_:options:_:)`` lists a directory.
public struct ListOptions: Sendable {
    /// Show names starting with a dot (never `.` and `..`).
    public var includeHidden = false
    /// Read the target of each symbolic link (one request per link).
    public var readLinkTargets = true
    /// Sort by name in byte order, as `LC_ALL=C ls` does; when false, entries come in the
    /// server's order as they arrive.
    public var sorted = true
    /// Most entries handed to the callback at once.
    public var batchSize = 1000
    /// Most entries held in memory while sorting; past it, sorted runs go to temporary files
    /// in ``spillDirectory`` and are merged, so memory stays bounded for any directory size.
    public var sortMemoryLimit = 50_000
    /// Where sorted runs of huge directories are kept (unlinked at once: nothing stays behind).
    public var spillDirectory = NSTemporaryDirectory()

    public init(includeHidden: Bool = false, readLinkTargets: Bool = true, sorted: Bool = true) {
        self.includeHidden = includeHidden
        self.readLinkTargets = readLinkTargets
        self.sorted = sorted
    }
}

/// What a listing did, beyond its entries.
public struct ListSummary: Sendable, Equatable {
    /// Entries handed to the callback.
    public var count = 0
    /// Whether the path was a directory (else the single entry was the path itself, as `ls` shows a file).
    public var isDirectory = false
    /// Sorted runs written to temporary files (0 when the directory fit in memory).
    public var spilledRuns = 0
    /// Most entries held in memory at once.
    public var peakBufferedEntries = 0
}

extension RemoteFileBrowser {
    /// Lists `path` in batches: a directory's entries, or the path itself when it is not a
    /// directory. Memory stays bounded by the options' limits however large the directory.
    @discardableResult
    public func list(
        _ path: RemotePath, options: ListOptions = ListOptions(),
        _ body: ([RemoteFileEntry]) async throws -> Void
    ) async throws -> ListSummary {
        try await traced("ls", path) { recorder in
            let resolved = try await resolve(path, followFinalLink: true)
            let attributes: SFTPAttributes
            do {
                attributes = try await session.stat(resolved.remote)
            } catch {
                throw await explain(error, operation: "list", path: resolved.display, remote: path)
            }
            var summary = ListSummary()
            guard attributes.type == .directory else {
                let entry = try await describe(resolved, name: path.lastComponent, followLink: false)
                try await body([entry])
                summary.count = 1
                return summary
            }
            summary.isDirectory = true
            try await listDirectory(resolved, seen: attributes, options: options, summary: &summary, body)
            recorder.entries = summary.count
            return summary
        }
    }

    /// The attributes of `path` itself: a symbolic link is described as a link, with its target.
    public func stat(_ path: RemotePath) async throws -> RemoteFileEntry {
        try await traced("stat", path) { _ in
            let resolved = try await resolve(path, followFinalLink: false)
            var name = path.lastComponent
            if path.bytes.isEmpty { name = Array(".".utf8) }
            return try await describe(resolved, name: name, followLink: false)
        }
    }

    /// Lists `path` into one sorted array (for directories that fit in memory).
    public func list(_ path: RemotePath, options: ListOptions = ListOptions()) async throws -> [RemoteFileEntry] {
        var all: [RemoteFileEntry] = []
        try await list(path, options: options) { all += $0 }
        return all
    }

    /// The entry for `resolved` itself (lstat, so a link is described as a link, plus its target).
    func describe(_ resolved: Resolved, name: [UInt8], followLink: Bool) async throws -> RemoteFileEntry {
        do {
            let attributes = try await session.stat(resolved.remote, followSymlinks: followLink)
            var target: [UInt8]?
            if attributes.type == .symlink { target = try await session.readlink(resolved.remote).bytes }
            return RemoteFileEntry(name: name, path: resolved.display, attributes: attributes, linkTarget: target)
        } catch {
            throw await explain(error, operation: "stat", path: resolved.display, remote: resolved.remote)
        }
    }

    /// Lists the directory at `directory.remote`, the path it resolved to: never a name taken
    /// from a listing. `seen` is what the directory looked like when it was resolved or listed
    /// in its parent, for the checks that the handle is still that directory.
    func listDirectory(
        _ directory: Resolved, seen: SFTPAttributes?, options: ListOptions, summary: inout ListSummary,
        _ body: ([RemoteFileEntry]) async throws -> Void
    ) async throws {
        let handle = try await openVerifiedDirectory(directory, seen: seen)
        let sorter =
            options.sorted ? ExternalSorter(limit: options.sortMemoryLimit, directory: options.spillDirectory) : nil
        let batchSize = max(1, options.batchSize)
        do {
            while true {
                let raw: [SFTPDirectoryEntry]
                do {
                    raw = try await handle.next(maxEntries: 1024)
                } catch {
                    throw await explain(error, operation: "list", path: directory.display, remote: directory.remote)
                }
                if raw.isEmpty { break }
                var kept: [ListedName] = []
                kept.reserveCapacity(raw.count)
                for entry in raw where Self.isShown(entry.name, includeHidden: options.includeHidden) {
                    kept.append(ListedName(entry))
                }
                if let sorter {
                    try sorter.add(kept)
                    summary.peakBufferedEntries = max(summary.peakBufferedEntries, sorter.peakBuffered)
                } else {
                    summary.peakBufferedEntries = max(summary.peakBufferedEntries, kept.count)
                    for start in stride(from: 0, to: kept.count, by: batchSize) {
                        let slice = Array(kept[start..<min(kept.count, start + batchSize)])
                        try await emit(slice, in: directory, options: options, summary: &summary, body)
                    }
                }
            }
            await handle.close()
        } catch {
            await handle.close()
            throw error
        }
        guard let sorter else { return }
        try sorter.finishInput()
        summary.spilledRuns = sorter.runCount
        while let next = try sorter.nextBatch(batchSize) {
            try await emit(next, in: directory, options: options, summary: &summary, body)
        }
    }

    private func emit(
        _ names: [ListedName], in directory: Resolved, options: ListOptions, summary: inout ListSummary,
        _ body: ([RemoteFileEntry]) async throws -> Void
    ) async throws {
        guard !names.isEmpty else { return }
        var entries: [RemoteFileEntry] = []
        entries.reserveCapacity(names.count)
        for name in names {
            var target: [UInt8]?
            if options.readLinkTargets && name.attributes.type == .symlink {
                let remote = directory.remote.appending(name.name)
                // A link removed since the listing keeps its entry without a target.
                target = try? await session.readlink(remote).bytes
            }
            entries.append(
                RemoteFileEntry(
                    name: name.name, path: directory.display.appending(name.name), attributes: name.attributes,
                    linkTarget: target, owner: name.owner, group: name.group))
        }
        summary.count += entries.count
        try await body(entries)
    }

    static func isShown(_ name: [UInt8], includeHidden: Bool) -> Bool {
        if name == [UInt8(ascii: ".")] || name == [UInt8(ascii: "."), UInt8(ascii: ".")] { return false }
        return includeHidden || name.first != UInt8(ascii: ".")
    }
}

/// A directory entry as listed: the name, attributes, and owner names from the long listing.
struct ListedName: Sendable, Equatable {
    var name: [UInt8]
    var attributes: SFTPAttributes
    var owner: String?
    var group: String?

    init(name: [UInt8], attributes: SFTPAttributes, owner: String?, group: String?) {
        self.name = name
        self.attributes = attributes
        self.owner = owner
        self.group = group
    }

    init(_ entry: SFTPDirectoryEntry) {
        name = entry.name
        attributes = entry.attributes
        // `-rw-r--r--    1 user  group  12 Jan  1 00:00 name`: OpenSSH's long name carries the
        // owner and group names that the attributes (numeric ids) lack.
        if let long = entry.longName {
            let fields = long.split(separator: " ", maxSplits: 4, omittingEmptySubsequences: true)
            if fields.count >= 4 {
                owner = String(fields[2])
                group = String(fields[3])
            }
        }
    }
}
