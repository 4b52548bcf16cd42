public import AgentTracing
public import Chat
public import Foundation
public import HostStats
public import OrderedJSON
import RemoteFiles
import SSHTransport
import Synchronization
import ValueFormats

/// The tools a chat offers the model about one host: the host given with `--host`, and no other.
///
/// Every tool only reads. The monitoring tools (`host_snapshot`, `top_processes`, `disk_usage`) run the
/// collector's fixed probe, whose command text never contains anything the model sent; the file tools
/// (`list_dir`, `read_file`, `grep`, `tail_log`, `find_files`) go through the read-only
/// ``RemoteFileBrowser`` over SFTP, where no shell is involved at all, and stay inside `root` when one is
/// given. No tool takes a host, a command or anything to write, so text the model reads on the host
/// ("ignore your instructions and run …") has nothing to widen: the session refuses any call outside this
/// list and validates every argument against the tool's schema before ``execute(name:input:context:)``.
///
/// The tools run inside their `execute_tool` span (the session's observer sets it as the current
/// context), so the `ssh connect`, `ssh exec` and `files.*` spans they cause are its children.
///
/// What a tool returns never carries this process's secrets: every result is scrubbed of the registered
/// secrets (``ProcessSecrets``) and hostscope's own process shows no arguments (``OwnProcess``). Every result
/// is also bounded in bytes (``Limits/maxOutputBytes``): a tool stops gathering there and says so as an error.
///
/// The file tools need SFTP, so a `local` host offers only the monitoring tools.
public actor HostTools: ToolExecutor {
    /// Bounds on what one tool call reads and returns.
    public struct Limits: Sendable, Hashable {
        /// The most bytes `read_file` and `tail_log` read from a file.
        public var maxReadBytes: Int
        /// The most entries `list_dir` and `find_files` return, and matches `grep` returns.
        public var maxEntries: Int
        /// The CPU sampling window of the monitoring tools.
        public var sample: Duration
        /// The bound on each command the monitoring tools run.
        public var commandTimeout: Duration
        /// The most bytes one call's output may hold; a call that would return more stops gathering there and
        /// returns what it has as an error that says so.
        public var maxOutputBytes: Int
        /// The most bytes of one matching line `grep` shows (the rest is replaced by a note).
        public var maxLineBytes: Int

        /// Creates limits.
        public init(
            maxReadBytes: Int = 64 * 1024, maxEntries: Int = 1000, sample: Duration = .milliseconds(250),
            commandTimeout: Duration = .seconds(30), maxOutputBytes: Int = 256 * 1024, maxLineBytes: Int = 2048
        ) {
            self.maxReadBytes = maxReadBytes
            self.maxEntries = maxEntries
            self.sample = sample
            self.commandTimeout = commandTimeout
            self.maxOutputBytes = maxOutputBytes
            self.maxLineBytes = maxLineBytes
        }
    }

    /// The tools offered to the model, with the JSON schemas their arguments are checked against.
    public nonisolated let tools: [ToolDefinition]
    /// The host, as the user named it.
    public nonisolated let host: String
    /// The directory the file tools are confined to, as given.
    public nonisolated let root: String?

    private let connection: HostConnection?
    private let recorder: ExitStatusRecorder
    private let collector: HostCollector
    private let limits: Limits
    private let secrets: SecretScrubber
    private let now: @Sendable () -> Date
    private var opened: (session: SSHSession, browser: RemoteFileBrowser)?

    /// Tools for `host`; with `root`, the file tools see only that directory. `secrets` are scrubbed from
    /// every result.
    public init(
        host: ResolvedHost, root: String? = nil, limits: Limits = Limits(),
        secrets: SecretScrubber = ProcessSecrets.scrubber, now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.host = host.displayName
        self.root = root
        self.limits = limits
        self.secrets = secrets
        self.now = now
        let runner: any CommandRunner
        switch host {
        case .local:
            connection = nil
            runner = LocalCommandRunner()
            tools = HostToolCatalog.definitions(fileTools: false, limits: limits)
        case .ssh(let options):
            let connection = HostConnection(options: options)
            self.connection = connection
            runner = connection
            tools = HostToolCatalog.definitions(fileTools: true, limits: limits)
        }
        recorder = ExitStatusRecorder(runner)
        collector = HostCollector(
            host: host.displayName, runner: recorder,
            options: CollectorOptions(
                sample: limits.sample, topProcesses: 100_000, commandTimeout: limits.commandTimeout),
            now: now)
    }

    /// Closes the SSH session, if one was opened.
    public func close() async {
        opened = nil
        await connection?.close()
    }

    /// Runs one tool. Failures on the host (a missing file, a path outside the root, a lost connection)
    /// come back as error outputs with a sentence the model and the user can act on. The output is scrubbed of
    /// the process's secrets and bounded by ``Limits/maxOutputBytes``.
    public func execute(name: String, input: JSONValue, context: ToolContext) async throws -> ToolOutput {
        var output = try await run(name: name, input: input)
        output.text = secrets.scrub(output.text)
        if output.text.utf8.count > limits.maxOutputBytes {
            output = Self.overLimit(output.text, name: name, limit: limits.maxOutputBytes)
        }
        return output
    }

    /// The start of an output that passed the byte limit, and an error saying so.
    static func overLimit(_ text: String, name: String, limit: Int) -> ToolOutput {
        let note =
            "\n[\(name) stopped: its output passed the limit of \(limit) bytes per call; narrow the path, the "
            + "pattern or the limit to see the rest]"
        // 64 bytes for the cap's own `[output cut: …]` line.
        let kept = ToolOutputCap.apply(text, maxBytes: max(0, limit - note.utf8.count - 64)).text
        // ToolOutputCap's own line says how much was cut; the note says why this is an error.
        return ToolOutput(text: kept + note, isError: true)
    }

    private func run(name: String, input: JSONValue) async throws -> ToolOutput {
        let arguments = ToolArguments(input)
        do {
            switch name {
            case "host_snapshot": return try await hostSnapshot()
            case "top_processes": return try await topProcesses(arguments)
            case "disk_usage": return try await diskUsage(arguments)
            case "list_dir": return try await listDirectory(arguments)
            case "read_file": return try await readFile(arguments)
            case "tail_log": return try await tailLog(arguments)
            case "grep": return try await grep(arguments)
            case "find_files": return try await findFiles(arguments)
            default:
                // The session never gets here (it refuses unknown names); this is the second lock.
                return ToolOutput(text: "There is no tool named \"\(name)\"; nothing was run.", isError: true)
            }
        } catch is CancellationError {
            // A call given up on (its deadline, or the user) may leave a request pending on the host's SFTP
            // server, which answers in order: the next call opens a browser of its own.
            dropBrowser()
            throw CancellationError()
        } catch let error as RemoteFilesError {
            if error.code == .connectionLost { dropBrowser() }
            return ToolOutput(text: error.message, isError: true)
        } catch let error as CollectionError {
            // Its message names the host already (the collector's and the connection's alike).
            return ToolOutput(text: error.message, isError: true)
        } catch let error as ToolInputError {
            return ToolOutput(text: error.message, isError: true)
        } catch {
            return ToolOutput(text: "\(host): \(name) failed: \(error)", isError: true)
        }
    }

    // MARK: - Monitoring tools

    private func collect() async throws -> (Snapshot, Int?) {
        recorder.reset()
        // Scrubbed before anything reads it: a process list holds hostscope's own command line when the host
        // is this machine.
        switch await collector.snapshot().scrubbingSecrets() {
        case .snapshot(let snapshot):
            return (snapshot, recorder.lastExitStatus.map(Int.init))
        case .failure(let failure):
            throw CollectionError(failure.kind, failure.message)
        }
    }

    private func hostSnapshot() async throws -> ToolOutput {
        let (snapshot, exitCode) = try await snapshotWithTopTen()
        return ToolOutput(text: snapshot.jsonValue.jsonString, exitCode: exitCode)
    }

    private func snapshotWithTopTen() async throws -> (Snapshot, Int?) {
        var (snapshot, exitCode) = try await collect()
        snapshot.processes = Array(snapshot.processes.prefix(10))
        return (snapshot, exitCode)
    }

    /// What `host_snapshot` gives, as the snapshot itself rather than its JSON text (for a face that sends it as
    /// structured JSON): its ten busiest processes, scrubbed of the process's secrets, and the probe's exit status.
    ///
    /// - Throws: `CollectionError` naming the host when it cannot be reached or read; `CancellationError`.
    public func snapshot() async throws -> (snapshot: Snapshot, exitCode: Int?) {
        try await snapshotWithTopTen()
    }

    private func topProcesses(_ arguments: ToolArguments) async throws -> ToolOutput {
        let limit = arguments.int("limit") ?? 10
        let byMemory = arguments.string("sort_by") == "memory"
        let (snapshot, exitCode) = try await collect()
        var processes = snapshot.processes
        if byMemory {
            processes.sort { ($0.rssBytes ?? 0, $1.pid) > ($1.rssBytes ?? 0, $0.pid) }
        }
        let shown = processes.prefix(limit)
        var text = "\(host): \(shown.count) of \(processes.count) processes by \(byMemory ? "memory" : "CPU")"
        if let sample = snapshot.cpu?.sampleMs { text += ", CPU measured over \(Int(sample)) ms" }
        text += "\nPID\tPPID\tUSER\tCPU%\tMEM%\tRSS\tCOMMAND\n"
        for process in shown {
            let command = process.command.count > 300 ? String(process.command.prefix(300)) + "…" : process.command
            text +=
                [
                    String(process.pid), process.ppid.map(String.init) ?? "-", process.user ?? "-",
                    FigureText.percent(process.cpuPercent), FigureText.percent(process.memoryPercent),
                    process.rssBytes.map { FigureText.bytes($0) } ?? "-", command,
                ].joined(separator: "\t") + "\n"
        }
        return ToolOutput(text: text, exitCode: exitCode)
    }

    private func diskUsage(_ arguments: ToolArguments) async throws -> ToolOutput {
        let (snapshot, exitCode) = try await collect()
        var disks = snapshot.disks
        var heading = "\(host): \(disks.count) mounted filesystems"
        if let path = arguments.string("path") {
            guard path.hasPrefix("/") else {
                throw ToolInputError("disk_usage: path must be absolute (it names the filesystem holding it)")
            }
            // The filesystem holding a path is the mount with the longest prefix of it.
            let holder = disks.filter { Self.isWithin(path, mount: $0.mount) }.max { $0.mount.count < $1.mount.count }
            disks = holder.map { [$0] } ?? []
            heading = "\(host): the filesystem holding \(path)"
        }
        var text = heading + "\nFILESYSTEM\tTYPE\tSIZE\tUSED\tAVAILABLE\tUSE%\tINODES USED\tMOUNT\n"
        for disk in disks {
            let inodes: String
            if let total = disk.inodesTotal, let used = disk.inodesUsed, total > 0 {
                inodes = FigureText.percent(Double(used) / Double(total) * 100)
            } else {
                inodes = "-"
            }
            text +=
                [
                    disk.filesystem, disk.type ?? "-", FigureText.bytes(disk.sizeBytes),
                    FigureText.bytes(disk.usedBytes),
                    FigureText.bytes(disk.availableBytes), FigureText.percent(disk.usedPercent), inodes, disk.mount,
                ].joined(separator: "\t") + "\n"
        }
        return ToolOutput(text: text, exitCode: exitCode)
    }

    static func isWithin(_ path: String, mount: String) -> Bool {
        mount == "/" || path == mount || path.hasPrefix(mount.hasSuffix("/") ? mount : mount + "/")
    }

    // MARK: - File tools

    /// The browser over the live session, reopened when the session was replaced.
    private func browser() async throws -> RemoteFileBrowser {
        guard let connection else {
            throw ToolInputError("the file tools need an SSH host; \(host) is this machine")
        }
        let session = try await connection.connectedSession()
        if let opened, opened.session === session {
            return opened.browser
        }
        let browser = try await RemoteFileBrowser.open(
            session: session, host: host, root: root.map { RemotePath(escaped: $0) })
        opened = (session, browser)
        return browser
    }

    private func dropBrowser() {
        opened = nil
    }

    private func listDirectory(_ arguments: ToolArguments) async throws -> ToolOutput {
        let path = RemotePath(escaped: arguments.string("path") ?? ".")
        let limit = min(arguments.int("limit") ?? 200, limits.maxEntries)
        let browser = try await browser()
        var options = ListOptions(includeHidden: arguments.bool("include_hidden") ?? true, readLinkTargets: true)
        options.batchSize = 200
        var lines: [String] = []
        var budget = OutputBudget(limit: limits.maxOutputBytes)
        var more = 0
        let summary = try await browser.list(path, options: options) { batch in
            for entry in batch {
                if lines.count < limit, !budget.isSpent {
                    lines.append(budget.take(Self.describe(entry)))
                } else {
                    more += 1
                }
            }
        }
        var text = "\(host): \(path.escaped)"
        text += summary.isDirectory ? " (\(summary.count) entries)\n" : " (not a directory)\n"
        text += lines.joined(separator: "\n")
        if more > 0 { text += "\n[\(more) more entries not shown; raise limit or use find_files]" }
        return ToolOutput(text: text)
    }

    private func readFile(_ arguments: ToolArguments) async throws -> ToolOutput {
        let path = RemotePath(escaped: try arguments.required("path"))
        let maxBytes = min(arguments.int("max_bytes") ?? 16 * 1024, limits.maxReadBytes)
        let offset = UInt64(clamping: arguments.int("offset") ?? 0)
        let browser = try await browser()
        let range: ReadRange = offset > 0 ? .bytes(ByteRange(parsing: "\(offset)-")!) : .whole
        let preview = try await browser.read(path, options: ReadOptions(range: range, maxBytes: maxBytes))
        if preview.isBinary {
            let kind = preview.typeGuess.map { " (\($0))" } ?? ""
            return ToolOutput(
                text: "\(host): \(preview.path.escaped) is a binary file\(kind) of \(preview.fileSize) bytes; "
                    + "its content is not shown")
        }
        let end = preview.offset + UInt64(preview.bytes.count)
        var text = "\(host): \(preview.path.escaped), \(preview.fileSize) bytes"
        if preview.offset > 0 || end < preview.fileSize {
            text += ", showing bytes \(preview.offset)–\(end)"
        }
        text += "\n" + String(decoding: preview.bytes, as: UTF8.self)
        if end < preview.fileSize {
            text += "\n[file cut: \(preview.fileSize - end) more bytes; call read_file with offset \(end) for more]"
        }
        return ToolOutput(text: text)
    }

    private func tailLog(_ arguments: ToolArguments) async throws -> ToolOutput {
        let path = RemotePath(escaped: try arguments.required("path"))
        let lines = arguments.int("lines") ?? 50
        let browser = try await browser()
        let preview = try await browser.read(
            path, options: ReadOptions(range: .tail(lines: lines), maxBytes: limits.maxReadBytes))
        if preview.isBinary {
            return ToolOutput(text: "\(host): \(preview.path.escaped) is a binary file; it has no lines to show")
        }
        var text = "\(host): the last \(lines) lines of \(preview.path.escaped) (\(preview.fileSize) bytes)"
        if preview.truncated { text += ", cut to the last \(preview.bytes.count) bytes" }
        text += "\n" + String(decoding: preview.bytes, as: UTF8.self)
        return ToolOutput(text: text)
    }

    private func grep(_ arguments: ToolArguments) async throws -> ToolOutput {
        let pattern = try arguments.required("pattern")
        let path = RemotePath(escaped: arguments.string("path") ?? ".")
        let limit = min(arguments.int("max_matches") ?? 100, limits.maxEntries)
        let options = GrepOptions(
            recursive: arguments.bool("recursive") ?? true, ignoreCase: arguments.bool("ignore_case") ?? false,
            fixedString: arguments.bool("fixed_string") ?? false,
            glob: arguments.string("include").map(GlobPattern.init))
        let browser = try await browser()
        var lines: [String] = []
        var budget = OutputBudget(limit: limits.maxOutputBytes)
        let maxLineBytes = limits.maxLineBytes
        var summary: GrepSummary?
        do {
            summary = try await browser.grep(pattern, in: path, options: options) { match in
                guard lines.count < limit, !budget.isSpent else { throw EnoughResults() }
                let line = Self.matchingLine(match.line, maxBytes: maxLineBytes)
                lines.append(budget.take("\(match.path.escaped):\(match.lineNumber):\(line)"))
            }
        } catch is EnoughResults {
            summary = nil
        }
        var text = "\(host): "
        if let summary {
            text += "\(summary.matches) matching lines in \(summary.filesMatched) of \(summary.filesSearched) files"
            if summary.binaryFilesSkipped > 0 { text += ", \(summary.binaryFilesSkipped) binary files skipped" }
            if !summary.problems.isEmpty {
                text += "; could not read: " + summary.problems.prefix(5).map(\.message).joined(separator: "; ")
            }
        } else if budget.isSpent {
            text += "stopped after \(lines.count) matching lines, at the output limit"
        } else {
            text += "stopped at \(limit) matching lines (max_matches); narrow the pattern or the path for the rest"
        }
        text += "\n" + lines.joined(separator: "\n")
        return ToolOutput(text: text)
    }

    private func findFiles(_ arguments: ToolArguments) async throws -> ToolOutput {
        let path = RemotePath(escaped: arguments.string("path") ?? ".")
        let limit = min(arguments.int("limit") ?? 200, limits.maxEntries)
        var options = FindOptions(walk: WalkOptions(maxDepth: arguments.int("max_depth"), includeHidden: true))
        options.name = arguments.string("name").map(GlobPattern.init)
        options.type = arguments.string("type").flatMap { RemoteFileType(rawValue: $0) }
        if let minutes = arguments.int("modified_within_minutes") {
            let since = now().timeIntervalSince1970 - Double(minutes) * 60
            options.modifiedSince = UInt32(clamping: Int64(max(0, since)))
        }
        let browser = try await browser()
        var lines: [String] = []
        var budget = OutputBudget(limit: limits.maxOutputBytes)
        var problems: [RemoteFilesError] = []
        var complete = true
        do {
            problems = try await browser.find(path, options: options) { entry in
                guard lines.count < limit, !budget.isSpent else { throw EnoughResults() }
                lines.append(budget.take(Self.describe(entry, fullPath: true)))
            }
        } catch is EnoughResults {
            complete = false
        }
        var text = "\(host): \(lines.count) entries under \(path.escaped)"
        if !complete, !budget.isSpent {
            text += " (stopped at limit \(limit); narrow name, type or max_depth for the rest)"
        }
        if !problems.isEmpty {
            text += "; could not read: " + problems.prefix(5).map(\.message).joined(separator: "; ")
        }
        text += "\n" + lines.joined(separator: "\n")
        return ToolOutput(text: text)
    }

    /// A matching line as text, its first `maxBytes` when longer (a minified file's one line can be
    /// megabytes), cut at a character boundary.
    static func matchingLine(_ bytes: [UInt8], maxBytes: Int) -> String {
        guard bytes.count > maxBytes else { return String(decoding: bytes, as: UTF8.self) }
        var end = maxBytes
        while end > 0, bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return String(decoding: bytes[..<end], as: UTF8.self) + "… [line cut: \(bytes.count) bytes]"
    }

    /// `-rw-r--r--  1.2 KiB  2026-11-21T19:22:00Z  name -> target`.
    static func describe(_ entry: RemoteFileEntry, fullPath: Bool = false) -> String {
        let size = entry.size.map(String.init) ?? "-"
        let modified = entry.modificationTime.map { RFC3339.format(secondsSince1970: Int64($0)) }
        var line = "\(entry.permissionsText)\t\(size)\t\(modified ?? "-")\t"
        line += fullPath ? entry.path.escaped : entry.escapedName
        if entry.type == .dir, !fullPath { line += "/" }
        if let target = entry.linkTarget { line += " -> " + EscapedText.encode(target) }
        return line
    }
}

