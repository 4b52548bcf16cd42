/// Decides whether a line matches a grep pattern: a fixed string compared as bytes, or a
/// regular expression (Swift `Regex` syntax, which reads POSIX extended expressions such as
/// `^ERROR|WARN [0-9]+` the way `grep -E` does).
struct LineMatcher: Sendable {
    // @unchecked Sendable: a compiled Regex is immutable once built; the standard library does
    // not mark Regex<AnyRegexOutput> Sendable on every toolchain.
    private enum Kind: @unchecked Sendable {
        case fixed([UInt8])
        case regex(Regex<AnyRegexOutput>)
    }

    private let kind: Kind
    private let ignoreCase: Bool

    /// - Throws: ``RemoteFilesError`` with `.invalidArgument` when the expression does not compile.
    init(pattern: String, ignoreCase: Bool, fixedString: Bool) throws {
        self.ignoreCase = ignoreCase
        let metacharacters = Set(".[]()*+?{}|^$\\".utf8)
        if fixedString || !pattern.utf8.contains(where: metacharacters.contains) {
            let bytes = Array(pattern.utf8)
            kind = .fixed(ignoreCase ? bytes.map(Self.lowercased) : bytes)
            return
        }
        do {
            let regex = try Regex(pattern)
            kind = .regex(ignoreCase ? regex.ignoresCase() : regex)
        } catch {
            throw RemoteFilesError(
                .invalidArgument,
                "the pattern \(pattern) is not a valid regular expression (\(error)); fix it, or pass -F to search for it as plain text"
            )
        }
    }

    func matches(_ line: ArraySlice<UInt8>) -> Bool {
        switch kind {
        case .fixed(let needle):
            return Self.contains(line, needle, ignoreCase: ignoreCase)
        case .regex(let regex):
            let text = String(decoding: line, as: UTF8.self)
            return (try? regex.firstMatch(in: text)) != nil
        }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
    }

    private static func contains(_ haystack: ArraySlice<UInt8>, _ needle: [UInt8], ignoreCase: Bool) -> Bool {
        guard !needle.isEmpty else { return true }
        guard haystack.count >= needle.count else { return false }
        let first = needle[0]
        var index = haystack.startIndex
        let last = haystack.endIndex - needle.count
        while index <= last {
            let byte = ignoreCase ? lowercased(haystack[index]) : haystack[index]
            if byte == first {
                var offset = 1
                while offset < needle.count {
                    let candidate = haystack[index + offset]
                    if (ignoreCase ? lowercased(candidate) : candidate) != needle[offset] { break }
                    offset += 1
                }
                if offset == needle.count { return true }
            }
            index += 1
        }
        return false
    }
}
