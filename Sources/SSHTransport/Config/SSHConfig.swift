/// The ssh_config files a user's `ssh` reads, parsed and checked, ready to resolve any host against.
///
/// Reading follows OpenSSH: keywords in any case, `Key value` or `Key=value`, quotes, comments, `Host`
/// blocks with several patterns and `!` negation, `Match` blocks (see ``MatchLine``), and `Include` (relative
/// to `~/.ssh` in user files and `/etc/ssh` in system files, with globs, missing files ignored, at most 16
/// levels deep). Keywords hostscope does not use are kept for diagnostics. Values of the keywords it uses,
/// and `Match` conditions, are checked on every line, matching or not, and a bad one is an `SSHError` with
/// code `.config` naming the file, the line and what to write. A keyword `ssh` does not know stops the
/// resolution of every host, as it stops `ssh`, unless an `IgnoreUnknown` in force covers it.
public struct SSHConfig: Sendable {
    /// Whose file a config is: it decides where relative `Include`s point and whether `~` may start them.
    public enum FileKind: Sendable, Hashable {
        /// `~/.ssh/config` or a file given explicitly (`ssh -F`).
        case user
        /// `/etc/ssh/ssh_config`.
        case system
    }

    indirect enum Node: Sendable {
        case host(HostLine)
        case match(MatchLine)
        case setting(ConfigSetting, SSHConfigDirective)
        /// A keyword OpenSSH does not know: whether it stops resolution depends on the `IgnoreUnknown` in force
        /// for the host when the line is reached.
        case unknownKeyword(SSHConfigDirective)
        case include(SSHConfigDirective, [File])
    }

    struct File: Sendable {
        var path: String
        var nodes: [Node]
    }

    /// The inputs the files were read with, which resolution uses too (home, users, environment).
    public let environment: SSHConfigEnvironment
    /// What was read but is not applied as `ssh` applies it (keywords `ssh` no longer supports,
    /// `CanonicalizeHostname`), each once; the command line prints them once per run.
    public let warnings: [SSHConfigWarning]
    let files: [File]

    /// The user's config file, `~/.ssh/config`.
    public static let userConfigPath = "~/.ssh/config"
    /// The system-wide config file.
    public static let systemConfigPath = "/etc/ssh/ssh_config"
    /// OpenSSH's limit on nested `Include`s.
    public static let maximumIncludeDepth = 16

    /// A config with no files: every host resolves to the defaults.
    public init(environment: SSHConfigEnvironment) {
        self.init(environment: environment, files: [], warnings: [])
    }

    init(environment: SSHConfigEnvironment, files: [File], warnings: [SSHConfigWarning]) {
        self.environment = environment
        self.files = files
        self.warnings = warnings
    }

    /// Reads config text held in memory; its `Include`s are read through `environment.fileSystem`.
    ///
    /// - Parameter path: the name used in messages and, for a relative name, nothing else.
    public init(
        parsing text: String, path: String, kind: FileKind = .user, environment: SSHConfigEnvironment
    ) throws(SSHError) {
        var loader = ConfigLoader(environment: environment)
        let file = try loader.parse(text, path: path, kind: kind, depth: 0)
        self.init(environment: environment, files: [file], warnings: loader.warnings)
    }

    /// Reads the files `ssh` would: `~/.ssh/config` then `/etc/ssh/ssh_config` (each may be missing), or
    /// only `configFile` when one is given (as `ssh -F`), which must then exist.
    public static func load(
        environment: SSHConfigEnvironment = .current(), configFile: String? = nil
    ) throws(SSHError) -> SSHConfig {
        var loader = ConfigLoader(environment: environment)
        var files: [File] = []
        if let configFile {
            let path = try loader.expandTilde(configFile, SSHConfigLocation(file: configFile, line: 0))
            guard let file = try loader.read(path, kind: .user, depth: 0) else {
                throw SSHError(.config, "the config file \(configFile) does not exist; check the path")
            }
            files.append(file)
        } else {
            let userPath = try loader.expandTilde(userConfigPath, SSHConfigLocation(file: userConfigPath, line: 0))
            if let file = try loader.read(userPath, kind: .user, depth: 0) {
                files.append(file)
            }
            if let file = try loader.read(systemConfigPath, kind: .system, depth: 0) {
                files.append(file)
            }
        }
        return SSHConfig(environment: environment, files: files, warnings: loader.warnings)
    }

    /// The paths of every file read, includes too, in reading order.
    public var filePaths: [String] {
        var paths: [String] = []
        func walk(_ file: File) {
            paths.append(file.path)
            for case .include(_, let included) in file.nodes {
                included.forEach(walk)
            }
        }
        files.forEach(walk)
        return paths
    }

    /// Every directive read, in the order `ssh` meets them (an included file's right after its `Include`).
    public var directives: [SSHConfigDirective] {
        var result: [SSHConfigDirective] = []
        func walk(_ nodes: [Node]) {
            for node in nodes {
                switch node {
                case .host(let line):
                    let arguments = line.entries.map { ($0.negated ? "!" : "") + $0.pattern }
                    result.append(SSHConfigDirective(keyword: "host", arguments: arguments, location: line.location))
                case .match(let line):
                    result.append(line.directive)
                case .setting(_, let directive), .unknownKeyword(let directive):
                    result.append(directive)
                case .include(let directive, let included):
                    result.append(directive)
                    included.forEach { walk($0.nodes) }
                }
            }
        }
        files.forEach { walk($0.nodes) }
        return result
    }

