import Foundation
import ValueFormats
import Yams

extension FleetFile {
    /// The keys of the file's top level.
    static let topKeys = ["defaults", "groups", "serve"]
    /// The keys of `defaults:`.
    static let defaultsKeys = ["labels", "interval", "timeout", "top", "collector", "textfile_directory"]
    /// The keys of a group.
    static let groupKeys = ["hosts", "labels", "interval", "timeout", "top", "collector", "textfile_directory"]
    /// The keys of a host written as a mapping.
    static let hostKeys = ["host", "labels"]
    /// The keys of `serve:`.
    static let serveKeys = [
        "listen", "token_file", "tls_cert", "tls_key", "history", "otlp", "rules", "alertmanager", "files_root",
        "alertmanager_headers_file",
    ]
    /// The keys of `serve: history:`.
    static let historyKeys = ["path", "retain", "enabled"]
    /// The keys of `serve: otlp:`.
    static let otlpKeys = ["endpoint", "headers_file"]
    /// The collectors `collector:` may name, as `--collector`.
    public static let collectors = ["auto", "proc", "tools"]

    /// Reads the fleet file whose text is `text`; `path` is how messages name it, and relative paths in
    /// `serve:` are taken from its folder.
    ///
    /// - Throws: ``FleetFileError``, one sentence with the file and line: YAML that does not parse, an
    ///   unknown key (with the keys allowed there), a bad duration, number or label name, a host listed in
    ///   two groups with different labels or settings, a file with no host.
    public static func parse(_ text: String, path: String) throws(FleetFileError) -> FleetFile {
        var reader = FleetFileReader(path: path)
        do {
            return try reader.read(text)
        } catch let error as FleetFileError {
            throw error
        } catch {
            throw FleetFileError(path: path, line: nil, "it could not be read (\(error))")
        }
    }
}

/// Walks the YAML tree of one fleet file, keeping the line of everything it reads for its messages. Its
/// functions throw only ``FleetFileError`` (untyped, so that they can read optional fields with `map`).
struct FleetFileReader {
    let path: String

    init(path: String) {
        self.path = path
    }

