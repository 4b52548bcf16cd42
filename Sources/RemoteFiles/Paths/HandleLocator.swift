import SSHTransport
import Synchronization
import ValueFormats

/// Asks the server where an open handle leads, through `/proc/self/fd` of the server's own process.
///
/// SFTP v3 opens by name only (no `openat`, no `O_NOFOLLOW`, no inode in the attributes), so
/// between resolving a name and opening it, a user who may write in the workspace can put a
/// symbolic link there, and no check by name before or after the open can prove which file the
/// handle holds: every such check looks the name up again, at another moment. On Linux the
/// server's process can read where each of its descriptors leads (`readlink /proc/self/fd/N`,
/// the kernel's path of the opened file, not a name looked up again), and a `READLINK` request is
/// all it takes to ask. Where the server has no such directory (macOS and BSD servers, a
/// `ChrootDirectory` without `/proc`), ``confirm(_:on:)`` says so, and the caller falls back to
/// checks by name.
///
/// A handle counts as confirmed when one of the server's descriptors leads to the expected path.
/// That is sound as long as the session holds no other handle on the same path at the time,
/// which the browser never does (it closes each file and directory before it opens the next).
final class HandleLocator: Sendable {
    enum Finding: Equatable {
        /// A descriptor of the server's process leads to the expected path.
        case confirmed
        /// The server reads its descriptors and none leads there: the handle holds another file.
        case elsewhere
        /// The server cannot tell (no `/proc/self/fd`, or its entries are not links).
        case unavailable
    }

    private struct State {
        /// `nil` until the first look; `false` once the server showed it cannot tell.
        var available: Bool?
        /// The descriptor the last confirmed handle had: the server hands out the lowest free
        /// number, so the next handle usually has it too and one request confirms it.
        var lastDescriptor: [UInt8]?
    }

    private let state: Lock<State>

    /// - Parameter enabled: `false` skips the server's `/proc` (for testing the checks by name).
    init(enabled: Bool = true) {
        state = Lock(State(available: enabled ? nil : false))
    }

    private static let descriptorLinks = RemotePath("/proc/self/fd")

    /// Whether a descriptor of the server's process leads to `expected`, a canonical path.
    func confirm(_ expected: RemotePath, on session: SSHSession) async -> Finding {
        let (available, last) = state.withLock { ($0.available, $0.lastDescriptor) }
        if available == false { return .unavailable }
        if let last, let target = try? await session.readlink(Self.descriptorLinks.appending(last)), target == expected
        {
            return .confirmed
        }
        guard let descriptors = await listDescriptors(on: session) else {
            state.withLock { if $0.available == nil { $0.available = false } }
            return .unavailable
        }
        var readable = false
        // Newest first: the handle just opened has one of the highest numbers.
        for name in descriptors.reversed() {
            guard let target = try? await session.readlink(Self.descriptorLinks.appending(name)) else { continue }
            readable = true
            if target == expected {
                state.withLock {
                    $0.available = true
                    $0.lastDescriptor = name
                }
                return .confirmed
            }
        }
        if readable {
            state.withLock { $0.available = true }
            return .elsewhere
        }
        state.withLock { if $0.available == nil { $0.available = false } }
        return available == true ? .elsewhere : .unavailable
    }

    /// The descriptor numbers of the server's process, in numeric order; `nil` when it cannot list them.
    private func listDescriptors(on session: SSHSession) async -> [[UInt8]]? {
        guard let handle = try? await session.openDirectory(Self.descriptorLinks) else { return nil }
        var numbers: [Int] = []
        while let batch = try? await handle.next(maxEntries: 1024), !batch.isEmpty {
            for entry in batch {
                if let number = Int(String(decoding: entry.name, as: UTF8.self)), number >= 0 {
                    numbers.append(number)
                }
            }
        }
        await handle.close()
        return numbers.isEmpty ? nil : numbers.sorted().map { Array(String($0).utf8) }
    }
}
