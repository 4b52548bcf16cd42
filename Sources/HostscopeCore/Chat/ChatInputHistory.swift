public import Foundation
import OrderedJSON
public import Storage

#if canImport(Glibc)
    import Glibc
#endif

/// The lines typed in interactive chats, kept across runs: `chat-history` in hostscope's data directory
/// (`$XDG_DATA_HOME/hostscope`, else `~/.local/share/hostscope`), mode 0600, one JSON string per line.
///
/// A line is kept unless it is empty, starts with a space (as shells leave such lines out of their history) or
/// looks like it holds a secret (``TypedSecrets``); a line equal to the one before is kept once, and lines longer
/// than ``maximumLineBytes`` are left out. The file holds the last ``limit`` lines: each run reads them, appends
/// each new line as it is typed (so that two chats at once both keep theirs), and rewrites the file to the last
/// `limit` when it has grown past them by a tenth. A file that cannot be read or written costs the history, with
/// one warning, never the chat.
public struct ChatInputHistory {
    /// The file's name in the data directory.
    public static let fileName = "chat-history"
    /// How many lines are kept by default.
    public static let defaultLimit = 1000
    /// Lines longer than this (a large paste) are not kept.
    public static let maximumLineBytes = 16 * 1024

    /// The file.
    public let path: String
    /// Whether new lines are written to the file (not with `--no-history`, which still offers the lines of
    /// earlier runs).
    public let persists: Bool
    /// How many lines the file keeps.
    public let limit: Int
    /// The lines read and kept so far, oldest first.
    public private(set) var lines: [String] = []
    private let diagnostics: Diagnostics
    /// Lines in the file as far as this run knows: read, plus appended.
    private var linesInFile = 0
    private var failed = false

    /// The file in hostscope's data directory for this environment.
    public static func defaultPath(environment: [String: String]) -> String {
        (DatabaseLocation.dataDirectory(environment: environment) as NSString).appendingPathComponent(fileName)
    }

    /// Reads the history at `path`; with `persists`, new lines are appended to it.
    public init(path: String, persists: Bool, limit: Int = defaultLimit, diagnostics: Diagnostics) {
        self.path = path
        self.persists = persists
        self.limit = max(1, limit)
        self.diagnostics = diagnostics
        tightenMode()
        let stored = read()
        linesInFile = stored.count
        lines = Array(stored.suffix(self.limit))
        if persists, stored.count > self.limit { rewrite(lines) }
    }

    /// Whether `line` may be kept.
    public func keeps(_ line: String) -> Bool {
        guard let first = line.first, first != " ", first != "\t" else { return false }
        guard !line.allSatisfy(\.isWhitespace), line.utf8.count <= Self.maximumLineBytes else { return false }
        return !TypedSecrets.looksSecret(line)
    }

    /// Keeps `line` if it may be kept (``keeps(_:)``) and differs from the last one; whether it was.
    @discardableResult
    public mutating func record(_ line: String) -> Bool {
        guard keeps(line), line != lines.last else { return false }
        lines.append(line)
        if lines.count > limit { lines.removeFirst(lines.count - limit) }
        guard persists, !failed else { return true }
        append(line)
        if linesInFile > limit + max(1, limit / 10) {
            // Another chat may have appended too: keep the file's own last lines, not this run's.
            rewrite(Array(read().suffix(limit)))
        }
        return true
    }

    // MARK: - The file

    private func read() -> [String] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return data.split(separator: UInt8(ascii: "\n")).compactMap { line in
            guard case .string(let text)? = try? JSONParser.parse(bytes: Array(line)) else { return nil }
            return text
        }
    }

    private mutating func append(_ line: String) {
        guard createDirectory() else { return }
        var bytes: [UInt8] = []
        JSONWriter.appendString(line, into: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return fail("cannot write") }
        defer { close(descriptor) }
        guard writeAll(descriptor, bytes) else { return fail("cannot write") }
        linesInFile += 1
    }

    /// Replaces the file with `lines`, through a new file renamed over it.
    private mutating func rewrite(_ lines: [String]) {
        guard createDirectory() else { return }
        var bytes: [UInt8] = []
        for line in lines {
            JSONWriter.appendString(line, into: &bytes)
            bytes.append(UInt8(ascii: "\n"))
        }
        let temporary = path + ".\(getpid()).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return fail("cannot write") }
        let written = writeAll(descriptor, bytes)
        close(descriptor)
        guard written, rename(temporary, path) == 0 else {
            unlink(temporary)
            return fail("cannot write")
        }
        linesInFile = lines.count
    }

    private mutating func createDirectory() -> Bool {
        let directory = (path as NSString).deletingLastPathComponent
        guard !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) else { return true }
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            return true
        } catch {
            fail("cannot create the directory of")
            return false
        }
    }

    /// A history file others can read is made the owner's alone, with a note, as the database is.
    private func tightenMode() {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_mode & 0o077 != 0 else { return }
        let old = String(status.st_mode & 0o777, radix: 8)
        if chmod(path, 0o600) == 0 {
            diagnostics.note("the chat history \(path) was open to other users (mode 0\(old)); it is now 0600")
        } else {
            diagnostics.warning(
                "the chat history \(path) is open to other users (mode 0\(old)); run: chmod 600 \(path)")
        }
    }

    private mutating func fail(_ what: String, _ code: Int32 = errno) {
        let reason = String(cString: strerror(code))
        failed = true
        diagnostics.warning(
            "\(what) the chat history \(path) (\(reason)); lines typed in this chat are not kept for the next one")
    }

    private func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }
}
