public import ArgumentParser
import Foundation
import HostStats
import HostscopeCore
import OrderedJSON
public import RemoteFiles
import Synchronization
import TerminalUI
import ValueFormats

struct FilesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "files",
        abstract: "Browse a remote workspace read-only over SFTP: ls, tree, stat, cat, grep, find, get.",
        discussion: """
            Paths are HOST:PATH as scp takes them (web1:/var/log, me@db1:logs, an empty path is the \
            home directory) or sftp://[USER@]HOST[:PORT]/PATH. Nothing on the host is ever changed: \
            files are only opened for reading, and no command runs there.

            Names are printed in an escaped form that every path argument accepts back: a backslash \
            as \\\\, newline and tab as \\n and \\t, other control characters and bytes that are not \
            UTF-8 as \\xHH (caf\\xe9). In --json, names that are not UTF-8 carry the same escaped text \
            plus name_bytes_base64 and name_is_utf8: false.

            --root DIR confines every path to a workspace: relative paths start there, and paths that \
            resolve outside it on the server (.., absolute paths, symbolic links) are refused.

            Exit status: 0 success, 1 local failure, 64 usage, 3 connect (or the connection dropped), \
            4 authentication, 5 host key, 7 timeout, 8 a remote file could not be read; files grep \
            exits 1 when nothing matched, as grep does.
            """,
        subcommands: [
            FilesListCommand.self, FilesTreeCommand.self, FilesStatCommand.self, FilesCatCommand.self,
            FilesGrepCommand.self, FilesFindCommand.self, FilesGetCommand.self,
        ])
}

/// Options every `files` subcommand takes.
struct FilesOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Confine every path to this remote directory; relative paths start there.", valueName: "dir"))
    var root: String?

    /// Runs `body` with a session for `argument`, turning every failure into one sentence on
    /// stderr and the matching exit status.
    ///
    /// The operations' spans (connect, every SFTP call) are stored for `hostscope trace`, in the
    /// database `history` reads.
    func run<T: Sendable>(
        _ operation: String, _ argument: String, _ settings: ConnectionSettings,
        _ body: (RemoteFilesSession) async throws -> T
    ) async throws -> T {
        do {
            return try await FilesService(settings: try .command(connection: settings)).with(
                argument, root: root, operation: operation, body)
        } catch {
            throw FilesFailure.exit(error)
        }
    }

    /// ``run(_:_:_:)`` that Ctrl-C and SIGTERM cancel, for commands that run until stopped or move many bytes: the
    /// body sees `CancellationError` (or a ``RemoteFilesError`` of code `interrupted`) and the session is still
    /// closed, its spans stored. A second Ctrl-C exits at once.
    func runUntilInterrupted<T: Sendable>(
        _ operation: String, _ argument: String, _ settings: ConnectionSettings,
        _ body: @escaping @Sendable (RemoteFilesSession) async throws -> T
    ) async throws -> T {
        let root = root
        do {
            let service = FilesService(settings: try .command(connection: settings))
            return try await withTerminationSignals { () async throws -> T in
                try await service.with(argument, root: root, operation: operation, body)
            }
        } catch {
            throw FilesFailure.exit(error)
        }
    }
}

extension ParsableCommand {
    /// The name of a `files` subcommand (`ls`, `cat`), for the root span of its trace.
    fileprivate static var operation: String { configuration.commandName ?? "files" }
}

enum FilesFailure {
    /// Prints `error` as one sentence and returns the exit code for its kind.
    static func exit(_ error: any Error) -> any Error {
        if error is ExitCode || error is CleanExit { return error }
        switch error {
        case let error as RemoteFilesError where error.code == .interrupted:
            // Ctrl-C needs no sentence of its own; what was kept does.
            if let partial = error.partial { Output.notice(partial.line) }
            return ExitCode(ExitStatus.interrupted.rawValue)
        case let error as RemoteFilesError:
            let exit = Output.fail(error.message, status(error.code))
            if let partial = error.partial { Output.notice(partial.line) }
            return exit
        case is CancellationError:
            return ExitCode(ExitStatus.interrupted.rawValue)
        case let error as CollectionError:
            return Output.fail(error.message, ExitStatus(error.kind))
        case let error as FilesArgumentError:
            return Output.fail(error.message, .usage)
        default:
            return Output.fail("\(error)", .failure)
        }
    }

