import Foundation
import HeapModule
import SSHTransport

#if canImport(Glibc)
    import Glibc
#endif

/// Sorts directory entries by name in byte order with bounded memory.
///
/// Entries collect in memory up to `limit`; each time it is reached they are sorted and written
/// as a run to an unlinked temporary file. At the end the runs and the in-memory remainder are
/// merged through a heap of their heads, a batch at a time. A directory below the limit never touches
/// the disk.
final class ExternalSorter {
    private let limit: Int
    private let directory: String
    private var buffer: [ListedName] = []
    private var runs: [RunReader] = []
    private var memoryCursor = 0
    private var finished = false
    /// The next name of each run, and of the in-memory remainder.
    private var heads = Heap<MergeHead>()
    private(set) var peakBuffered = 0

    init(limit: Int, directory: String) {
        self.limit = max(1, limit)
        self.directory = directory
    }

    var runCount: Int { runs.count }

    func add(_ names: [ListedName]) throws {
        for name in names {
            buffer.append(name)
            peakBuffered = max(peakBuffered, buffer.count)
            if buffer.count >= limit { try spill() }
        }
    }

    /// Sorts what is left in memory; call once, after the last ``add(_:)``.
    func finishInput() throws {
        buffer.sort { $0.name.lexicographicallyPrecedes($1.name) }
        memoryCursor = 0
        finished = true
        if let first = buffer.first { heads.insert(MergeHead(name: first.name, source: MergeHead.memory)) }
        for (index, run) in runs.enumerated() {
            if let head = try run.head() { heads.insert(MergeHead(name: head.name, source: index)) }
        }
    }

    /// Up to `size` further entries in order; `nil` when all were returned.
    func nextBatch(_ size: Int) throws -> [ListedName]? {
        precondition(finished, "finishInput() first")
        var batch: [ListedName] = []
        while batch.count < size, let smallest = heads.popMin() {
            if smallest.source == MergeHead.memory {
                batch.append(buffer[memoryCursor])
                memoryCursor += 1
                if memoryCursor < buffer.count {
                    heads.insert(MergeHead(name: buffer[memoryCursor].name, source: MergeHead.memory))
                }
            } else {
                let run = runs[smallest.source]
                batch.append(try run.take())
                if let next = try run.head() { heads.insert(MergeHead(name: next.name, source: smallest.source)) }
            }
        }
        if memoryCursor == buffer.count && !buffer.isEmpty {
            buffer = []
            memoryCursor = 0
        }
        return batch.isEmpty ? nil : batch
    }

    private func spill() throws {
        buffer.sort { $0.name.lexicographicallyPrecedes($1.name) }
        let writer = try RunReader.create(in: directory)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(1 << 16)
        for name in buffer {
            RunRecord.encode(name, into: &bytes)
            if bytes.count >= 1 << 16 {
                try writer.write(bytes)
                bytes.removeAll(keepingCapacity: true)
            }
        }
        try writer.write(bytes)
        try writer.rewind()
        runs.append(writer)
        buffer.removeAll(keepingCapacity: true)
    }
}

/// The next name of one source of the merge: byte order, and the in-memory remainder before the runs
/// on a tie.
private struct MergeHead: Comparable {
    /// The source of the in-memory remainder; runs are numbered from 0.
    static let memory = -1

    var name: [UInt8]
    var source: Int

    static func < (lhs: MergeHead, rhs: MergeHead) -> Bool {
        if lhs.name == rhs.name { return lhs.source < rhs.source }
        return lhs.name.lexicographicallyPrecedes(rhs.name)
    }
}

/// A sorted run in an unlinked temporary file, read back through a small buffer.
final class RunReader {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var position = 0
    private var endOfFile = false
    private var pending: ListedName?

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    static func create(in folder: String) throws -> RunReader {
        var template =
            Array((folder.hasSuffix("/") ? folder : folder + "/").utf8)
            + Array("hostscope-ls-XXXXXX".utf8) + [0]
        let descriptor = template.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { mkstemp($0.baseAddress!) }
        }
        guard descriptor >= 0 else {
            throw RemoteFilesError(
                .localFile,
                "cannot create a temporary file in \(folder) to sort a large directory (\(String(cString: strerror(errno)))); set TMPDIR to a writable directory"
            )
        }
        // Unlinked at once: the run disappears with the descriptor, even if the process dies.
        template.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { _ = unlink($0.baseAddress!) }
        }
        return RunReader(descriptor: descriptor)
    }

    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw RemoteFilesError(
                    .localFile,
                    "cannot write a temporary file to sort a large directory (\(String(cString: strerror(errno)))); free space in TMPDIR or list with --unsorted"
                )
            }
            offset += written
        }
    }

    func rewind() throws {
        lseek(descriptor, 0, SEEK_SET)
    }

    func head() throws -> ListedName? {
        if let pending { return pending }
        pending = try readRecord()
        return pending
    }

    func take() throws -> ListedName {
        guard let value = try head() else { preconditionFailure("take() after the end of a run") }
        pending = nil
        return value
    }

    private func readRecord() throws -> ListedName? {
        while true {
            if let (record, length) = RunRecord.decode(buffer, from: position) {
                position += length
                return record
            }
            if endOfFile { return nil }
            // Keep the unread tail and refill.
            buffer.removeFirst(position)
            position = 0
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw RemoteFilesError(.localFile, "cannot read back a temporary file while sorting a large directory")
            }
            if count == 0 { endOfFile = true }
            buffer += chunk[0..<count]
        }
    }
}

