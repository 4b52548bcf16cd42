extension ParseError {
    /// An error for text that is not what `source` prints, naming the tool it looks like instead
    /// when it is recognisably another one's.
    ///
    /// - Parameters:
    ///   - what: what was looked for and not found, e.g. "no `Mem:` line".
    ///   - expected: the command whose output was expected, e.g. "`free`".
    static func unexpected(
        source: String, _ what: String, expected: String, text: String, line: Int? = nil
    ) -> ParseError {
        var message = "\(what): expected the output of \(expected)"
        if text.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }) {
            message = "the input is empty: expected the output of \(expected)"
        } else if let other = ToolRecognizer.recognize(text), other != source,
            ToolRecognizer.displayName(other) != source
        {
            message += "; this looks like the output of `\(ToolRecognizer.displayName(other))`"
        }
        return ParseError(source: source, message: message, line: line)
    }
}