    static func status(_ code: RemoteFilesError.Code) -> ExitStatus {
        switch code {
        case .connectionLost: .connect
        case .timeout: .timeout
        case .invalidArgument: .usage
        case .localFile: .failure
        default: .file
        }
    }
}

// MARK: - ls

struct FilesListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List a directory, sorted by name in byte order as LC_ALL=C ls sorts.",
        discussion: """
            Huge directories stream: entries are sorted in bounded memory (runs spill to TMPDIR) and \
            printed in batches. --unsorted prints them in the server's order as they arrive.

            As in ls, -h is --human-readable here (help is --help), and --classify marks names with their \
            type (-F is --ssh-config in every hostscope command).
            """,
        helpNames: [.long])

    @Argument(help: "HOST:PATH to list.", completion: Completions.remotePath) var target: String
    @Flag(name: [.short, .long], help: "Type, permissions, owner, group, size, modification time and link targets.")
    var long = false
    @Flag(name: [.short, .long], help: "Include names starting with a dot.") var all = false
    @Flag(
        name: [.customShort("h"), .customLong("human-readable")],
        help: "With -l, sizes as ls -h prints them: 4.0K, 12M, 1.5G (powers of 1024, rounded up).")
    var humanReadable = false
    @Flag(help: "Mark names as ls -F does: / directories, @ links, * executables, | FIFOs, = sockets.")
    var classify = false
    @Flag(help: "A JSON array of Files JSON objects.") var json = false
    @Flag(help: "Print entries in the server's order, without sorting.") var unsorted = false
    @OptionGroup var files: FilesOptions
    @OptionGroup var connection: ListingConnectionOptions

    func run() async throws {
        try await files.run(Self.operation, target, connection.settings) { session in
            var options = ListOptions(includeHidden: all, readLinkTargets: long || json, sorted: !unsorted)
            options.batchSize = 500
            var first = true
            if json { Output.writeData("[") }
            try await session.browser.list(session.path, options: options) { batch in
                var text = ""
                for entry in batch {
                    if json {
                        text += (first ? "\n  " : ",\n  ") + entry.jsonValue.jsonString
                    } else {
                        text +=
                            (long
                                ? FilesText.longLine(entry, humanSizes: humanReadable, classify: classify)
                                : FilesText.shortLine(entry, classify: classify)) + "\n"
                    }
                    first = false
                }
                if json { Output.writeData(text) } else { Output.write(text) }
            }
            if json { Output.writeData(first ? "]\n" : "\n]\n") }
        }
    }
}

// MARK: - tree

struct FilesTreeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tree",
        abstract: "Show the tree below a directory; unreadable directories and link loops are reported inline.")

    @Argument(help: "HOST:PATH of the top directory.", completion: Completions.remotePath) var target: String
    @Option(help: "How many levels to descend (default: no limit).") var depth: Int?
    @Flag(name: [.short, .long], help: "Include names starting with a dot.") var all = false
    @Flag(
        name: [.customShort("L"), .customLong("follow-links")],
        help: "Enter directories reached through symbolic links (loops are detected).")
    var followLinks = false
    @Flag(help: "Nested Files JSON objects, directories' entries under children.") var json = false
    @OptionGroup var files: FilesOptions
    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        if let depth, depth < 0 { throw ValidationError("--depth must be 0 or more.") }
    }

    func run() async throws {
        try await files.run(Self.operation, target, connection.settings) { session in
            let tree = try await session.browser.tree(
                session.path, options: WalkOptions(maxDepth: depth, includeHidden: all, followLinks: followLinks))
            if json {
                Output.writeData(tree.jsonValue.prettyJSONString + "\n")
            } else {
                Output.write(FilesText.tree(tree))
            }
        }
    }
}

// MARK: - stat

