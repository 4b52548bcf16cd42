import Foundation
public import HostStats
public import OrderedJSON
import Synchronization
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// The formats `watch` writes.
public enum RecordFileFormat: String, Sendable, CaseIterable {
    case csv, json, ndjson

    /// The format a file name implies (`fleet.csv`, `log.ndjson`, `x.jsonl`), if any.
    public static func inferred(fromPath path: String) -> RecordFileFormat? {
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "csv": .csv
        case "json": .json
        case "ndjson", "jsonl": .ndjson
        default: nil
        }
    }
}

/// A failure writing records: the file, what happened, and what to do.
public struct RecordWriteError: Error, Sendable, CustomStringConvertible {
    public var message: String
    /// Whether the reader went away (`watch … | head -2`): the end of the run, not a failure.
    public var readerClosed: Bool
    public var description: String { message }

    public init(message: String, readerClosed: Bool = false) {
        self.message = message
        self.readerClosed = readerClosed
    }
}

/// Writes snapshot records to a file (or stdout) so that it stays valid at every moment a
/// crash could stop it.
///
/// - CSV and NDJSON: each row or line goes out in one `write(2)` on a descriptor opened with
///   `O_APPEND`, so after `kill -9` every complete line is a whole record and at most the one in
///   flight is cut short; reopening drops such a cut line before appending.
/// - JSON: one record per line inside `[` … `]`. Each new record overwrites the closing `]`
///   and writes it again after itself, so the file is a valid JSON array after every record,
///   not only after a clean exit; reopening repairs a file whose last write was cut.
/// - Appending to an existing file keeps its header and format; a CSV header that differs
///   from this run's columns is refused rather than mixed.
/// - Bytes go out exactly as encoded to a file. A file that is a terminal (`--output /dev/tty`) gets
///   them through the face's terminal escaping instead, so that CSV cannot drive the terminal (JSON
///   escapes control characters by construction). A stream (standard output) gets every piece through
///   the face's own writer, which does the same.
public final class RecordFileWriter: Sendable {
    public let format: RecordFileFormat
    public let csvLayout: CSVLayoutChoice
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    /// What the bytes go through on their way out: the face's terminal escaping for a file that is a
    /// terminal, the face's writer for a stream; `nil` writes them to the file as they are.
    private let sink: (@Sendable ([UInt8]) throws(RecordWriteError) -> Void)?
    public let path: String?
    /// The fleet file's labels: columns of either CSV layout, a `labels` object in JSON records.
    public let labels: RecordLabels

    private struct Progress {
        /// Records in the JSON array so far (to know whether a comma is needed).
        var jsonCount = 0
        var headerWritten = false
        /// False when appending to a wide CSV written before the `slot` column existed.
        var slotColumn = true
    }
    /// Also serialises writes: records from concurrent callers never interleave.
    private let progress = Lock(Progress())

    /// CSV layouts: host-level columns, or one row per disk/interface/core figure.
    public enum CSVLayoutChoice: String, Sendable, CaseIterable {
        case wide, long
    }

    /// Writes to a stream through `write` (the face's standard output): every row or line in one call, a
    /// JSON array opened at the first record and closed by ``finish()``.
    public init(
        streamFormat format: RecordFileFormat, csvLayout: CSVLayoutChoice = .wide,
        labels: RecordLabels = RecordLabels(),
        write: @escaping @Sendable ([UInt8]) throws(RecordWriteError) -> Void
    ) {
        self.format = format
        self.csvLayout = csvLayout
        self.labels = labels
        descriptor = -1
        ownsDescriptor = false
        sink = write
        path = nil
    }