    /// The names on `Host` lines that are names rather than patterns (no `*`, `?` or `!`), each once, in
    /// file order: the hosts a user has named in the config.
    public var hostAliases: [String] {
        var seen = Set<String>()
        var result: [String] = []
        func walk(_ nodes: [Node]) {
            for node in nodes {
                switch node {
                case .host(let line):
                    for name in line.concreteNames where seen.insert(name).inserted {
                        result.append(name)
                    }
                case .include(_, let included):
                    included.forEach { walk($0.nodes) }
                case .match, .setting, .unknownKeyword:
                    break
                }
            }
        }
        files.forEach { walk($0.nodes) }
        return result
    }

    /// The `hostAliases` selected by a pattern list such as `db-*` or `db-*,!db-old`.
    public func hostAliases(matching patternList: String) -> [String] {
        hostAliases.filter { HostPattern.matches($0, patternList: patternList) }
    }
}

/// Reads files and their includes into nodes, collecting warnings.
struct ConfigLoader {
    let environment: SSHConfigEnvironment
    var warnings: [SSHConfigWarning] = []
    private var services: String??

    init(environment: SSHConfigEnvironment) {
        self.environment = environment
    }

    mutating func read(_ path: String, kind: SSHConfig.FileKind, depth: Int) throws(SSHError) -> SSHConfig.File? {
        guard let text = try environment.fileSystem.readFile(atPath: path) else {
            return nil
        }
        return try parse(text, path: path, kind: kind, depth: depth)
    }

    mutating func parse(
        _ text: String, path: String, kind: SSHConfig.FileKind, depth: Int
    ) throws(SSHError) -> SSHConfig.File {
        var nodes: [SSHConfig.Node] = []
        var lineNumber = 0
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: ConfigText.isLineBreak) {
            lineNumber += 1
            let location = SSHConfigLocation(file: path, line: lineNumber)
            guard let directive = try ConfigLineScanner.scan(line, at: location) else {
                continue
            }
            nodes.append(try node(for: directive, kind: kind, depth: depth))
        }
        return SSHConfig.File(path: path, nodes: nodes)
    }

    private mutating func node(
        for directive: SSHConfigDirective, kind: SSHConfig.FileKind, depth: Int
    ) throws(SSHError) -> SSHConfig.Node {
        switch directive.keyword {
        case "host":
            return .host(try HostLine(directive))
        case "match":
            return .match(try MatchLine(directive))
        case "include":
            return .include(directive, try include(directive, kind: kind, depth: depth))
        default:
            guard OpenSSHKeywords.all.contains(directive.keyword) else {
                return .unknownKeyword(directive)
            }
            if OpenSSHKeywords.unsupported.contains(directive.keyword) {
                warnings.append(
                    SSHConfigWarning(
                        location: directive.location,
                        message: "\"\(directive.spelling)\" is no longer supported by ssh, which ignores it too; "
                            + "remove it"))
            }
            let setting = try ConfigSetting.interpret(directive) { self.servicesText() }
            if case .canonicalizeHostname(true) = setting {
                warnings.append(
                    SSHConfigWarning(
                        location: directive.location,
                        message: "\(directive.spelling) is not applied: hostscope connects to the name given or set "
                            + "by HostName without canonicalising it, and reads Match canonical blocks as ssh does "
                            + "when canonicalisation finds no other name"))
            }
            return .setting(setting, directive)
        }
    }

    private mutating func servicesText() -> String? {
        if let services {
            return services
        }
        let text = (try? environment.fileSystem.readFile(atPath: "/etc/services")) ?? nil
        services = .some(text)
        return text
    }

    private mutating func include(
        _ directive: SSHConfigDirective, kind: SSHConfig.FileKind, depth: Int
    ) throws(SSHError) -> [SSHConfig.File] {
        var files: [SSHConfig.File] = []
        for argument in directive.arguments {
            guard !argument.isEmpty else {
                throw .config(directive.location, "Include has an empty file name; remove it")
            }
            if argument.hasPrefix("~"), kind == .system {
                throw .config(directive.location, "Include \"\(argument)\": a system file may not include from ~")
            }
            var pattern = argument
            if !argument.hasPrefix("/"), !argument.hasPrefix("~") {
                pattern = (kind == .user ? "~/.ssh/" : "/etc/ssh/") + argument
            }
            // glob(3)'s GLOB_TILDE leaves `~nosuchuser` as it is, so it simply matches nothing.
            let expanded = (try? PercentExpansion.expandTilde(pattern, in: environment)) ?? pattern
            for path in environment.fileSystem.paths(matchingGlob: expanded) {
                guard depth < SSHConfig.maximumIncludeDepth else {
                    throw .config(
                        directive.location,
                        "Include nests more than \(SSHConfig.maximumIncludeDepth) files deep; "
                            + "does a file include itself?")
                }
                if let file = try read(path, kind: kind, depth: depth + 1) {
                    files.append(file)
                }
            }
        }
        return files
    }

    func expandTilde(_ path: String, _ location: SSHConfigLocation) throws(SSHError) -> String {
        do {
            return try PercentExpansion.expandTilde(path, in: environment)
        } catch {
            throw .config(location, error.message)
        }
    }
}
