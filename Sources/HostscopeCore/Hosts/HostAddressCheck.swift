import SSHTransport
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// Whether a host argument names a machine that can be reached at all, checked before a chat starts so that a
/// misspelt host is one sentence (with the alias it was probably meant to be) rather than a failed tool call.
enum HostAddressCheck {
    /// A sentence saying why `host` cannot be reached, or `nil` when its name resolves (or a jump host or
    /// ProxyCommand reaches it, which resolves the name itself).
    static func problem(_ host: ResolvedHost, argument: String, aliases: [String]) -> String? {
        guard case .ssh(let options) = host, case .direct = options.route else { return nil }
        let configFile = options.userConfigFile
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(options.hostName, nil, &hints, &list)
        if status == 0 {
            freeaddrinfo(list)
            return nil
        }
        return unresolved(
            argument, hostName: options.hostName, reason: String(cString: gai_strerror(status)),
            aliases: aliases, configFile: configFile)
    }

    /// A sentence for the first of a watch's host `arguments` that is a bare name no ssh_config block gives a
    /// HostName, no alias, and that does not resolve (`watch web1 --every 2 s` makes `s` such a host), or `nil`.
    /// Patterns, `local`, aliases and names with a jump host or ProxyCommand are taken as they are: the
    /// watch reports their failures per tick.
    static func unknownHost(among arguments: [String], resolver: HostResolver) -> String? {
        let aliases = resolver.config.hostAliases
        for argument in arguments where !HostList.isPattern(argument) && !aliases.contains(argument) {
            guard let target = try? HostTarget(parsing: argument), let host = try? resolver.resolve(target),
                case .ssh(let options) = host, options.hostNameOrigin == nil
            else { continue }
            if let problem = problem(host, argument: argument, aliases: aliases) { return problem }
        }
        return nil
    }

    /// The sentence for a name that does not resolve, with the closest ssh_config alias when there is one.
    /// `configFile` is the user's ssh_config as the sentence names it (`~/.ssh/config`, or the file of `-F`).
    static func unresolved(
        _ argument: String, hostName: String, reason: String, aliases: [String],
        configFile: String = SSHConfig.userConfigPath
    ) -> String {
        if aliases.contains(argument) {
            return "host \(argument) does not resolve (its HostName \(hostName): \(reason)); check its entry in "
                + configFile
        }
        var sentence = "host \(argument) does not resolve (\(hostName): \(reason)); it is no \(configFile) alias"
        if let suggestion = NameSuggestion.closest(to: argument, among: aliases) {
            sentence += ". Did you mean \(suggestion)?"
        } else {
            sentence += "; check the name"
        }
        return sentence
    }
}
