/// A directive whose value hostscope applies, checked when the file is read. Like `ssh`, hostscope checks
/// every line, also those in blocks that match no host, so a typo fails at once rather than on the day
/// the host it sits under is first used.
enum ConfigSetting: Sendable, Hashable {
    case hostName(String)
    case user(String)
    case port(Int)
    case identityFile(String)
    case identitiesOnly(Bool)
    case userKnownHostsFiles([String])
    case globalKnownHostsFiles([String])
    /// `RevokedHostKeys`: files of public keys refused for every host.
    case revokedHostKeysFiles([String])
    case strictHostKeyChecking(StrictHostKeyChecking)
    /// Seconds; nil for `none`, which leaves the option unset (a later line may still set it), as in `ssh`.
    case connectTimeout(Int?)
    case serverAliveInterval(Int?)
    case serverAliveCountMax(Int)
    case identityAgent(String)
    case hostKeyAlias(String)
    /// `Ciphers`, `MACs`, `KexAlgorithms` or `HostKeyAlgorithms`, as written (see ``SSHAlgorithmPreferences``).
    case algorithms(SSHAlgorithmKind, String)
    /// `ProxyJump` (its first word) or `ProxyCommand` (the rest of the line as written); `none` means a direct
    /// connection.
    case proxy(SSHProxy.Kind, String)
    /// `IgnoreUnknown`: a pattern list of keywords to pass over instead of stopping at them.
    case ignoreUnknown(String)
    /// `CanonicalizeHostname`: true for `yes` and `always`.
    case canonicalizeHostname(Bool)
    /// A keyword hostscope does not apply; the directive is kept for diagnostics.
    case other

    /// The most files one `UserKnownHostsFile`, `GlobalKnownHostsFile` or `RevokedHostKeys` line may name, as
    /// in OpenSSH.
    static let maximumKnownHostsFiles = 16

    /// The typed value of `directive`, or an error naming its line and what to write instead.
    static func interpret(
        _ directive: SSHConfigDirective, services: () -> String?
    ) throws(SSHError) -> ConfigSetting {
        switch directive.keyword {
        case "hostname": return .hostName(try single(directive))
        case "user": return .user(try single(directive))
        case "hostkeyalias": return .hostKeyAlias(try single(directive))
        case "port": return .port(try port(single(directive), directive, services: services))
        case "identityfile", "identityfile2": return .identityFile(try single(directive))
        case "identitiesonly": return .identitiesOnly(try flag(single(directive), directive))
        case "userknownhostsfile": return .userKnownHostsFiles(try fileList(directive))
        case "globalknownhostsfile": return .globalKnownHostsFiles(try fileList(directive))
        case "revokedhostkeys": return .revokedHostKeysFiles(try fileList(directive))
        case "stricthostkeychecking": return .strictHostKeyChecking(try strictness(single(directive), directive))
        case "connecttimeout": return .connectTimeout(try time(single(directive), directive))
        case "serveraliveinterval": return .serverAliveInterval(try time(single(directive), directive))
        case "serveralivecountmax": return .serverAliveCountMax(try count(single(directive), directive))
        case "identityagent": return .identityAgent(try agentPath(single(directive), directive))
        case "ciphers", "macs", "kexalgorithms", "hostkeyalgorithms":
            let kind = SSHAlgorithmKind.allCases.first { $0.lowercasedKeyword == directive.keyword }!
            let value = try single(directive)
            let body = "+-^".contains(value.first!) ? value.dropFirst() : value[...]
            guard !body.isEmpty,
                !body.split(separator: ",", omittingEmptySubsequences: false).contains(where: \.isEmpty)
            else {
                throw .config(
                    directive.location,
                    "\(directive.spelling) \(value) has an empty name; list \(kind.noun)s separated by single commas")
            }
            return .algorithms(kind, value)
        case "proxycommand":
            // `ssh` hands the rest of the line to the shell, quotes and all.
            let value = directive.rawValue ?? directive.arguments.joined(separator: " ")
            guard !value.isEmpty, !directive.arguments.joined().isEmpty else {
                throw .config(directive.location, "\(directive.spelling) has an empty value; give it one or none")
            }
            return .proxy(.command, value)
        case "proxyjump":
            // `ssh` reads the first word only, and refuses a list it cannot take apart.
            guard let value = directive.arguments.first, !value.isEmpty else {
                throw .config(directive.location, "\(directive.spelling) has an empty value; give it one or none")
            }
            if value.lowercased() != "none" {
                do {
                    _ = try SSHJumpHops(parsing: value)
                } catch {
                    throw .config(directive.location, "Invalid \(directive.spelling) \"\(value)\": \(error.message)")
                }
            }
            return .proxy(.jump, value)
        case "ignoreunknown": return .ignoreUnknown(try single(directive))
        case "canonicalizehostname":
            switch try single(directive).lowercased() {
            case "yes", "true", "always": return .canonicalizeHostname(true)
            case "no", "false": return .canonicalizeHostname(false)
            default:
                throw .config(
                    directive.location,
                    "\(directive.spelling) \"\(directive.arguments[0])\" is not valid; write yes, no or always")
            }
        default: return .other
        }
    }