    /// Opens (creating or resuming) `path`. Should the file be a terminal, what is written goes through
    /// `terminalEscaping` first.
    public init(
        path: String, format: RecordFileFormat, csvLayout: CSVLayoutChoice = .wide,
        labels: RecordLabels = RecordLabels(),
        terminalEscaping: @escaping @Sendable ([UInt8]) -> [UInt8] = { $0 }
    ) throws(RecordWriteError) {
        self.format = format
        self.csvLayout = csvLayout
        self.labels = labels
        self.path = path
        ownsDescriptor = true
        let flags = format == .json ? O_RDWR | O_CREAT | O_CLOEXEC : O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC
        let fd = open(path, flags, 0o644)
        guard fd >= 0 else {
            throw RecordWriteError(
                message:
                    "cannot open \(path) for writing: \(String(cString: strerror(errno))); check the directory exists and is writable, or choose another --output"
            )
        }
        descriptor = fd
        if isatty(fd) == 1 {
            sink = { (bytes: [UInt8]) throws(RecordWriteError) in
                try Self.writeAll(terminalEscaping(bytes), to: fd, path: path)
            }
        } else {
            sink = nil
        }
        do {
            try resume()
        } catch {
            close(fd)
            throw error
        }
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    /// Appends one record and makes it durable in the page cache (not fsync'd: a power cut may
    /// lose the last seconds, a killed process loses nothing written).
    ///
    /// A write that fails part-way (the disk filled up) is taken back: the file is cut to where it
    /// ended and, for JSON, its closing bracket restored, so it stays valid and the next record that
    /// fits is appended whole after the last one.
    /// `labels` are the host's labels now (after a reload); `nil` takes those the run began with.
    public func write(_ record: SnapshotRecord, labels hostLabels: [String: String]? = nil) throws(RecordWriteError) {
        let hostLabels = hostLabels ?? labels.labels(of: record.host)
        try writing { (progress: inout Progress) throws(RecordWriteError) in
            try write(record, labels: hostLabels, &progress)
        }
    }

    /// Appends another kind of record (an alert transition, `hostscope.alert/1`) to a JSON or NDJSON output, as
    /// ``write(_:labels:)`` appends a snapshot; a CSV output, whose columns are a snapshot's, takes none.
    public func write(other record: JSONValue) throws(RecordWriteError) {
        guard format != .csv else { return }
        try writing { (progress: inout Progress) throws(RecordWriteError) in try writeJSON(record, &progress) }
    }

    private func writing(_ body: (inout Progress) throws(RecordWriteError) -> Void) throws(RecordWriteError) {
        try progress.withLock { (progress: inout Progress) throws(RecordWriteError) in
            let before = progress
            let end = ownsDescriptor ? lseek(descriptor, 0, SEEK_END) : -1
            do throws(RecordWriteError) {
                try body(&progress)
            } catch {
                if end >= 0 { takeBack(to: end) }
                progress = before
                throw error
            }
        }
    }

    /// Cuts the file back to `end` bytes; a JSON array gets back the "\n]\n" a failed write overwrote
    /// (bytes the file already held, so rewriting them needs no new space).
    private func takeBack(to end: off_t) {
        if format == .json, end >= 3 {
            try? writeAll(Array("\n]\n".utf8), at: end - 3)
        }
        ftruncate(descriptor, end)
    }

    private func write(_ record: SnapshotRecord, labels hostLabels: [String: String], _ progress: inout Progress)
        throws(RecordWriteError)
    {
        switch format {
        case .ndjson, .json:
            try writeJSON(labels.json(record, labels: hostLabels), &progress)
        case .csv:
            var text = ""
            if !progress.headerWritten {
                text += labels.header(csvLayout == .wide ? SnapshotCSV.wideHeader : SnapshotCSV.longHeader)
                progress.headerWritten = true
            }
            text += labels.rows(
                csvLayout == .wide
                    ? SnapshotCSV.wideRow(record, slotColumn: progress.slotColumn) : SnapshotCSV.longRows(record),
                labels: hostLabels)
            if !text.isEmpty { try append(Array(text.utf8)) }
        }
    }

    /// One record as a line of NDJSON, or as the next element of the JSON array.
    private func writeJSON(_ value: JSONValue, _ progress: inout Progress) throws(RecordWriteError) {
        switch format {
        case .csv:
            return
        case .ndjson:
            var line: [UInt8] = []
            line.reserveCapacity(8192)
            JSONWriter().write(value, into: &line)
            line.append(UInt8(ascii: "\n"))
            try append(line)
        case .json:
            let line = value.jsonString
            if ownsDescriptor {
                // Overwrite the closing "\n]\n" with ",\n" + record + "\n]\n" in one write.
                let end = lseek(descriptor, 0, SEEK_END)
                let prefix = progress.jsonCount == 0 ? "" : ",\n"
                let bytes = Array((prefix + line + "\n]\n").utf8)
                try writeAll(bytes, at: end - 3)
            } else {
                // A pipe cannot be rewritten: open the array at the first record and close it in
                // ``finish()``.
                try append(Array(((progress.jsonCount == 0 ? "[\n" : ",\n") + line).utf8))
            }
            progress.jsonCount += 1
        }
    }

    /// Completes the output: a JSON array on a pipe gets its closing bracket.
    public func finish() throws(RecordWriteError) {
        guard format == .json, !ownsDescriptor else { return }
        let count = progress.withLock { $0.jsonCount }
        try append(Array((count == 0 ? "[]\n" : "\n]\n").utf8))
    }

    // MARK: - Resuming an existing file

    private func resume() throws(RecordWriteError) {
        let size = lseek(descriptor, 0, SEEK_END)
        guard size > 0 else {
            if format == .json { try writeAll(Array("[\n\n]\n".utf8), at: 0) }
            return
        }
        let contents = readAll(size: Int(size))
        switch format {
        case .csv:
            // Drop a row cut short by a crash, then check the header is ours.
            if let lastNewline = contents.lastIndex(of: UInt8(ascii: "\n")) {
                if lastNewline + 1 < contents.count { ftruncate(descriptor, off_t(lastNewline + 1)) }
            } else {
                ftruncate(descriptor, 0)
                return
            }
            let firstLine = String(decoding: contents.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
            let expected = labels.header(csvLayout == .wide ? SnapshotCSV.wideHeader : SnapshotCSV.longHeader)
                .trimmingCharacters(in: .newlines)
            let header = firstLine.trimmingCharacters(in: .newlines)
            let withoutSlot =
                csvLayout == .wide && header == SnapshotCSV.wideHeaderWithoutSlot.trimmingCharacters(in: .newlines)
            guard header == expected || withoutSlot else {
                throw RecordWriteError(
                    message:
                        "\(path ?? "output") already holds CSV with other columns; write to a new file, or use the same --csv-layout as before"
                )
            }
            progress.withLock {
                $0.headerWritten = true
                $0.slotColumn = !withoutSlot
            }
        case .ndjson:
            if let lastNewline = contents.lastIndex(of: UInt8(ascii: "\n")) {
                if lastNewline + 1 < contents.count { ftruncate(descriptor, off_t(lastNewline + 1)) }
            } else {
                ftruncate(descriptor, 0)
            }
            if let first = contents.split(separator: UInt8(ascii: "\n")).first,
                (try? JSONParser.parse(bytes: Array(first)))?["schema"] == nil
            {
                throw RecordWriteError(
                    message: "\(path ?? "output") does not hold hostscope NDJSON records; write to a new file")
            }
        case .json:
            try repairJSONArray(contents)
        }
    }

    /// Keeps the whole record lines of an existing array and rewrites its end, so appending
    /// continues the same array. A file that is not such an array is refused.
    private func repairJSONArray(_ contents: [UInt8]) throws(RecordWriteError) {
        let lines = contents.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        guard let first = lines.first, first.elementsEqual("[".utf8) else {
            throw RecordWriteError(
                message: "\(path ?? "output") is not a JSON array written by hostscope; write to a new file")
        }
        var keptBytes = 2  // "[\n"
        var count = 0
        for line in lines.dropFirst() {
            var record = Array(line)
            if record.last == UInt8(ascii: ",") { record.removeLast() }
            guard record.first == UInt8(ascii: "{"), (try? JSONParser.parse(bytes: record)) != nil else { break }
            keptBytes += record.count + (count == 0 ? 0 : 2)
            count += 1
        }
        // Rebuild from the kept records: "[\n" rec (",\n" rec)* "\n]\n".
        ftruncate(descriptor, off_t(keptBytes))
        try writeAll(Array("\n]\n".utf8), at: off_t(keptBytes))
        progress.withLock { $0.jsonCount = count }
    }

    private func readAll(size: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: size)
        var offset = 0
        while offset < size {
            let count = bytes[offset...].withUnsafeMutableBytes {
                pread(descriptor, $0.baseAddress, $0.count, off_t(offset))
            }
            if count <= 0 { break }
            offset += count
        }
        return Array(bytes.prefix(offset))
    }

    private func append(_ bytes: [UInt8]) throws(RecordWriteError) {
        if let sink {
            try sink(bytes)
        } else {
            try Self.writeAll(bytes, to: descriptor, path: path)
        }
    }

    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32, path: String?) throws(RecordWriteError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw failure(errno, path: path)
            }
            offset += written
        }
    }

    private func writeAll(_ bytes: [UInt8], at position: off_t) throws(RecordWriteError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                pwrite(descriptor, $0.baseAddress, $0.count, position + off_t(offset))
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw Self.failure(errno, path: path)
            }
            offset += written
        }
    }

    /// The error of a failed write: what happened and what to do.
    public static func failure(_ code: Int32, path: String?) -> RecordWriteError {
        let target = path ?? "standard output"
        if code == ENOSPC {
            return RecordWriteError(
                message:
                    "cannot write to \(target): the disk is full; free space or choose another --output (records still go to the history database)"
            )
        }
        if code == EPIPE {
            return RecordWriteError(message: "standard output was closed", readerClosed: path == nil)
        }
        return RecordWriteError(
            message:
                "cannot write to \(target): \(String(cString: strerror(code))) (records still go to the history database)"
        )
    }
}