struct FilesStatCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stat", abstract: "Show one path's attributes (a symbolic link itself, with its target).")

    @Argument(help: "HOST:PATH to describe.", completion: Completions.remotePath) var target: String
    @Flag(help: "One Files JSON object.") var json = false
    @OptionGroup var files: FilesOptions
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await files.run(Self.operation, target, connection.settings) { session in
            let entry = try await session.browser.stat(session.path)
            if json {
                Output.writeData(entry.jsonValue.prettyJSONString + "\n")
            } else {
                Output.write(FilesText.stat(entry))
            }
        }
    }
}

// MARK: - cat

/// A byte count as `--max-bytes` takes it: `4096`, `64K`, `1M`, `2G` (powers of 1024).
struct ByteCountArgument: ExpressibleByArgument {
    var bytes: Int

    init?(argument: String) {
        let text = argument.uppercased()
        let units: [(String, Int)] = [
            ("KIB", 1 << 10), ("MIB", 1 << 20), ("GIB", 1 << 30), ("K", 1 << 10),
            ("M", 1 << 20), ("G", 1 << 30), ("B", 1),
        ]
        var scale = 1
        var number = Substring(text)
        for (suffix, value) in units where text.hasSuffix(suffix) {
            number = text.dropLast(suffix.count)
            scale = value
            break
        }
        guard let value = Int(number), value > 0, value <= Int.max / scale else { return nil }
        bytes = value * scale
    }
}

extension ByteRange: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(parsing: argument)
    }
}

struct FilesCatCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cat",
        abstract: "Preview a file: text shown terminal-safe, binary files summarised.",
        discussion: """
            At most --max-bytes (1M) are shown; a note on stderr says how to see more. --tail reads \
            only the end of the file. Binary content (a NUL byte, or mostly control characters) is \
            summarised as its size, a type guess and a hex dump of its first bytes, unless --raw \
            and standard output is not a terminal. On a terminal, control characters and escape \
            sequences are always shown escaped.
            """)

    @Argument(help: "HOST:PATH of the file.", completion: Completions.remotePath) var target: String
    @Option(help: "Only the first N lines.") var head: Int?
    @Option(help: "Only the last N lines (reads only the end of the file).") var tail: Int?
    @Option(
        help: ArgumentHelp("Only bytes A to B (inclusive, from 0); A- to the end; -N the last N.", valueName: "A-B"))
    var bytes: ByteRange?
    @Flag(help: "Write the bytes unchanged when standard output is a pipe or file, binary included.") var raw = false
    @Option(name: .customLong("max-bytes"), help: ArgumentHelp("Most bytes shown (64K, 1M, 16M).", valueName: "size"))
    var maxBytes: ByteCountArgument?
    @Flag(
        help: ArgumentHelp(
            "Keep showing what is appended, as tail -f, until Ctrl-C or until the file is replaced, truncated or "
                + "removed (starts with the last 10 lines; --tail N for more)."))
    var follow = false
    @OptionGroup var files: FilesOptions
    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        let ranges = [head != nil, tail != nil, bytes != nil].filter { $0 }.count
        if ranges > 1 { throw ValidationError("Use one of --head, --tail and --bytes.") }
        if let head, head < 0 { throw ValidationError("--head must be 0 or more.") }
        if let tail, tail < 0 { throw ValidationError("--tail must be 0 or more.") }
        if follow, head != nil || bytes != nil {
            throw ValidationError(
                "--follow starts at the end of the file: use --tail N with it, not --head or --bytes.")
        }
    }

    func run() async throws {
        if follow { return try await runFollowing() }
        var range = ReadRange.whole
        if let head { range = .head(lines: head) }
        if let tail { range = .tail(lines: tail) }
        if let bytes { range = .bytes(bytes) }
        let cap = maxBytes?.bytes ?? ReadOptions.defaultMaxBytes
        let terminal = Output.stdoutIsTerminal
        let preview = try await files.run(Self.operation, target, connection.settings) { session in
            try await session.browser.read(session.path, options: ReadOptions(range: range, maxBytes: cap))
        }
        let hostPath = "\(target)"
        if preview.isBinary && (terminal || !raw) {
            Output.write(FilesText.binarySummary(preview, shown: hostPath))
            return
        }
        // Exact bytes into a file or pipe; escaped on a terminal.
        Output.writeData(preview.bytes)
        if preview.truncated {
            let end = preview.offset + UInt64(preview.bytes.count)
            Output.warning(
                "showed bytes \(preview.offset)-\(end > 0 ? end - 1 : 0) of \(preview.fileSize) in \(hostPath) (the --max-bytes cap is \(cap)); see more with --max-bytes, --bytes A-B, --tail N, or download it with hostscope files get"
            )
        }
    }
}

