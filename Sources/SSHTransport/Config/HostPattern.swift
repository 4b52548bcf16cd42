/// OpenSSH host patterns: `*` matches any run of characters, `?` any one, everything else itself, case
/// and all. A leading `!` negates a pattern where a list of them is read.
public enum HostPattern {
    /// Whether `name` matches one pattern (no `!`, no commas), as OpenSSH's `match_pattern`.
    public static func matches(_ name: String, pattern: String) -> Bool {
        matches(Array(name.utf8)[...], Array(pattern.utf8)[...])
    }

    /// Whether `text` holds a wildcard, which makes it a pattern rather than a name.
    public static func hasWildcards(_ text: String) -> Bool {
        text.contains { $0 == "*" || $0 == "?" }
    }

    /// Whether `name` is selected by a comma-separated list such as `db-*,!db-old`: some positive pattern
    /// matches and no negated one does (OpenSSH's `match_pattern_list`, case-sensitive).
    public static func matches(_ name: String, patternList: String) -> Bool {
        var positive = false
        for item in patternList.split(separator: ",", omittingEmptySubsequences: true) {
            let negated = item.hasPrefix("!")
            let pattern = negated ? String(item.dropFirst()) : String(item)
            if matches(name, pattern: pattern) {
                if negated {
                    return false
                }
                positive = true
            }
        }
        return positive
    }

    /// Whether the host name `name` is selected by a pattern list without regard to case, as OpenSSH's
    /// `match_hostname` selects for `Match host` and `Match originalhost`.
    public static func matches(hostName name: String, patternList: String) -> Bool {
        matches(name.lowercased(), patternList: patternList.lowercased())
    }

    /// Iterative, with one backtrack point at the latest `*`: time linear in the name for each pattern
    /// position. (Trying every split at every `*` took exponential time: a pattern of a few dozen `*`s
    /// and a name that misses it held a `watch` for minutes; found by fuzzing, docs/fuzzing.md.)
    private static func matches(_ name: ArraySlice<UInt8>, _ pattern: ArraySlice<UInt8>) -> Bool {
        let name = Array(name)
        let pattern = Array(pattern)
        let star = UInt8(ascii: "*")
        let question = UInt8(ascii: "?")
        var nameIndex = 0
        var patternIndex = 0
        var starIndex = -1
        var starName = 0
        while nameIndex < name.count {
            if patternIndex < pattern.count, pattern[patternIndex] != star,
                pattern[patternIndex] == question || pattern[patternIndex] == name[nameIndex]
            {
                nameIndex += 1
                patternIndex += 1
            } else if patternIndex < pattern.count, pattern[patternIndex] == star {
                starIndex = patternIndex
                starName = nameIndex
                patternIndex += 1
            } else if starIndex >= 0 {
                // The latest `*` takes one more byte, and matching resumes after it.
                patternIndex = starIndex + 1
                starName += 1
                nameIndex = starName
            } else {
                return false
            }
        }
        while patternIndex < pattern.count, pattern[patternIndex] == star {
            patternIndex += 1
        }
        return patternIndex == pattern.count
    }
}

/// The patterns of one `Host` line.
struct HostLine: Sendable, Hashable {
    struct Entry: Sendable, Hashable {
        var pattern: String
        var negated: Bool
    }

    var entries: [Entry]
    var location: SSHConfigLocation

    init(_ directive: SSHConfigDirective) throws(SSHError) {
        var entries: [Entry] = []
        for argument in directive.arguments {
            guard !argument.isEmpty else {
                throw .config(directive.location, "Host has an empty pattern; remove it")
            }
            let negated = argument.hasPrefix("!")
            entries.append(Entry(pattern: negated ? String(argument.dropFirst()) : argument, negated: negated))
        }
        self.entries = entries
        self.location = directive.location
    }

    /// Whether the block applies to `host`: some pattern matches and no negated pattern does, wherever it
    /// stands on the line.
    func applies(to host: String) -> Bool {
        var matched = false
        for entry in entries where HostPattern.matches(host, pattern: entry.pattern) {
            if entry.negated {
                return false
            }
            matched = true
        }
        return matched
    }

    /// The names on the line that are names, not patterns: candidates for expanding a fleet pattern.
    var concreteNames: [String] {
        entries.filter { !$0.negated && !HostPattern.hasWildcards($0.pattern) }.map(\.pattern)
    }
}
