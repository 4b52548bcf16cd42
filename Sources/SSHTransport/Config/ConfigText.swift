/// Character classes of the config and host argument syntaxes, which are ASCII.
enum ConfigText {
    static func isDigit(_ character: Character) -> Bool {
        character.isASCII && character.isWholeNumber
    }

    /// A line ends at LF; Swift reads CR LF as one character, which must end a line too.
    static func isLineBreak(_ character: Character) -> Bool {
        character == "\n" || character == "\r\n"
    }

    static func isDigits(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.allSatisfy(isDigit)
    }
}

/// Environment variable names as OpenSSH accepts them: a letter or `_`, then letters, digits or `_`.
enum EnvironmentName {
    static func isValid(_ name: Substring) -> Bool {
        guard let first = name.first, first.isASCII, first.isLetter || first == "_" else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }
}
