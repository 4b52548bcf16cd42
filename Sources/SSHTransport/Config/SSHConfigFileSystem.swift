import Foundation

/// The files ssh_config loading may read: the config itself, its `Include`s and `/etc/services`.
///
/// Injected so that tests, and callers holding config text in memory, never touch the real home directory.
public protocol SSHConfigFileSystem: Sendable {
    /// The text of the file at `path`; nil when nothing is there, which `Include` ignores as OpenSSH does.
    /// A directory reads as empty, as it does to `ssh`; a file that exists but cannot be read throws.
    func readFile(atPath path: String) throws(SSHError) -> String?

    /// The names in the directory at `path`, or nil when it is not a directory.
    func directoryEntries(atPath path: String) -> [String]?
}

extension SSHConfigFileSystem {
    /// The paths matching a `glob(3)` pattern, sorted: `*`, `?`, `[…]` in any component; a leading `.` in a
    /// name is matched only by a leading `.` in the pattern. A pattern without wildcards matches only an
    /// existing path.
    public func paths(matchingGlob pattern: String) -> [String] {
        let absolute = pattern.hasPrefix("/")
        let components = pattern.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        var candidates = [absolute ? "/" : ""]
        for (position, component) in components.enumerated() {
            let isLast = position == components.count - 1
            var next: [String] = []
            for base in candidates {
                let directory = base.isEmpty ? "." : base
                if GlobPattern.hasWildcards(component) {
                    let names = directoryEntries(atPath: directory) ?? []
                    for name in names.sorted() where GlobPattern.matches(name, component) {
                        next.append(GlobPattern.join(base, name))
                    }
                } else {
                    let path = GlobPattern.join(base, GlobPattern.unescaped(component))
                    if isLast ? exists(path) : directoryEntries(atPath: path) != nil {
                        next.append(path)
                    }
                }
            }
            candidates = next
        }
        return components.isEmpty ? [] : candidates.sorted()
    }

    private func exists(_ path: String) -> Bool {
        if directoryEntries(atPath: path) != nil {
            return true
        }
        do {
            return try readFile(atPath: path) != nil
        } catch {
            // It is there but unreadable: the caller's read will say so.
            return true
        }
    }
}

/// The machine's own files, read through Foundation.
public struct LocalSSHConfigFileSystem: SSHConfigFileSystem {
    /// The machine's file system.
    public init() {}

    public func readFile(atPath path: String) throws(SSHError) -> String? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            return nil
        }
        if isDirectory.boolValue {
            return ""
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SSHError(.config, "cannot read \(path); check its permissions")
        }
        return String(decoding: data, as: UTF8.self)
    }

    public func directoryEntries(atPath path: String) -> [String]? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            return nil
        }
        return (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    }
}

/// Files held in memory, keyed by absolute path; directories exist where files lie under them.
public struct InMemorySSHConfigFileSystem: SSHConfigFileSystem {
    /// The files, by absolute path.
    public var files: [String: String]

    /// Files by absolute path.
    public init(_ files: [String: String] = [:]) {
        self.files = files
    }

    public func readFile(atPath path: String) throws(SSHError) -> String? {
        if let text = files[path] {
            return text
        }
        return directoryEntries(atPath: path) == nil ? nil : ""
    }

    public func directoryEntries(atPath path: String) -> [String]? {
        let prefix = path.hasSuffix("/") ? path : path + "/"
        var names = Set<String>()
        for key in files.keys where key.hasPrefix(prefix) {
            if let name = key.dropFirst(prefix.count).split(separator: "/").first {
                names.insert(String(name))
            }
        }
        return names.isEmpty ? nil : names.sorted()
    }
}

/// `fnmatch(3)` without flags but with leading-dot protection, over Unicode scalars.
enum GlobPattern {
    static func hasWildcards(_ pattern: String) -> Bool {
        pattern.contains { $0 == "*" || $0 == "?" || $0 == "[" }
    }

