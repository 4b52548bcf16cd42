public import Foundation
import Synchronization
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// A directory tree in /tmp for the Files tests, readable by the harness's SSH user (the harness
/// host is this machine), with the awkward cases a remote workspace can hold.
public struct FilesTestTree: Sendable {
    /// The tree's absolute path.
    public let root: String
    /// Names that would do harm if they ever reached a shell, each a file holding "needle".
    /// A name cannot hold a slash, so `$(touch /tmp/hostscope-pwned)` is also made as a path
    /// (``hostilePath``).
    public static let hostileNames: [[UInt8]] = [
        Array("$(touch hostscope-pwned)".utf8), Array("; rm -rf ~".utf8), Array("-rf".utf8), Array("--".utf8),
        Array("new\nline".utf8), Array("quote'\"s".utf8), Array("back\\slash".utf8),
        Array("`touch hostscope-pwned`".utf8), Array("esc\u{1B}[31mred".utf8),
    ]
    /// `odd/$(touch /tmp/hostscope-pwned)`: directories `$(touch ` and `tmp` holding the file
    /// `hostscope-pwned)`.
    public static let hostilePath = "odd/$(touch /tmp/hostscope-pwned)"
    /// Where a command smuggled in by a hostile name would leave its mark.
    public static func pwnedMarkers(home: String) -> [String] {
        [
            "/tmp/hostscope-pwned", home + "/hostscope-pwned",
            FileManager.default.currentDirectoryPath + "/hostscope-pwned",
        ]
    }
    /// A Latin-1 name, not valid UTF-8 ("café.txt").
    public static let latin1Name: [UInt8] = Array("caf".utf8) + [0xE9] + Array(".txt".utf8)
    /// `line 1\n` … `line 1000\n`.
    public static let numberedText: String = (1...1000).map { "line \($0)\n" }.joined()