    private static func single(_ directive: SSHConfigDirective) throws(SSHError) -> String {
        guard let value = directive.arguments.first, !value.isEmpty else {
            throw .config(directive.location, "\(directive.spelling) has an empty value; give it one")
        }
        guard directive.arguments.count == 1 else {
            throw .config(
                directive.location,
                "\(directive.spelling) takes one value but has \(directive.arguments.count); quote a value "
                    + "that contains spaces")
        }
        return value
    }

    private static func port(
        _ text: String, _ directive: SSHConfigDirective, services: () -> String?
    ) throws(SSHError) -> Int {
        if ConfigText.isDigits(text) {
            if let value = Int(text), (1...65535).contains(value) {
                return value
            }
        } else if let value = ServicesFile.tcpPort(named: text, in: services()) {
            // `ssh` takes service names (`Port ssh`) through getservbyname.
            return value
        }
        throw .config(
            directive.location, "Port \"\(text)\" is not a port; write a number from 1 to 65535")
    }

    private static func flag(_ text: String, _ directive: SSHConfigDirective) throws(SSHError) -> Bool {
        switch text.lowercased() {
        case "yes", "true": return true
        case "no", "false": return false
        default:
            throw .config(directive.location, "\(directive.spelling) \"\(text)\" is not valid; write yes or no")
        }
    }

    private static func strictness(
        _ text: String, _ directive: SSHConfigDirective
    ) throws(SSHError) -> StrictHostKeyChecking {
        guard let value = StrictHostKeyChecking(configValue: text) else {
            throw .config(
                directive.location,
                "\(directive.spelling) \"\(text)\" is not valid; write yes, accept-new, no, off or ask")
        }
        return value
    }

    private static func count(_ text: String, _ directive: SSHConfigDirective) throws(SSHError) -> Int {
        guard ConfigText.isDigits(text), let value = Int(text), value <= Int(Int32.max) else {
            throw .config(
                directive.location, "\(directive.spelling) \"\(text)\" is not a whole number; write one, like 3")
        }
        return value
    }

    private static func time(_ text: String, _ directive: SSHConfigDirective) throws(SSHError) -> Int? {
        if text == "none" {
            return nil
        }
        guard let seconds = SSHConfigTime.seconds(text) else {
            throw .config(
                directive.location,
                "\(directive.spelling) \"\(text)\" is not a time; write seconds (30) or units (1m30s, 2h)")
        }
        return seconds
    }

    private static func agentPath(_ text: String, _ directive: SSHConfigDirective) throws(SSHError) -> String {
        if text.hasPrefix("$"), !text.hasPrefix("${") {
            guard EnvironmentName.isValid(text.dropFirst()) else {
                throw .config(
                    directive.location,
                    "IdentityAgent \"\(text)\" does not name an environment variable; write $NAME or ${NAME}")
            }
        }
        do {
            _ = try PercentExpansion.checkDollarSyntax(text)
        } catch {
            throw .config(directive.location, "IdentityAgent \"\(text)\": \(error.message)")
        }
        return text
    }

    private static func fileList(_ directive: SSHConfigDirective) throws(SSHError) -> [String] {
        for argument in directive.arguments where argument.isEmpty {
            throw .config(directive.location, "\(directive.spelling) has an empty file name; remove it")
        }
        if directive.arguments.count > 1, directive.arguments.contains(where: { $0.lowercased() == "none" }) {
            throw .config(directive.location, "\(directive.spelling) \"none\" must stand alone on its line")
        }
        guard directive.arguments.count <= maximumKnownHostsFiles else {
            throw .config(
                directive.location,
                "\(directive.spelling) names more than \(maximumKnownHostsFiles) files; name fewer")
        }
        return directive.arguments
    }
}

/// OpenSSH's `convtime`: a sequence of numbers, each with an optional unit (s, m, h, d, w, any case).
enum SSHConfigTime {
    static func seconds(_ text: String) -> Int? {
        guard !text.isEmpty else { return nil }
        let limit = Int(Int32.max)
        var total = 0
        var rest = Substring(text)
        while !rest.isEmpty {
            let digits = rest.prefix(while: ConfigText.isDigit)
            guard !digits.isEmpty, let number = Int(digits), number <= limit else { return nil }
            rest = rest.dropFirst(digits.count)
            var multiplier = 1
            if let unit = rest.first {
                switch unit {
                case "s", "S": multiplier = 1
                case "m", "M": multiplier = 60
                case "h", "H": multiplier = 3600
                case "d", "D": multiplier = 86400
                case "w", "W": multiplier = 604_800
                default: return nil
                }
                rest = rest.dropFirst()
            }
            guard number <= limit / multiplier, total <= limit - number * multiplier else { return nil }
            total += number * multiplier
        }
        return total
    }
}

/// `/etc/services` lookups for `Port NAME`.
enum ServicesFile {
    static func tcpPort(named name: String, in text: String?) -> Int? {
        guard let text else { return nil }
        for line in text.split(whereSeparator: \.isNewline) {
            let content = line.prefix { $0 != "#" }
            let fields = content.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2 else { continue }
            let portAndProtocol = fields[1].split(separator: "/")
            guard portAndProtocol.count == 2, portAndProtocol[1] == "tcp",
                let port = Int(portAndProtocol[0]), (1...65535).contains(port)
            else { continue }
            if fields[0] == name || fields.dropFirst(2).contains(where: { $0 == name }) {
                return port
            }
        }
        return nil
    }
}
