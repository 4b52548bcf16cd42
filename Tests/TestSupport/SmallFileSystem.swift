import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A small tmpfs mounted for one test: a real file system that runs out of space.
public final class SmallFileSystem {
    /// Where it is mounted.
    public let path: String

    /// Whether this process may mount one (root with mount rights, as in CI's container).
    public static let available: Bool = {
        guard geteuid() == 0, let probe = try? SmallFileSystem(kilobytes: 64) else { return false }
        probe.unmount()
        return true
    }()

    /// Mounts a tmpfs of `kilobytes` in a new temporary directory.
    public init(kilobytes: Int) throws {
        path = NSTemporaryDirectory() + "hostscope-full-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs", path]) else {
            try? FileManager.default.removeItem(atPath: path)
            throw CocoaError(.fileWriteNoPermission)
        }
    }

    /// A path inside it.
    public func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    /// Unmounts it (lazily, should a file still be open) and removes its directory.
    public func unmount() {
        _ = Self.run("/bin/umount", ["-l", path])
        try? FileManager.default.removeItem(atPath: path)
    }

    private static func run(_ tool: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