extension FilesCatCommand {
    /// `cat --follow`: the last lines, then every byte appended, written as data (exact into a pipe, escaped on a
    /// terminal), until Ctrl-C (exit 0) or the file is replaced, truncated or removed (a note says which, exit 0).
    func runFollowing() async throws {
        let options = FollowOptions(lines: tail ?? 10, maxInitialBytes: maxBytes?.bytes ?? ReadOptions.defaultMaxBytes)
        let ended = try await files.runUntilInterrupted(Self.operation, target, connection.settings) {
            session -> String? in
            do {
                let end = try await session.browser.follow(session.path, options: options) { Output.writeData($0) }
                return end.message(host: session.browser.host)
            } catch is CancellationError {
                return nil
            }
        }
        if let ended { Output.note(ended) }
    }
}

// MARK: - grep

struct FilesGrepCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grep",
        abstract: "Print lines matching a pattern as path:line:text, like grep -H -n.",
        discussion: """
            Files are read over SFTP; nothing runs on the host, so no file name or pattern can reach \
            a shell. PATTERN is a regular expression in Swift Regex syntax, which reads POSIX \
            extended expressions (grep -E) the same way; a pattern without metacharacters, or any \
            pattern with -F, is matched as plain text. Binary files (a NUL in the first 8 KiB) are \
            skipped, as with grep -I; symbolic links below the top are not followed, as with grep -r.

            -v, -c, -l, -m, -A, -B and -C mean what they mean to GNU grep, and print what it prints with \
            -H -n: context lines as path-line-text, groups of lines apart separated by --, path:count \
            for each file searched, or the paths of files with a selected line. Here -i, -F and -l are \
            grep's; the identity, ssh_config and user are --identity, --ssh-config and --user.
            """)

    @Argument(help: "The pattern.") var pattern: String
    @Argument(help: "HOST:PATH of a file, or a directory with -r.", completion: Completions.remotePath) var target:
        String
    @Flag(name: [.short, .customLong("recursive")], help: "Search the files below a directory.") var recursive = false
    @Flag(name: [.customShort("i"), .customLong("ignore-case")], help: "Ignore case (ASCII letters for plain text).")
    var ignoreCase = false
    @Flag(name: [.customShort("F"), .customLong("fixed-strings")], help: "Match the pattern as plain text.")
    var fixedStrings = false
    @Flag(name: [.customShort("v"), .customLong("invert-match")], help: "Select the lines that do not match.")
    var invertMatch = false
    @Flag(name: [.customShort("c"), .customLong("count")], help: "Print path:count of selected lines per file.")
    var count = false
    @Flag(
        name: [.customShort("l"), .customLong("files-with-matches")],
        help: "Print only the paths of files with a selected line.")
    var filesWithMatches = false
    @Option(
        name: [.customShort("A"), .customLong("after-context")],
        help: ArgumentHelp("Print N lines after each selected line.", valueName: "n"))
    var afterContext: Int?
    @Option(
        name: [.customShort("B"), .customLong("before-context")],
        help: ArgumentHelp("Print N lines before each selected line.", valueName: "n"))
    var beforeContext: Int?
    @Option(
        name: [.customShort("C"), .customLong("context")],
        help: ArgumentHelp("Print N lines before and after each selected line (-A N -B N).", valueName: "n"))
    var context: Int?
    @Option(help: ArgumentHelp("Only files whose name matches this glob, e.g. '*.py'.", valueName: "glob"))
    var glob: String?
    @Option(name: [.customShort("m"), .customLong("max-count")], help: "Stop after N selected lines per file.")
    var maxCount: Int?
    @OptionGroup var files: FilesOptions
    @OptionGroup var connection: GrepConnectionOptions

    func validate() throws {
        if let maxCount, maxCount < 1 { throw ValidationError("--max-count must be 1 or more.") }
        for (name, value) in [("-A", afterContext), ("-B", beforeContext), ("-C", context)] {
            if let value, value < 0 { throw ValidationError("\(name) must be 0 or more.") }
        }
    }

    func run() async throws {
        let terminal = Output.stdoutIsTerminal
        // As in GNU grep: -l wins over -c, and neither prints lines, so neither takes context.
        let printsLines = !count && !filesWithMatches
        let after = printsLines ? afterContext ?? context ?? 0 : 0
        let before = printsLines ? beforeContext ?? context ?? 0 : 0
        // grep prints -- between groups whenever context was asked for, even -A 0.
        let separated = printsLines && (afterContext != nil || beforeContext != nil || context != nil)
        let options = GrepOptions(
            recursive: recursive, ignoreCase: ignoreCase, fixedString: fixedStrings, glob: glob.map(GlobPattern.init),
            maxCount: filesWithMatches ? 1 : maxCount, invertMatch: invertMatch, before: before, after: after)
        var last: (path: RemotePath, line: Int)?
        let summary = try await files.run(Self.operation, target, connection.settings) { session in
            try await session.browser.grep(
                pattern, in: session.path, options: options,
                fileSearched: { path, selected in
                    if filesWithMatches {
                        if selected > 0 { Output.write(path.escaped + "\n") }
                    } else if count {
                        Output.write(path.escaped + ":" + String(selected) + "\n")
                    }
                }
            ) { match in
                guard printsLines else { return }
                if separated, let previous = last, previous.path != match.path || previous.line + 1 != match.lineNumber
                {
                    Output.write("--\n")
                }
                last = (match.path, match.lineNumber)
                let mark = match.isContext ? "-" : ":"
                let prefix = match.path.escaped + mark + String(match.lineNumber) + mark
                if terminal {
                    Output.write(prefix + TerminalText.sanitize(bytes: match.line) + "\n")
                } else {
                    // The line exactly as the file holds it, as grep prints it into a pipe.
                    Output.writeData(Array(prefix.utf8) + match.line + [UInt8(ascii: "\n")])
                }
            }
        }
        for problem in summary.problems { Output.error(problem.message) }
        if !summary.problems.isEmpty { throw ExitCode(ExitStatus.file.rawValue) }
        if summary.matches == 0 { throw ExitCode(1) }
    }
}

