/// One host argument of a fleet command, from the command line or a hosts file: a host (`web1`,
/// `me@db1:2222`), `local`, or a pattern (`'db-*'`, `'db-*,!db-old'`, `'root@db-*'`) over the config's
/// `Host` names.
public struct HostListEntry: Sendable, Hashable {
    /// The argument as written, trimmed.
    public var text: String
    /// The hosts-file line it came from; nil for a command-line argument.
    public var location: SSHConfigLocation?

    /// An entry as written, with the hosts-file line it came from, if any.
    public init(text: String, location: SSHConfigLocation? = nil) {
        self.text = text
        self.location = location
    }
}

/// Turns host arguments, hosts files and patterns into the hosts to watch.
public enum HostList {
    /// Reads a hosts file: one host or pattern per line; blank lines and `#` comments (whole-line, or after
    /// a blank) ignored; surrounding blanks trimmed. A line with two words is an error, so a pasted
    /// `web1 web2` is not silently read as one host.
    public static func parseHostsFile(_ text: String, path: String) throws(SSHError) -> [HostListEntry] {
        var entries: [HostListEntry] = []
        var lineNumber = 0
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: ConfigText.isLineBreak) {
            lineNumber += 1
            let location = SSHConfigLocation(file: path, line: lineNumber)
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            let content = words.prefix { !$0.hasPrefix("#") }
            guard let first = content.first else { continue }
            guard content.count == 1 else {
                throw .config(
                    location,
                    "\"\(quoted(content.joined(separator: " ")))\" is more than one host; write one per line")
            }
            entries.append(HostListEntry(text: String(first), location: location))
        }
        return entries
    }

    /// A line of a file as an error quotes it: at most 80 characters, so a file of one huge line (a log
    /// or a binary given by mistake) is not echoed whole.
    static func quoted(_ text: String) -> String {
        text.count <= 80 ? text : text.prefix(80) + "… (\(text.utf8.count) bytes)"
    }

    /// Reads the hosts file at `path` (`--hosts-file`); a missing file is an error.
    public static func readHostsFile(
        atPath path: String, fileSystem: any SSHConfigFileSystem = LocalSSHConfigFileSystem()
    ) throws(SSHError) -> [HostListEntry] {
        guard let text = try fileSystem.readFile(atPath: path) else {
            throw SSHError(.config, "the hosts file \(path) does not exist; check the path")
        }
        return try parseHostsFile(text, path: path)
    }

    /// The hosts `entries` name, in order, each once (the first spelling kept). A pattern expands to the
    /// config's `Host` names it selects, skipping `Host` entries that are themselves patterns; a `user@` or
    /// `:port` around it applies to every host it yields. A pattern selecting nothing is an error.
    public static func targets(for entries: [HostListEntry], config: SSHConfig) throws(SSHError) -> [HostTarget] {
        var targets: [HostTarget] = []
        var seen = Set<HostTarget>()
        for entry in entries {
            for target in try expand(entry, config: config) where seen.insert(target).inserted {
                targets.append(target)
            }
        }
        return targets
    }

    /// `targets(for:config:)` for command-line arguments.
    public static func targets(forArguments arguments: [String], config: SSHConfig) throws(SSHError) -> [HostTarget] {
        try targets(for: arguments.map { HostListEntry(text: $0) }, config: config)
    }

    /// Whether an argument is a pattern rather than a host.
    public static func isPattern(_ text: String) -> Bool {
        HostPattern.hasWildcards(text) || text.contains(",") || text.hasPrefix("!")
    }

    private static func expand(_ entry: HostListEntry, config: SSHConfig) throws(SSHError) -> [HostTarget] {
        let place = entry.location.map { "\($0): " } ?? ""
        guard isPattern(entry.text) else {
            do {
                return [try HostTarget(parsing: entry.text)]
            } catch {
                throw SSHError(.config, place + error.message)
            }
        }
        var patternList = Substring(entry.text)
        var user: String? = nil
        if let at = patternList.lastIndex(of: "@") {
            user = String(patternList[..<at])
            patternList = patternList[patternList.index(after: at)...]
        }
        var port: Int? = nil
        if let colon = patternList.lastIndex(of: ":") {
            let text = patternList[patternList.index(after: colon)...]
            guard ConfigText.isDigits(text), let value = Int(text), (1...65535).contains(value) else {
                throw SSHError(
                    .config, "\(place)\"\(quoted(entry.text))\": the port \"\(text)\" is not a number from 1 to 65535")
            }
            port = value
            patternList = patternList[..<colon]
        }
        if let user, user.isEmpty {
            throw SSHError(.config, "\(place)\"\(quoted(entry.text))\": the user before \"@\" is empty")
        }
        let aliases = config.hostAliases(matching: String(patternList))
        guard !aliases.isEmpty else {
            let files =
                config.filePaths.isEmpty
                ? "no ssh_config file was found"
                : "no Host name in "
                    + config.filePaths.joined(separator: ", ") + " matches it"
            throw SSHError(.config, "\(place)the pattern \"\(quoted(String(patternList)))\" selects no host: \(files)")
        }
        return aliases.map { .remote(SSHDestination(host: $0, user: user, port: port)) }
    }
}