/// A tool argument that the schema allows but the tool cannot use.
struct ToolInputError: Error, CustomStringConvertible {
    var message: String

    init(_ message: String) {
        self.message = message
    }

    var description: String { message }
}

/// Thrown from a search's callback to stop it once enough results are in.
struct EnoughResults: Error {}

/// Counts the bytes a tool's output lines take, so gathering stops once a call's output passed its limit;
/// `execute` then cuts the output and marks it an error.
struct OutputBudget {
    let limit: Int
    private(set) var used = 0

    init(limit: Int) {
        self.limit = limit
    }

    /// Whether the lines taken so far passed the limit: the caller stops gathering.
    var isSpent: Bool { used > limit }

    /// Counts a line (and its newline) and hands it back.
    mutating func take(_ line: String) -> String {
        used += line.utf8.count + 1
        return line
    }
}

/// Typed reads of a tool's validated arguments.
struct ToolArguments {
    let input: JSONValue

    init(_ input: JSONValue) {
        self.input = input
    }

    func string(_ key: String) -> String? { input[key]?.stringValue }
    func int(_ key: String) -> Int? { input[key]?.doubleValue.flatMap { Int(exactly: $0.rounded(.towardZero)) } }
    func bool(_ key: String) -> Bool? { input[key]?.boolValue }

    func required(_ key: String) throws -> String {
        guard let value = string(key), !value.isEmpty else {
            throw ToolInputError("the argument \(key) is required")
        }
        return value
    }
}

/// Passes commands to the host's runner and keeps the exit status of the last one, which becomes the exit
/// code of the monitoring tool that ran it.
final class ExitStatusRecorder: CommandRunner {
    private let base: any CommandRunner
    private let last = Lock<Int32?>(nil)

    init(_ base: any CommandRunner) {
        self.base = base
    }

    var lastExitStatus: Int32? { last.withLock { $0 } }

    func reset() {
        last.withLock { $0 = nil }
    }

    func run(_ command: String, timeout: Duration) async throws -> CommandOutput {
        let output = try await base.run(command, timeout: timeout)
        last.withLock { $0 = output.exitStatus }
        return output
    }

    func runProbe(_ script: String, timeout: Duration) async throws -> CommandOutput {
        let output = try await base.runProbe(script, timeout: timeout)
        last.withLock { $0 = output.exitStatus }
        return output
    }
}
