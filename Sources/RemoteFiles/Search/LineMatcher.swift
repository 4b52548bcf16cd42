/// Decides whether a line matches a grep pattern: a regular expression (``LinePattern``: POSIX
/// extended syntax such as `^ERROR|WARN [0-9]+`, as `grep -E` reads it, with the common Perl
/// escapes), or a fixed string with `-F`.
///
/// Every line is matched in time linear in its length, for any pattern (``LineAutomaton``): a
/// pattern such as `(a|aa)*c` that makes a backtracking matcher take exponential time costs no
/// more here than any other, and syntax that only a backtracking matcher can run
/// (back-references, look-around) is refused with a sentence saying so.
///
/// Not `Sendable`: the automaton caches steps as it goes; one search uses one matcher.
final class LineMatcher {
    private let automaton: LineAutomaton

    /// - Throws: ``RemoteFilesError`` with `.invalidArgument` when the pattern cannot be used.
    init(pattern: String, ignoreCase: Bool, fixedString: Bool) throws {
        do {
            if fixedString {
                let units = pattern.unicodeScalars.map { LinePattern.unit(UnitSet($0.value)) }
                automaton = try LineAutomaton(.concatenation(units), ignoreCase: ignoreCase)
            } else {
                let (parsed, inline) = try LinePattern.parse(pattern)
                automaton = try LineAutomaton(parsed, ignoreCase: ignoreCase || inline)
            }
        } catch {
            let sentence: String
            switch error.kind {
            case .invalid:
                sentence =
                    "the pattern \(pattern) is not a valid regular expression (\(error.reason)); fix it, or pass -F to search for it as plain text"
            case .unsupported:
                sentence =
                    "the pattern \(pattern) uses \(error.reason), which grep here does not run (matching them can take time exponential in a line's length); rewrite it without them, or pass -F to search for it as plain text"
            case .tooLarge:
                sentence =
                    "the pattern \(pattern) is too large: \(error.reason); use smaller {n,m} counts or a shorter pattern"
            }
            throw RemoteFilesError(.invalidArgument, sentence)
        }
    }

    func matches(_ line: ArraySlice<UInt8>) -> Bool {
        line.withUnsafeBufferPointer { automaton.matches($0) }
    }
}