// MARK: - find

struct FilesFindCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "find", abstract: "Print the paths below a directory that match a name glob, age and type.")

    @Argument(help: "HOST:PATH of the top directory.", completion: Completions.remotePath) var target: String
    @Option(help: ArgumentHelp("Names matching this glob, e.g. '*.log'.", valueName: "glob")) var name: String?
    @Option(help: ArgumentHelp("Modified within this long, e.g. 1h, 30m, 7d.", valueName: "duration"))
    var newer: DurationArgument?
    @Option(help: ArgumentHelp("Only files (f), directories (d) or symbolic links (l).", valueName: "f|d|l"))
    var type: String?
    @Option(name: .customLong("max-depth"), help: "How many levels to descend (default: no limit).") var maxDepth: Int?
    @Flag(
        name: [.customShort("L"), .customLong("follow-links")],
        help: "Enter directories reached through symbolic links.")
    var followLinks = false
    @Flag(help: "A JSON array of Files JSON objects.") var json = false
    @OptionGroup var files: FilesOptions
    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        if let type, !["f", "d", "l"].contains(type) { throw ValidationError("--type takes f, d or l.") }
        if let maxDepth, maxDepth < 0 { throw ValidationError("--max-depth must be 0 or more.") }
    }

    func run() async throws {
        var options = FindOptions(walk: WalkOptions(maxDepth: maxDepth, includeHidden: true, followLinks: followLinks))
        options.name = name.map(GlobPattern.init)
        if let newer {
            let cutoff = Date().timeIntervalSince1970 - newer.duration.inSeconds
            options.modifiedSince = UInt32(clamping: Int64(max(0, cutoff)))
        }
        options.type = type.map { ["f": .file, "d": .dir, "l": .symlink][$0]! }
        var first = true
        if json { Output.writeData("[") }
        let problems = try await files.run(Self.operation, target, connection.settings) { session in
            try await session.browser.find(session.path, options: options) { entry in
                if json {
                    Output.writeData((first ? "\n  " : ",\n  ") + entry.jsonValue.jsonString)
                } else {
                    Output.write(entry.path.escaped + "\n")
                }
                first = false
            }
        }
        if json { Output.writeData(first ? "]\n" : "\n]\n") }
        for problem in problems { Output.error(problem.message) }
        if !problems.isEmpty { throw ExitCode(ExitStatus.file.rawValue) }
    }
}