    mutating func read(_ text: String) throws -> FleetFile {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw yamlProblem(error)
        } catch {
            throw FleetFileError(path: path, line: nil, "it is not YAML that can be read (\(error))")
        }
        guard let root, !isNull(root) else {
            throw FleetFileError(
                path: path, line: nil, "it is empty; it needs a groups: section with at least one group of hosts")
        }
        let top = try mapping(root, of: "the file", keys: FleetFile.topKeys)
        var file = FleetFile(path: path)
        if let defaults = top["defaults"] {
            let values = try mapping(defaults.value, of: "defaults:", keys: FleetFile.defaultsKeys)
            file.defaults = try settings(values)
            file.defaultLabels = try values["labels"].map { try labels($0.value) } ?? [:]
        }
        guard let groups = top["groups"] else {
            throw FleetFileError(
                path: path, line: nil, "it has no groups: section; add one with at least one group of hosts")
        }
        file.groups = try self.groups(groups.value)
        try checkRepeatedHosts(file)
        if let serve = top["serve"] { file.serve = try serveSettings(serve.value) }
        return file
    }

    // MARK: Sections

    private func groups(_ node: Node) throws -> [FleetGroup] {
        guard let mapping = node.mapping, !mapping.isEmpty else {
            throw FleetFileError(
                path: path, line: line(node),
                "groups: must map group names to groups, as `groups: {web: {hosts: [web1, web2]}}`")
        }
        var groups: [FleetGroup] = []
        for (key, value) in mapping {
            let name = try scalarText(key, of: "a group name")
            let fields = try self.mapping(value, of: "the group \(name)", keys: FleetFile.groupKeys)
            guard let hosts = fields["hosts"] else {
                throw FleetFileError(
                    path: path, line: line(key), "the group \(name) has no hosts:; list its hosts or 'pattern*'s")
            }
            groups.append(
                FleetGroup(
                    name: name, line: line(key) ?? 0, hosts: try self.hosts(hosts.value, group: name),
                    labels: try fields["labels"].map { try labels($0.value) } ?? [:], settings: try settings(fields)))
        }
        return groups
    }

    private func hosts(_ node: Node, group: String) throws -> [FleetHost] {
        guard let sequence = node.sequence, !sequence.isEmpty else {
            throw FleetFileError(
                path: path, line: line(node),
                "the hosts: of the group \(group) must be a list of hosts or 'pattern*'s, as `hosts: [web1, 'db-*']`")
        }
        var hosts: [FleetHost] = []
        for item in sequence {
            if item.mapping != nil {
                let fields = try mapping(item, of: "a host of the group \(group)", keys: FleetFile.hostKeys)
                guard let host = fields["host"] else {
                    throw FleetFileError(
                        path: path, line: line(item),
                        "a host written as a mapping needs host:, as `- {host: web1, labels: {rack: r1}}`")
                }
                hosts.append(
                    FleetHost(
                        text: try hostText(host.value), line: line(host.value) ?? 0,
                        labels: try fields["labels"].map { try labels($0.value) } ?? [:]))
            } else {
                hosts.append(FleetHost(text: try hostText(item), line: line(item) ?? 0))
            }
        }
        return hosts
    }

    private func settings(_ fields: Fields) throws -> FleetSettings {
        var settings = FleetSettings()
        if let interval = fields["interval"] {
            let value = try duration(interval.value, key: "interval")
            guard value >= .milliseconds(100) else {
                throw FleetFileError(
                    path: path, line: line(interval.value),
                    "interval: \(DurationText.format(value)) is too short; use 100ms or more")
            }
            settings.interval = value
        }
        if let timeout = fields["timeout"] {
            let value = try duration(timeout.value, key: "timeout")
            guard value > .zero else {
                throw FleetFileError(path: path, line: line(timeout.value), "timeout: must be more than 0s")
            }
            settings.timeout = value
        }
        if let top = fields["top"] {
            let text = try scalarText(top.value, of: "top:")
            guard let value = Int(text), (0...10_000).contains(value) else {
                throw FleetFileError(
                    path: path, line: line(top.value),
                    "top: \(text) is not a number of processes from 0 to 10000")
            }
            settings.top = value
        }
        if let collector = fields["collector"] {
            let text = try scalarText(collector.value, of: "collector:")
            guard FleetFile.collectors.contains(text) else {
                throw FleetFileError(
                    path: path, line: line(collector.value),
                    "collector: \(text) is not one of \(FleetFile.collectors.joined(separator: ", "))")
            }
            settings.collector = text
        }
        if let directory = fields["textfile_directory"] {
            let text = try scalarText(directory.value, of: "textfile_directory:")
            guard RemotePath.isPlainAbsolute(text) else {
                throw FleetFileError(
                    path: path, line: line(directory.value),
                    "textfile_directory: \(text) cannot be used: it must be an absolute path of letters, digits, "
                        + "'.', '_', '-' and '/'")
            }
            settings.textfileDirectory = text
        }
        return settings
    }

    private func serveSettings(_ node: Node) throws -> FleetServeSettings {
        let fields = try mapping(node, of: "serve:", keys: FleetFile.serveKeys)
        var serve = FleetServeSettings()
        serve.listen = try fields["listen"].map { try scalarText($0.value, of: "listen:") }
        serve.tokenFile = try fields["token_file"].map { try filePath($0.value, of: "token_file:") }
        serve.tlsCertificate = try fields["tls_cert"].map { try filePath($0.value, of: "tls_cert:") }
        serve.tlsKey = try fields["tls_key"].map { try filePath($0.value, of: "tls_key:") }
        if (serve.tlsCertificate == nil) != (serve.tlsKey == nil) {
            throw FleetFileError(
                path: path, line: line(node), "serve: tls_cert: and tls_key: go together; give both or neither")
        }
        serve.rules = try fields["rules"].map { try filePath($0.value, of: "rules:") }
        if let alertmanager = fields["alertmanager"] {
            let items = alertmanager.value.sequence.map(Array.init) ?? [alertmanager.value]
            for item in items {
                let url = try scalarText(item, of: "alertmanager:")
                guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
                    throw FleetFileError(
                        path: path, line: line(item),
                        "alertmanager: \(url) is not an http:// or https:// URL, as http://127.0.0.1:9093")
                }
                serve.alertmanagers.append(url)
            }
        }
        if let roots = fields["files_root"] {
            // Directories of the hosts, not of this machine: never taken from the file's folder.
            for item in roots.value.sequence.map(Array.init) ?? [roots.value] {
                let root = try scalarText(item, of: "files_root:")
                guard root.hasPrefix("/") else {
                    throw FleetFileError(
                        path: path, line: line(item),
                        "files_root: \(root) is not an absolute path; name the hosts' directory from /, as /var/log")
                }
                serve.filesRoots.append(root)
            }
        }
        serve.alertmanagerHeadersFile = try fields["alertmanager_headers_file"].map {
            try filePath($0.value, of: "alertmanager_headers_file:")
        }
        if let history = fields["history"] {
            let values = try mapping(history.value, of: "serve: history:", keys: FleetFile.historyKeys)
            serve.historyPath = try values["path"].map { try filePath($0.value, of: "history: path:") }
            serve.historyRetention = try values["retain"].map { try duration($0.value, key: "retain") }
            if let enabled = values["enabled"] {
                guard let value = enabled.value.bool else {
                    throw FleetFileError(
                        path: path, line: line(enabled.value), "history: enabled: must be true or false")
                }
                serve.historyEnabled = value
            }
        }
        if let otlp = fields["otlp"] {
            let values = try mapping(otlp.value, of: "serve: otlp:", keys: FleetFile.otlpKeys)
            serve.otlpEndpoint = try values["endpoint"].map { try scalarText($0.value, of: "otlp: endpoint:") }
            serve.otlpHeadersFile = try values["headers_file"].map {
                try filePath($0.value, of: "otlp: headers_file:")
            }
        }
        return serve
    }

    /// A host listed by name in two groups must get the same labels and settings from both: which group's
    /// would apply is not for hostscope to guess. (Hosts two patterns select are checked once expanded.)
    private func checkRepeatedHosts(_ file: FleetFile) throws {
        var seen: [String: FleetEntry] = [:]
        for entry in file.entries {
            guard let first = seen[entry.text] else {
                seen[entry.text] = entry
                continue
            }
            if let conflict = FleetEntry.conflict(first, entry) {
                throw FleetFileError(
                    path: path, line: entry.line,
                    "\(entry.text) is also in the group \(first.group) (line \(first.line)) with \(conflict); give "
                        + "it the same there, or list it in one group only")
            }
        }
    }

    // MARK: Values

    private func labels(_ node: Node) throws -> [String: String] {
        if isNull(node) { return [:] }
        guard let mapping = node.mapping else {
            throw FleetFileError(
                path: path, line: line(node), "labels: must map label names to values, as `labels: {env: prod}`")
        }
        var labels: [String: String] = [:]
        for (key, value) in mapping {
            let name = try scalarText(key, of: "a label name")
            if let problem = LabelName.problem(with: name) {
                throw FleetFileError(
                    path: path, line: line(key), "the label name \"\(name)\" cannot be used: \(problem)")
            }
            labels[name] = try scalarText(value, of: "the label \(name)")
        }
        return labels
    }

    private func duration(_ node: Node, key: String) throws -> Duration {
        let text = try scalarText(node, of: "\(key):")
        guard let duration = DurationText.parse(text) else {
            throw FleetFileError(
                path: path, line: line(node), "\(key): \"\(text)\" is not a duration; \(DurationText.syntax)")
        }
        return duration
    }

    private func hostText(_ node: Node) throws -> String {
        let text = try scalarText(node, of: "a host")
        guard !text.isEmpty, !text.contains(where: { $0 == " " || $0 == "\t" }) else {
            throw FleetFileError(
                path: path, line: line(node), "\"\(text)\" is not one host or pattern; write one per list item")
        }
        return text
    }

    /// A path from `serve:`, taken from the file's folder when relative.
    private func filePath(_ node: Node, of what: String) throws -> String {
        let text = try scalarText(node, of: what)
        guard !text.isEmpty else { throw FleetFileError(path: path, line: line(node), "\(what) names no file") }
        guard !text.hasPrefix("/"), let slash = path.lastIndex(of: "/") else { return text }
        return String(path[...slash]) + text
    }

    private func scalarText(_ node: Node, of what: String) throws -> String {
        guard let scalar = node.scalar, !isNull(node) else {
            throw FleetFileError(
                path: path, line: line(node), "\(what) needs one value, not a list, a mapping or nothing")
        }
        return scalar.string
    }

    // MARK: Nodes

    /// A mapping's fields by key, each with its key node (for its line); a key not in `keys` is refused.
    private func mapping(_ node: Node, of what: String, keys: [String]) throws -> Fields {
        guard let mapping = node.mapping else {
            throw FleetFileError(
                path: path, line: line(node),
                "\(what) must be a mapping of \(keys.joined(separator: ", ")), not a list or a single value")
        }
        var fields = Fields()
        for (key, value) in mapping {
            let name = key.string ?? ""
            guard keys.contains(name) else {
                throw FleetFileError(
                    path: path, line: line(key),
                    "\"\(name)\" is not a key of \(what); the keys allowed there are \(keys.joined(separator: ", "))")
            }
            fields.values[name] = (key, value)
        }
        return fields
    }

    private func isNull(_ node: Node) -> Bool { node.scalar != nil && node.null != nil }

    private func line(_ node: Node) -> Int? { node.mark?.line }

    private func yamlProblem(_ error: YamlError) -> FleetFileError {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _),
            .composer(_, let problem, let mark, _):
            return FleetFileError(path: path, line: mark.line, "it is not valid YAML: \(problem)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            return FleetFileError(
                path: path, line: context.mark.line,
                "the key \(duplicates.joined(separator: ", ")) is given twice in one mapping; keep one")
        case .reader(let problem, _, _, _):
            return FleetFileError(path: path, line: nil, "it is not UTF-8 YAML text: \(problem)")
        default:
            return FleetFileError(path: path, line: nil, "it is not YAML that can be read (\(error))")
        }
    }
}

/// A mapping's fields by key.
struct Fields {
    var values: [String: (key: Node, value: Node)] = [:]

    subscript(_ key: String) -> (key: Node, value: Node)? { values[key] }
}

extension FleetEntry {
    /// What differs between two entries of one host, as the end of a sentence; `nil` when nothing does.
    public static func conflict(_ first: FleetEntry, _ second: FleetEntry) -> String? {
        for name in Set(first.labels.keys).union(second.labels.keys).sorted()
        where first.labels[name] != second.labels[name] {
            return
                "\(name)=\(first.labels[name] ?? "(unset)") there and \(name)=\(second.labels[name] ?? "(unset)") here"
        }
        if first.settings != second.settings { return "other interval, timeout, top or collector settings" }
        return nil
    }
}