    static func unescaped(_ component: String) -> String {
        var result = ""
        var escaping = false
        for character in component {
            if !escaping, character == "\\" {
                escaping = true
                continue
            }
            escaping = false
            result.append(character)
        }
        return result
    }

    static func join(_ base: String, _ name: String) -> String {
        if base.isEmpty {
            return name
        }
        return base.hasSuffix("/") ? base + name : base + "/" + name
    }

    static func matches(_ name: String, _ pattern: String) -> Bool {
        let name = Array(name.unicodeScalars)
        let pattern = Array(pattern.unicodeScalars)
        if name.first == ".", pattern.first != "." {
            return false
        }
        return matches(name[...], pattern[...])
    }

    /// Iterative, with one backtrack point at the latest `*` (as ``HostPattern`` and `files find`'s globs):
    /// trying every split at every `*` took time exponential in the number of `*`s.
    private static func matches(_ name: ArraySlice<Unicode.Scalar>, _ pattern: ArraySlice<Unicode.Scalar>) -> Bool {
        var name = name
        var pattern = pattern
        var backtrack: (pattern: ArraySlice<Unicode.Scalar>, name: ArraySlice<Unicode.Scalar>)?
        while let scalar = name.first {
            if pattern.first == "*" {
                while pattern.first == "*" {
                    pattern = pattern.dropFirst()
                }
                if pattern.isEmpty {
                    return true
                }
                backtrack = (pattern, name)
            } else if let rest = matchOne(scalar, pattern) {
                name = name.dropFirst()
                pattern = rest
            } else if let point = backtrack, !point.name.isEmpty {
                // The latest `*` takes one more scalar, and matching resumes after it.
                name = point.name.dropFirst()
                pattern = point.pattern
                backtrack = (point.pattern, name)
            } else {
                return false
            }
        }
        while pattern.first == "*" {
            pattern = pattern.dropFirst()
        }
        return pattern.isEmpty
    }

    /// The pattern after its first token when that token (not `*`) matches `scalar`; nil when it does not
    /// or the pattern is empty.
    private static func matchOne(
        _ scalar: Unicode.Scalar, _ pattern: ArraySlice<Unicode.Scalar>
    ) -> ArraySlice<Unicode.Scalar>? {
        guard let token = pattern.first else { return nil }
        switch token {
        case "?":
            return pattern.dropFirst()
        case "[":
            if let (matched, remaining) = matchClass(scalar, pattern.dropFirst()) {
                return matched ? remaining : nil
            }
            // An unclosed `[` is an ordinary character.
            return scalar == "[" ? pattern.dropFirst() : nil
        case "\\" where pattern.count > 1:
            return scalar == pattern[pattern.startIndex + 1] ? pattern.dropFirst(2) : nil
        default:
            return scalar == token ? pattern.dropFirst() : nil
        }
    }

    /// Whether `scalar` is in the bracket expression that starts `body` (just after `[`), and what follows
    /// the closing `]`; nil when the bracket is never closed.
    private static func matchClass(
        _ scalar: Unicode.Scalar, _ body: ArraySlice<Unicode.Scalar>
    ) -> (Bool, ArraySlice<Unicode.Scalar>)? {
        var body = body
        var negated = false
        if let first = body.first, first == "!" || first == "^" {
            negated = true
            body = body.dropFirst()
        }
        var matched = false
        var first = true
        while let current = body.first {
            if current == "]", !first {
                return (matched != negated, body.dropFirst())
            }
            first = false
            body = body.dropFirst()
            if body.count >= 2, body.first == "-", body[body.startIndex + 1] != "]" {
                let upper = body[body.startIndex + 1]
                if current.value <= scalar.value, scalar.value <= upper.value {
                    matched = true
                }
                body = body.dropFirst(2)
            } else if current == scalar {
                matched = true
            }
        }
        return nil
    }
}
