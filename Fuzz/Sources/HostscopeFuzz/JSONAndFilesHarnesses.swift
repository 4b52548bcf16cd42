import OrderedJSON

@testable import RemoteFiles
@testable import SSHTransport

extension Harness {
    /// The JSON parser; what it reads, written back, must read the same.
    static let json = Harness(name: "json") { bytes in
        guard let value = try? JSONParser.parse(bytes: bytes) else { return }
        checkJSONRoundTrip(value, "json")
        let pretty = JSONWriter(pretty: true).string(value)
        check((try? JSONParser.parse(pretty)).map { sameJSON($0, value) } ?? false, "pretty JSON reads back different")
    }

    /// The glob patterns of `files find -name` and of ssh_config's `Include`, and ssh's host patterns: pattern
    /// first, then NUL, then the name.
    static let glob = Harness(name: "glob") { bytes in
        var input = FuzzInput(bytes)
        let pattern = input.field(limit: 256)
        let name = input.rest()
        let patternText = text(pattern)
        _ = RemoteFiles.GlobPattern(patternText).matches(name)
        _ = SSHTransport.GlobPattern.matches(text(name), patternText)
        _ = HostPattern.matches(text(name), patternList: patternText)
        _ = HostPattern.matches(hostName: text(name), patternList: patternText)
        // Scalars, not Characters: `\` or `[` followed by a combining mark is one Character that equals
        // neither, yet the matcher (as `find -name`) reads the wildcard scalar on its own.
        if !patternText.unicodeScalars.contains(where: { "*?[\\".unicodeScalars.contains($0) }) {
            check(
                RemoteFiles.GlobPattern(patternText).matches(Array(patternText.utf8)), "a plain pattern misses itself")
        }
    }

    /// `files grep`'s pattern parser and matcher: flags byte, the pattern, NUL, then lines. With -F the matcher
    /// must agree with a plain substring search.
    static let linePattern = Harness(name: "line-pattern") { bytes in
        var input = FuzzInput(bytes)
        let flags = input.byte()
        let pattern = text(input.field(limit: 200))
        let lines = input.rest().split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let fixed = flags & 1 == 1
        guard let matcher = try? LineMatcher(pattern: pattern, ignoreCase: flags & 2 == 2, fixedString: fixed) else {
            return
        }
        for line in lines.prefix(64) {
            let matched = matcher.matches(line)
            if fixed, flags & 2 == 0, line.allSatisfy({ $0 < 0x80 }) {
                let needle = Array(pattern.utf8)
                let found =
                    needle.isEmpty
                    || (line.count >= needle.count
                        && (0...(line.count - needle.count)).contains {
                            line.dropFirst($0).starts(with: needle)
                        })
                check(
                    matched == found, "-F \(pattern) on \(text(line)): matcher says \(matched), substring says \(found)"
                )
            }
        }
    }
}