// MARK: - get

struct FilesGetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Download a file, or a directory tree with -r; resumable, SHA-256 reported.",
        discussion: """
            The download is written to a hidden .NAME.hostscope-partial beside the destination and \
            renamed to NAME only when complete, so a failed download never leaves a partial file \
            under the final name. Running the same command again resumes from the partial file \
            (after checking that its last bytes still match the remote file); when a download is \
            interrupted (Ctrl-C, a lost connection) a line says what was kept.

            -r copies a directory tree into DESTINATION as rsync -r places it: under the tree's own name \
            (HOST:DIR/ with a slash: its contents), DESTINATION created when missing, so the same command \
            always writes to the same place. Each file is downloaded as above and gets the remote \
            modification time; a file already complete locally (same size and time) is left as it is, so \
            the same command resumes a tree too. Symbolic links are never followed: one that leads inside \
            the tree is made again as a relative link, one that leads out of it (or of --root) is skipped \
            and reported, as are FIFOs, devices and sockets.
            """)

    @Argument(help: "HOST:PATH of the file (of the directory with -r).", completion: Completions.remotePath)
    var target: String
    @Argument(help: "Local file or directory (default: the current directory); - writes the file to standard output.")
    var destination: String = "."
    @Flag(name: [.customShort("r"), .customLong("recursive")], help: "Download a directory tree.")
    var recursive = false
    @Flag(name: .customLong("no-resume"), help: "Start over even if a partial download exists.") var noResume = false
    @Flag(
        name: .customLong("no-checksum"),
        help: "Skip the SHA-256 (with SHA CPU extensions, under a tenth of the CPU a download takes).")
    var noChecksum = false
    @Flag(help: "Print the result as one JSON object.") var json = false
    @Flag(name: .shortAndLong, help: "No progress line on stderr (there is one only when stderr is a terminal).")
    var quiet = false
    @OptionGroup var files: FilesOptions
    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        if recursive, destination == "-" {
            throw ValidationError("get -r writes a directory tree: name a local directory, not -.")
        }
    }

    func run() async throws {
        if destination == "-" {
            // The bytes as they are into a pipe or file (escaped on a terminal), as `scp host:file /dev/stdout`.
            let preview = try await files.run(Self.operation, target, connection.settings) { session in
                try await session.browser.read(session.path, options: ReadOptions(range: .whole, maxBytes: .max))
            }
            Output.writeData(preview.bytes)
            return
        }
        if recursive { return try await runRecursive() }
        let (destination, quiet) = (destination, quiet)
        let options = DownloadOptions(resume: !noResume, checksum: !noChecksum)
        let result = try await files.runUntilInterrupted(Self.operation, target, connection.settings) { session in
            let last = session.path.lastComponent
            let name = last.isEmpty ? session.path.escaped : EscapedText.encode(last)
            let meter = quiet ? nil : DownloadProgressMeter.onTerminal(name: name)
            // Cleared before the result line, or before files.run prints an error.
            defer { meter?.finish() }
            var options = options
            if let meter { options.progress = { done, total in meter.update(done: done, total: total) } }
            return try await session.browser.download(session.path, to: destination, options: options)
        }
        if json {
            Output.writeData(Self.json(result).jsonString + "\n")
        } else {
            Output.write(Self.line(result) + "\n")
        }
    }

    /// `get -r`: the tree, a line per file downloaded or link made, skipped entries as warnings, then a summary.
    func runRecursive() async throws {
        let (destination, quiet, json) = (destination, quiet, json)
        let meter = CurrentMeter()
        var download = DownloadOptions(resume: !noResume, checksum: !noChecksum)
        if !quiet { download.progress = { done, total in meter.update(done: done, total: total) } }
        let options = download
        let (summary, results) = try await files.runUntilInterrupted(Self.operation, target, connection.settings) {
            session in
            defer { meter.finish() }
            var results: [DownloadResult] = []
            let summary = try await session.browser.downloadTree(session.path, to: destination, options: options) {
                event in
                switch event {
                case .starting(let path, _, _):
                    if !quiet { meter.start(path.escaped) }
                case .downloaded(let result):
                    meter.finish()
                    if json { results.append(result) } else { Output.write(Self.line(result) + "\n") }
                case .unchanged:
                    break
                case .linked(_, let local, let target):
                    if !json { Output.write("\(local) -> \(target)\n") }
                case .skipped(let path, let reason):
                    Output.warning("skipped \(path.escaped): \(reason)")
                }
            }
            return (summary, results)
        }
        if json {
            var object = JSONObject()
            object.append("local_root", .string(summary.localRoot))
            object.append("directories", .int(Int64(summary.directories)))
            object.append("downloaded", .int(Int64(summary.downloaded)))
            object.append("bytes", .uint(summary.bytes))
            object.append("unchanged", .int(Int64(summary.unchanged)))
            object.append("links", .int(Int64(summary.links)))
            object.append("skipped", .int(Int64(summary.skipped)))
            object.append("files", .array(results.map(Self.json)))
            object.append("errors", .array(summary.problems.map { .string($0.message) }))
            Output.writeData(JSONValue.object(object).jsonString + "\n")
        } else {
            var parts = ["\(summary.downloaded) file(s) downloaded (\(FigureText.bytes(summary.bytes)))"]
            if summary.unchanged > 0 { parts.append("\(summary.unchanged) already complete") }
            parts.append("\(summary.directories) director\(summary.directories == 1 ? "y" : "ies")")
            if summary.links > 0 { parts.append("\(summary.links) link(s)") }
            if summary.skipped > 0 { parts.append("\(summary.skipped) skipped") }
            if !summary.problems.isEmpty { parts.append("\(summary.problems.count) could not be read") }
            Output.write("\(summary.localRoot): " + parts.joined(separator: ", ") + "\n")
        }
        for problem in summary.problems { Output.error(problem.message) }
        if !summary.problems.isEmpty { throw ExitCode(ExitStatus.file.rawValue) }
    }

    static func json(_ result: DownloadResult) -> JSONValue {
        var object = JSONObject()
        object.append("path", .string(result.remotePath.escaped))
        object.append("local_path", .string(result.localPath))
        object.append("bytes", .uint(result.bytes))
        object.append("resumed_from", .uint(result.resumedFrom))
        object.append("sha256", result.sha256Hex.map { .string($0) } ?? .null)
        return .object(object)
    }

    static func line(_ result: DownloadResult) -> String {
        let resumed = result.resumedFrom > 0 ? " (resumed at byte \(result.resumedFrom))" : ""
        let checksum = result.sha256Hex.map { ", sha256 \($0)" } ?? ""
        return "\(result.localPath): \(result.bytes) bytes\(resumed)\(checksum)"
    }
}

/// The progress line of the file a tree download is on: a new meter per file, cleared between files.
private final class CurrentMeter: Sendable {
    private let meter = Lock<DownloadProgressMeter?>(nil)

    func start(_ name: String) {
        let next = DownloadProgressMeter.onTerminal(name: name)
        meter.withLock { $0 = next }
    }

    func update(done: UInt64, total: UInt64) {
        meter.withLock { $0 }?.update(done: done, total: total)
    }

    func finish() {
        meter.withLock { current in
            defer { current = nil }
            return current
        }?.finish()
    }
}