    /// Builds a fresh tree.
    public init(prefix: String = "hostscope-files") throws {
        root = NSTemporaryDirectory() + "\(prefix)-\(UUID().uuidString)"
        let manager = FileManager.default
        try manager.createDirectory(atPath: root + "/src/deep/deeper", withIntermediateDirectories: true)
        try manager.createDirectory(atPath: root + "/odd", withIntermediateDirectories: true)
        try manager.createDirectory(atPath: root + "/locked", withIntermediateDirectories: true)
        try write("hello\nworld\n", "hello.txt")
        try write("upper case sorts first in C\n", "Zed.txt")
        try write(Self.numberedText, "numbered.log")
        try write("print('needle')\nNEEDLE = 1\n", "src/app.py")
        try write("needle in js\n", "src/app.js")
        try write("# needle\n", "src/deep/notes.md")
        try write("deep needle\n", "src/deep/deeper/x.py")
        try write("hidden needle\n", ".env")
        try write("secret\n", "locked/secret.txt")
        try write("secret needle\n", "forbidden.txt")
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D]
        png += Array(0..<200).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        try Data(png).write(to: URL(fileURLWithPath: root + "/image.png"))
        for name in Self.hostileNames { try Self.createFile(root + "/odd/", name, contents: Array("needle\n".utf8)) }
        try manager.createDirectory(atPath: root + "/odd/$(touch /tmp", withIntermediateDirectories: true)
        try write("needle\n", Self.hostilePath)
        try Self.createFile(root + "/", Self.latin1Name, contents: Array("latin-1 needle\n".utf8))
        try manager.createSymbolicLink(atPath: root + "/link", withDestinationPath: "hello.txt")
        try manager.createSymbolicLink(atPath: root + "/srclink", withDestinationPath: "src")
        try manager.createSymbolicLink(atPath: root + "/outside", withDestinationPath: "/etc")
        try manager.createSymbolicLink(atPath: root + "/outside-file", withDestinationPath: "/etc/hostname")
        try manager.createSymbolicLink(atPath: root + "/loop-a", withDestinationPath: "loop-b")
        try manager.createSymbolicLink(atPath: root + "/loop-b", withDestinationPath: "loop-a")
        try manager.createSymbolicLink(atPath: root + "/dangling", withDestinationPath: "nowhere")
        try manager.createSymbolicLink(atPath: root + "/src/deep/up", withDestinationPath: "../..")
        for path in allPaths() {
            var status = stat()
            let terminated = path + [0]
            terminated.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { name in
                    guard lstat(name.baseAddress!, &status) == 0 else { return }
                    if status.st_mode & S_IFMT == S_IFDIR { chmod(name.baseAddress!, 0o755) }
                    if status.st_mode & S_IFMT == S_IFREG { chmod(name.baseAddress!, 0o644) }
                }
            }
        }
        chmod(root + "/locked", 0o000)
        chmod(root + "/forbidden.txt", 0o000)
    }

    /// Writes a UTF-8 file at `relative`.
    public func write(_ text: String, _ relative: String) throws {
        try text.write(toFile: root + "/" + relative, atomically: false, encoding: .utf8)
        chmod(root + "/" + relative, 0o644)
    }

    /// Every path in the tree as bytes (links not followed), the root included, sorted.
    public func allPaths() -> [[UInt8]] {
        var result: [[UInt8]] = []
        func visit(_ path: [UInt8]) {
            result.append(path)
            let terminated = path + [0]
            let directory = terminated.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { opendir($0.baseAddress!) }
            }
            guard let directory else { return }
            var children: [[UInt8]] = []
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    Array(raw.prefix(while: { $0 != 0 }))
                }
                if name == [0x2E] || name == [0x2E, 0x2E] { continue }
                children.append(path + [0x2F] + name)
                if entry.pointee.d_type != UInt8(DT_DIR) { result.append(path + [0x2F] + name) }
            }
            closedir(directory)
            for child in children {
                var status = stat()
                let child0 = child + [0]
                let isDirectory =
                    child0.withUnsafeBufferPointer { buffer in
                        buffer.withMemoryRebound(to: CChar.self) { lstat($0.baseAddress!, &status) == 0 }
                    } && status.st_mode & S_IFMT == S_IFDIR
                if isDirectory { visit(child) }
            }
        }
        visit(Array(root.utf8))
        return Array(Set(result)).sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// Creates a file whose name is arbitrary bytes in `directory` (which ends with `/`).
    public static func createFile(_ directory: String, _ name: [UInt8], contents: [UInt8], mode: mode_t = 0o644) throws
    {
        let path = Array(directory.utf8) + name + [0]
        let descriptor = path.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_CREAT | O_WRONLY | O_TRUNC, mode) }
        }
        guard descriptor >= 0 else { throw HarnessError(description: "cannot create \(directory)\(name)") }
        defer { close(descriptor) }
        _ = contents.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        path.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { _ = chmod($0.baseAddress!, mode) }
        }
    }

    /// `count` empty files `f00000` … in a new directory `name`.
    public func makeHugeDirectory(_ name: String, count: Int) throws -> String {
        let directory = root + "/" + name
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, 0o755)
        for index in 0..<count {
            let digits = String(index)
            let fd = open(
                directory + "/f" + String(repeating: "0", count: max(0, 5 - digits.count)) + digits, O_CREAT | O_WRONLY,
                0o644)
            if fd >= 0 { close(fd) }
        }
        return directory
    }

    /// A file of `size` random bytes at `relative` (one read of /dev/urandom per MiB).
    @discardableResult
    public func makeRandomFile(_ relative: String, size: Int) throws -> String {
        let path = root + "/" + relative
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw HarnessError(description: "cannot create \(path)")
        }
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        let random = FileHandle(forReadingAtPath: "/dev/urandom")
        var remaining = size
        while remaining > 0 {
            let chunk = random?.readData(ofLength: min(remaining, 1 << 20)) ?? Data()
            output.write(chunk)
            remaining -= chunk.count
        }
        try output.close()
        try random?.close()
        chmod(path, 0o644)
        return path
    }

    /// Removes the tree (restoring permissions first so that removal can enter everything).
    public func remove() {
        chmod(root + "/locked", 0o755)
        try? FileManager.default.removeItem(atPath: root)
    }

    /// Removes the tree when the test process exits (for trees shared by a suite's tests).
    public func removeAtExit() -> FilesTestTree {
        Self.removeAtExit(root)
        return self
    }

    /// Removes `path` (a file or directory) when the test process exits.
    public static func removeAtExit(_ path: String) {
        cleanup.withLock { paths in
            if paths.isEmpty {
                atexit {
                    for path in FilesTestTree.cleanup.withLock({ $0 }) {
                        chmod(path + "/locked", 0o755)
                        try? FileManager.default.removeItem(atPath: path)
                    }
                }
            }
            paths.append(path)
        }
    }

    private static let cleanup = Lock<[String]>([])
}

/// Size, modification and change times of a path, as lstat reports them on this machine.
public struct FileStamp: Equatable, Sendable, CustomStringConvertible {
    public var size: Int64
    public var modification: timespec
    public var change: timespec

    public static func == (lhs: FileStamp, rhs: FileStamp) -> Bool {
        lhs.size == rhs.size && lhs.modification.tv_sec == rhs.modification.tv_sec
            && lhs.modification.tv_nsec == rhs.modification.tv_nsec && lhs.change.tv_sec == rhs.change.tv_sec
            && lhs.change.tv_nsec == rhs.change.tv_nsec
    }

    public var description: String {
        "size \(size) mtime \(modification.tv_sec).\(modification.tv_nsec) ctime \(change.tv_sec).\(change.tv_nsec)"
    }

    /// Stamps of every path in `paths` (bytes).
    public static func record(_ paths: [[UInt8]]) -> [[UInt8]: FileStamp] {
        var stamps: [[UInt8]: FileStamp] = [:]
        for path in paths {
            var status = stat()
            let terminated = path + [0]
            let found = terminated.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { lstat($0.baseAddress!, &status) == 0 }
            }
            guard found else { continue }
            stamps[path] = FileStamp(size: Int64(status.st_size), modification: status.st_mtim, change: status.st_ctim)
        }
        return stamps
    }
}
