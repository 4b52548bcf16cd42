public import Foundation
import Synchronization
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// A user on the host racing hostscope: exchanges two paths (a file and a symbolic link, or a
/// directory and a link) with `renameat2(RENAME_EXCHANGE)` as fast as it can, on a thread of its
/// own, until stopped. Each exchange is atomic, so a reader always finds one of the two there.
public final class PathSwapper: Sendable {
    private let first: String
    private let second: String
    private let stopping = Atomic<Bool>(false)
    private let swaps = Atomic<Int>(0)
    private let finished = DispatchSemaphore(value: 0)
    private let failure = Lock<String?>(nil)

    /// glibc's `renameat2`, which Glibc's module map hides behind _GNU_SOURCE.
    private static let renameat2:
        (
            @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32)
                -> Int32
        )? = {
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "renameat2") else { return nil }
            return unsafeBitCast(
                symbol,
                to: (@convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32).self)
        }()
    private static let exchange: UInt32 = 2  // RENAME_EXCHANGE

    /// Swaps `first` and `second` (both must exist) once `start()` is called.
    public init(exchanging first: String, with second: String) {
        self.first = first
        self.second = second
    }

    /// Starts swapping; fails when this system cannot exchange the two paths.
    public func start() throws {
        guard let renameat2 = Self.renameat2 else { throw HarnessError(description: "renameat2 is not available") }
        guard renameat2(AT_FDCWD, first, AT_FDCWD, second, Self.exchange) == 0 else {
            throw HarnessError(
                description: "cannot exchange \(first) and \(second): \(String(cString: strerror(errno)))")
        }
        swaps.add(1, ordering: .relaxed)
        let thread = Thread { [self] in
            while !stopping.load(ordering: .relaxed) {
                if renameat2(AT_FDCWD, first, AT_FDCWD, second, Self.exchange) != 0 {
                    failure.withLock { $0 = String(cString: strerror(errno)) }
                    break
                }
                swaps.add(1, ordering: .relaxed)
            }
            finished.signal()
        }
        thread.start()
    }

    /// Stops swapping, leaving the paths as they were at the start, and returns how many exchanges were made.
    @discardableResult
    public func stop() throws -> Int {
        stopping.store(true, ordering: .relaxed)
        finished.wait()
        if let failure = failure.withLock({ $0 }) { throw HarnessError(description: "exchange failed: \(failure)") }
        if swaps.load(ordering: .relaxed) % 2 == 1, let renameat2 = Self.renameat2 {
            _ = renameat2(AT_FDCWD, first, AT_FDCWD, second, Self.exchange)
        }
        return swaps.load(ordering: .relaxed)
    }
}

/// A workspace and a directory beside it that the workspace must not reach, for race tests:
/// `BASE/ws` (the root) and `BASE/outside`, each holding files whose lines start with `LINE`.
///
/// Outside files hold ``secret``; the workspace's decoys are made the same size, owner, mode
/// and modification time, so that only where a handle leads tells them apart.
public struct RaceTree: Sendable {
    public let base: String
    public var workspace: String { base + "/ws" }
    public var outside: String { base + "/outside" }
    /// What every file outside holds: reading it through the workspace is an escape.
    public let secret = "LINE TOP-SECRET outside the workspace\n"
    /// What the workspace's decoys hold (as long as ``secret``).
    public var decoy: String {
        "LINE decoy".padding(toLength: secret.utf8.count - 1, withPad: ".", startingAt: 0) + "\n"
    }

    /// - Parameter decoyOwner: the user owning the workspace's files (the one who swaps them);
    ///   `nil` leaves them to the test's own user, who also owns the outside files.
    public init(decoyOwner: uid_t? = nil) throws {
        base = NSTemporaryDirectory() + "hostscope-race-\(UUID().uuidString)"
        let manager = FileManager.default
        try manager.createDirectory(atPath: workspace + "/sub", withIntermediateDirectories: true)
        try manager.createDirectory(atPath: outside, withIntermediateDirectories: true)
        for directory in [base, workspace, workspace + "/sub", outside] { chmod(directory, 0o755) }
        let stamp = Date(timeIntervalSince1970: 1_700_000_000)
        func write(_ text: String, _ path: String) throws {
            try text.write(toFile: path, atomically: false, encoding: .utf8)
            chmod(path, 0o644)
            try manager.setAttributes([.modificationDate: stamp], ofItemAtPath: path)
        }
        try write(secret, outside + "/secret.txt")
        try write(secret, outside + "/inside.txt")
        try write(decoy, workspace + "/race")
        try write(decoy, workspace + "/sub/inside.txt")
        try write(decoy, workspace + "/plain.txt")
        try manager.createSymbolicLink(atPath: workspace + "/.race-link", withDestinationPath: "../outside/secret.txt")
        try manager.createSymbolicLink(atPath: workspace + "/.sub-link", withDestinationPath: "../outside")
        try manager.setAttributes([.modificationDate: stamp], ofItemAtPath: workspace + "/sub")
        try manager.setAttributes([.modificationDate: stamp], ofItemAtPath: outside)
        if let decoyOwner {
            for path in [workspace, workspace + "/race", workspace + "/sub", workspace + "/sub/inside.txt"] {
                guard lchown(path, decoyOwner, gid_t.max) == 0 else {
                    throw HarnessError(description: "cannot chown \(path): \(String(cString: strerror(errno)))")
                }
            }
        }
    }

    /// A swapper exchanging the file `ws/race` with a link to `outside/secret.txt`.
    public func fileSwapper() -> PathSwapper {
        PathSwapper(exchanging: workspace + "/race", with: workspace + "/.race-link")
    }

    /// A swapper exchanging the directory `ws/sub` with a link to `outside`.
    public func directorySwapper() -> PathSwapper {
        PathSwapper(exchanging: workspace + "/sub", with: workspace + "/.sub-link")
    }

    public func remove() {
        try? FileManager.default.removeItem(atPath: base)
    }
}
