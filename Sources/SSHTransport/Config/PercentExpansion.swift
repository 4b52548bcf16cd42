import Foundation

/// OpenSSH's `%` tokens and `${VAR}` references in paths (`IdentityFile ~/.ssh/%h_%r`), and its `~` rule.
struct PercentExpansion {
    struct Failure: Error {
        var message: String
    }

    /// The value of each token letter this expansion knows; any other letter is an error, as in `ssh`.
    var tokens: [Character: String]
    /// Variables for `${VAR}`; nil when the keyword takes no `${…}` (`HostName`).
    var variables: [String: String]?
    /// Tokens `ssh` knows but that cannot be known here, with the reason, so the error says so.
    var unavailable: [Character: String] = [:]

    func expand(_ text: String) throws(Failure) -> String {
        var result = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if let variables, text[index...].hasPrefix("${") {
                let nameStart = text.index(index, offsetBy: 2)
                guard let close = text[nameStart...].firstIndex(of: "}") else {
                    throw Failure(message: "\"${\" has no closing \"}\"")
                }
                let name = String(text[nameStart..<close])
                guard !name.isEmpty else {
                    throw Failure(message: "\"${}\" names no environment variable")
                }
                guard let value = variables[name] else {
                    throw Failure(message: "the environment variable \(name) is not set; set it or change the path")
                }
                result += value
                index = text.index(after: close)
                continue
            }
            guard character == "%" else {
                result.append(character)
                index = text.index(after: index)
                continue
            }
            let tokenIndex = text.index(after: index)
            guard tokenIndex < text.endIndex else {
                throw Failure(message: "a \"%\" ends the value; write %% for a percent sign")
            }
            let token = text[tokenIndex]
            if token == "%" {
                result.append("%")
            } else if let value = tokens[token] {
                result += value
            } else if let reason = unavailable[token] {
                throw Failure(message: "%\(token) \(reason)")
            } else {
                throw Failure(message: "%\(token) is not a known token; write %% for a percent sign")
            }
            index = text.index(after: tokenIndex)
        }
        return result
    }

    /// Checks `${…}` syntax without looking variables up, as `ssh` does when it reads `IdentityAgent`.
    static func checkDollarSyntax(_ text: String) throws(Failure) {
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            let afterOpen = rest[start.upperBound...]
            guard let close = afterOpen.firstIndex(of: "}") else {
                throw Failure(message: "\"${\" has no closing \"}\"")
            }
            guard close != afterOpen.startIndex else {
                throw Failure(message: "\"${}\" names no environment variable")
            }
            rest = afterOpen[afterOpen.index(after: close)...]
        }
    }

    /// `~`, `~/path` and `~user/path` as OpenSSH's `tilde_expand` reads them; other paths are unchanged.
    static func expandTilde(_ path: String, in environment: SSHConfigEnvironment) throws(Failure) -> String {
        guard path.hasPrefix("~") else {
            return path
        }
        let afterTilde = path.dropFirst()
        let home: String
        var rest: Substring
        if afterTilde.isEmpty || afterTilde.hasPrefix("/") {
            home = environment.homeDirectory
            rest = afterTilde
        } else {
            let user = afterTilde.prefix { $0 != "/" }
            guard let userHome = environment.homeDirectoryOfUser(String(user)) else {
                throw Failure(message: "\"~\(user)\" names no local user")
            }
            home = userHome
            rest = afterTilde.dropFirst(user.count)
        }
        rest = rest.drop { $0 == "/" }
        let separator = home.hasSuffix("/") ? "" : "/"
        return home + separator + rest
    }
}