/// The on-disk form of a ``ListedName`` in a sorted run.
enum RunRecord {
    static func encode(_ name: ListedName, into bytes: inout [UInt8]) {
        let attributes = name.attributes
        appendUInt32(UInt32(name.name.count), &bytes)
        bytes += name.name
        var flags: UInt8 = 0
        if attributes.size != nil { flags |= 1 }
        if attributes.uid != nil { flags |= 2 }
        if attributes.gid != nil { flags |= 4 }
        if attributes.permissions != nil { flags |= 8 }
        if attributes.accessTime != nil { flags |= 16 }
        if attributes.modificationTime != nil { flags |= 32 }
        if name.owner != nil { flags |= 64 }
        if name.group != nil { flags |= 128 }
        bytes.append(flags)
        let size = attributes.size ?? 0
        appendUInt32(UInt32(truncatingIfNeeded: size >> 32), &bytes)
        appendUInt32(UInt32(truncatingIfNeeded: size), &bytes)
        for value in [
            attributes.uid, attributes.gid, attributes.permissions, attributes.accessTime, attributes.modificationTime,
        ] {
            appendUInt32(value ?? 0, &bytes)
        }
        for text in [name.owner, name.group] {
            let utf8 = Array((text ?? "").utf8)
            appendUInt32(UInt32(utf8.count), &bytes)
            bytes += utf8
        }
    }

    /// The record at `offset` and its length, or `nil` when `bytes` holds only part of it.
    static func decode(_ bytes: [UInt8], from offset: Int) -> (ListedName, Int)? {
        var cursor = offset
        func uint32() -> UInt32? {
            guard cursor + 4 <= bytes.count else { return nil }
            defer { cursor += 4 }
            return UInt32(bytes[cursor]) << 24 | UInt32(bytes[cursor + 1]) << 16 | UInt32(bytes[cursor + 2]) << 8
                | UInt32(bytes[cursor + 3])
        }
        func take(_ count: Int) -> [UInt8]? {
            guard cursor + count <= bytes.count else { return nil }
            defer { cursor += count }
            return Array(bytes[cursor..<cursor + count])
        }
        guard let nameLength = uint32(), let name = take(Int(nameLength)), let flagByte = take(1) else { return nil }
        let flags = flagByte[0]
        guard let sizeHigh = uint32(), let sizeLow = uint32(), let uid = uint32(), let gid = uint32(),
            let permissions = uint32(), let accessTime = uint32(), let modificationTime = uint32(),
            let ownerLength = uint32(), let owner = take(Int(ownerLength)), let groupLength = uint32(),
            let group = take(Int(groupLength))
        else { return nil }
        let attributes = SFTPAttributes(
            size: flags & 1 != 0 ? UInt64(sizeHigh) << 32 | UInt64(sizeLow) : nil,
            uid: flags & 2 != 0 ? uid : nil, gid: flags & 4 != 0 ? gid : nil,
            permissions: flags & 8 != 0 ? permissions : nil, accessTime: flags & 16 != 0 ? accessTime : nil,
            modificationTime: flags & 32 != 0 ? modificationTime : nil)
        let record = ListedName(
            name: name, attributes: attributes,
            owner: flags & 64 != 0 ? String(decoding: owner, as: UTF8.self) : nil,
            group: flags & 128 != 0 ? String(decoding: group, as: UTF8.self) : nil)
        return (record, cursor - offset)
    }

    private static func appendUInt32(_ value: UInt32, _ bytes: inout [UInt8]) {
        bytes += [
            UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8),
            UInt8(truncatingIfNeeded: value),
        ]
    }
}
