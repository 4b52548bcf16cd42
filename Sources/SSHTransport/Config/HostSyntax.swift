/// Where Unix-style host names and addresses end, as OpenSSH draws the lines.
enum HostAddress {
    /// OpenSSH's `is_addr_fast`: an address is not lower-cased, a name is.
    static func looksLikeAddress(_ host: String) -> Bool {
        host.contains("%") || host.contains(":") || host.allSatisfy { $0 == "." || ConfigText.isDigit($0) }
    }
}

/// Checks shared by host, file and hosts-file arguments.
enum HostSyntax {
    /// Characters `ssh` refuses in a host name because a shell or a `ProxyCommand` would read them, plus
    /// the separators of the argument forms and of hosts files.
    private static let forbidden: Set<Character> = [
        "'", "`", "\"", "$", "\\", ";", "&", "<", ">", "|", "(", ")", "{", "}", "/", "@", "[", "]", "#",
    ]

    /// Characters `ssh` refuses in a user name given on its command line.
    private static let userForbidden: Set<Character> = ["'", "`", "\"", ";", "&", "<", ">", "|", "(", ")", "{", "}"]

    static func invalid(_ argument: String, _ reason: String) -> SSHError {
        SSHError(.config, "\"\(HostList.quoted(argument))\" is not a valid host: \(reason)")
    }

    static func host(_ text: Substring, in argument: String) throws(SSHError) -> String {
        guard !text.isEmpty else {
            throw invalid(argument, "the host name is missing")
        }
        guard !text.hasPrefix("-") else {
            throw invalid(argument, "a host name cannot start with \"-\"")
        }
        if HostPattern.hasWildcards(String(text)) {
            throw invalid(argument, "it is a pattern; patterns select Host names from ~/.ssh/config")
        }
        if let bad = text.first(where: { forbidden.contains($0) || $0.isWhitespace || isControl($0) }) {
            throw invalid(argument, "the host name contains \"\(bad.isWhitespace ? " " : bad)\"")
        }
        return String(text)
    }

    static func user(_ text: Substring, in argument: String) throws(SSHError) -> String {
        guard !text.isEmpty else {
            throw invalid(argument, "the user before \"@\" is empty; write USER@HOST or leave out the \"@\"")
        }
        guard !text.hasPrefix("-") else {
            throw invalid(argument, "a user name cannot start with \"-\"")
        }
        if let bad = text.first(where: { userForbidden.contains($0) || $0.isWhitespace || isControl($0) }) {
            throw invalid(argument, "the user name contains \"\(bad.isWhitespace ? " " : bad)\"")
        }
        return String(text)
    }

    static func port(_ text: Substring, in argument: String) throws(SSHError) -> Int {
        guard ConfigText.isDigits(text), let port = Int(text), (1...65535).contains(port) else {
            throw invalid(argument, "the port \"\(text)\" is not a number from 1 to 65535")
        }
        return port
    }

    private static func isControl(_ character: Character) -> Bool {
        character.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}
