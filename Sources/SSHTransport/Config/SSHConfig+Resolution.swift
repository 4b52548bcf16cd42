extension SSHConfig {
    /// The settings for `destination`, as `ssh -G` would compute them.
    ///
    /// The destination's own `user@` and `:port`, then `overrides`, are set before the files are read,
    /// exactly as `ssh` sets its command line first: the first value obtained for a keyword wins, so the
    /// files only fill what the command line left open. `Host` patterns are matched against the host as
    /// typed, case and all.
    ///
    /// As in `ssh`, the files are read a second time when a `Match` line names `final` or
    /// `CanonicalizeHostname` is on: that pass matches `Host` patterns and `Match host` against the name to
    /// connect to (`HostName` applied, lower-cased), `Match canonical` and `Match final` hold in it, and it
    /// fills only what the first left open. hostscope does not canonicalise names, so the second pass sees
    /// what `ssh` sees when canonicalisation finds no other name.
    ///
    /// - Throws: an `SSHError` with code `.config` naming the line, for a keyword `ssh` does not know that no
    ///   `IgnoreUnknown` in force covers, a `Match` whose outcome for this host depends on a criterion
    ///   hostscope cannot evaluate (`exec`), or a value that cannot be expanded.
    public func resolve(
        _ destination: SSHDestination, overrides: SSHConnectionOverrides = SSHConnectionOverrides()
    ) throws(SSHError) -> SSHHostConfig {
        var state = ResolutionState(environment: environment, originalHost: destination.host)
        state.user.offer(destination.user, from: nil)
        state.user.offer(overrides.user, from: nil)
        state.port.offer(destination.port, from: nil)
        state.port.offer(overrides.port, from: nil)
        for path in overrides.identityFiles {
            try state.addIdentityFile(path, from: nil)
        }
        state.userKnownHostsFiles.offer(overrides.userKnownHostsFiles, from: nil)
        state.strictHostKeyChecking.offer(overrides.strictHostKeyChecking, from: nil)
        state.connectTimeout.offer(overrides.connectTimeout, from: nil)
        if let jump = overrides.proxyJump {
            try state.offerCommandLineJump(jump)
        }
        var pass = ResolutionPass(host: destination.host, isFinal: false)
        for file in files {
            var active = true
            try state.walk(file.nodes, pass: pass, active: &active, neverMatch: false)
        }
        if state.wantsFinalPass || state.canonicalizeHostname.value == true {
            let host = try state.connectionHost()
            state.finalHostName = host
            pass = ResolutionPass(host: host, isFinal: true)
            for file in files {
                var active = true
                try state.walk(file.nodes, pass: pass, active: &active, neverMatch: false)
            }
        }
        return try state.finish(alias: destination.host, environment: environment)
    }

    /// The settings for a host named as on the command line, without `user@` or `:port`.
    public func resolve(
        host: String, overrides: SSHConnectionOverrides = SSHConnectionOverrides()
    ) throws(SSHError) -> SSHHostConfig {
        try resolve(SSHDestination(host: host), overrides: overrides)
    }
}

/// One option's value: the first one offered wins, and where it came from is kept.
struct FirstValue<Value: Sendable>: Sendable {
    var value: Value?
    var origin: SSHConfigLocation?

    mutating func offer(_ candidate: Value?, from location: SSHConfigLocation?) {
        guard value == nil, let candidate else { return }
        value = candidate
        origin = location
    }
}

/// One reading of the files: the name `Host` patterns are matched against, and whether it is the final one.
struct ResolutionPass {
    var host: String
    var isFinal: Bool
}

struct ResolutionState {
    /// OpenSSH's cap on identity files.
    static let maximumIdentityFiles = 100

    let environment: SSHConfigEnvironment
    /// The host as given, before `HostName`: `%n`, `%h` in `HostName`, and `Match originalhost`.
    let originalHost: String
    /// Set once a `Match` line names `final`: the files are then read a second time.
    var wantsFinalPass = false
    /// The name to connect to, fixed before the final pass as `ssh` fixes it.
    var finalHostName: String?
    var hostName = FirstValue<String>()
    var user = FirstValue<String>()
    var port = FirstValue<Int>()
    var hostKeyAlias = FirstValue<String>()
    var identityFiles: [(configured: String, origin: SSHConfigLocation?)] = []
    var identitiesOnly = FirstValue<Bool>()
    var userKnownHostsFiles = FirstValue<[String]>()
    var globalKnownHostsFiles = FirstValue<[String]>()
    var revokedHostKeysFiles = FirstValue<[String]>()
    var strictHostKeyChecking = FirstValue<StrictHostKeyChecking>()
    var connectTimeout = FirstValue<Duration>()
    var serverAliveInterval = FirstValue<Int>()
    var serverAliveCountMax = FirstValue<Int>()
    var identityAgent = FirstValue<String>()
    var algorithms: [SSHAlgorithmKind: FirstValue<String>] = [:]
    /// `ProxyJump` and `ProxyCommand` as OpenSSH keeps them (10.3, and Debian 12's 9.2 since deb12u10):
    /// a jump host also fills the command slot, so a later `ProxyCommand` is passed over, while
    /// `ProxyJump none` leaves it open; any `ProxyCommand`, `none` included, closes both.
    var proxyJump = FirstValue<SSHProxy>()
    var proxyCommand = FirstValue<SSHProxy>()
    var ignoreUnknown = FirstValue<String>()
    var canonicalizeHostname = FirstValue<Bool>()
    var otherDirectives: [SSHConfigDirective] = []
    /// The `Host` and `Match` lines whose blocks applied, each once.
    var appliedBlocks: [String] = []

    init(environment: SSHConfigEnvironment, originalHost: String) {
        self.environment = environment
        self.originalHost = originalHost
    }

    /// Applies one file's nodes. `neverMatch` marks a file included from a block that did not apply: it is
    /// read, but none of its blocks can apply (OpenSSH's SSHCONF_NEVERMATCH).
    mutating func walk(
        _ nodes: [SSHConfig.Node], pass: ResolutionPass, active: inout Bool, neverMatch: Bool
    ) throws(SSHError) {
        for node in nodes {
            switch node {
            case .host(let line):
                active = !neverMatch && line.applies(to: pass.host)
                if active {
                    let patterns = line.entries.map { ($0.negated ? "!" : "") + $0.pattern }
                    noteBlock("Host " + patterns.joined(separator: " "), line.location)
                }
            case .match(let line):
                // `ssh` evaluates every `Match` line, also where its outcome cannot matter, and a `final` in
                // any of them asks for the second pass.
                if line.requestsFinalPass {
                    wantsFinalPass = true
                }
                let applies = try line.applies(to: matchSubject(pass))
                active = !neverMatch && applies
                if active {
                    noteBlock("Match " + line.directive.arguments.joined(separator: " "), line.directive.location)
                }
            case .setting(let setting, let directive):
                if active {
                    try apply(setting, directive)
                }
            case .unknownKeyword(let directive):
                try checkIgnored(directive)
            case .include(_, let included):
                // An included file starts in the including block's state, and its `Host` lines do not
                // change that block's state for the lines after the `Include`.
                let outer = active
                for file in included {
                    try walk(file.nodes, pass: pass, active: &active, neverMatch: neverMatch || !outer)
                    active = outer
                }
            }
        }
    }

    private mutating func noteBlock(_ header: String, _ location: SSHConfigLocation) {
        let text = "\(header) (\(location))"
        if !appliedBlocks.contains(text) { appliedBlocks.append(text) }
    }

    /// What a `Match` line reached now is evaluated against: the settings obtained so far, as in `ssh`.
    private func matchSubject(_ pass: ResolutionPass) throws(SSHError) -> MatchLine.Subject {
        MatchLine.Subject(
            host: pass.isFinal ? pass.host : try expandedHostName(),
            originalHost: originalHost, user: user.value ?? environment.localUser,
            localUser: environment.localUser, isFinalPass: pass.isFinal)
    }

    /// `HostName` with `%h` expanded, or the host as given.
    private func expandedHostName() throws(SSHError) -> String {
        if let finalHostName {
            return finalHostName
        }
        guard let configured = hostName.value else {
            return originalHost
        }
        let onlyHost = PercentExpansion(tokens: ["h": originalHost], variables: nil)
        return try expanded(configured, "HostName", hostName.origin) {
            text throws(PercentExpansion.Failure) -> String in try onlyHost.expand(text)
        }
    }

    /// The name to connect to: `HostName` applied, lower-cased unless it is an address, as `ssh` does.
    func connectionHost() throws(SSHError) -> String {
        let host = try expandedHostName()
        return HostAddress.looksLikeAddress(host) ? host : host.lowercased()
    }

    /// A keyword `ssh` does not know stops it, unless the `IgnoreUnknown` obtained so far covers it.
    private func checkIgnored(_ directive: SSHConfigDirective) throws(SSHError) {
        if let patterns = ignoreUnknown.value, HostPattern.matches(hostName: directive.keyword, patternList: patterns) {
            return
        }
        throw .config(
            directive.location,
            "Bad configuration option \"\(directive.spelling)\": it is not an ssh_config keyword, and ssh stops "
                + "here too; correct its spelling, or name it in an IgnoreUnknown line before it if another "
                + "program reads it")
    }

    /// `-J`, which fills the `ProxyJump` slot before the files are read; any jump host but `none` also closes
    /// the `ProxyCommand` slot, as `ssh -J` does.
    mutating func offerCommandLineJump(_ value: String) throws(SSHError) {
        let jump = SSHProxy(kind: .jump, value: value)
        if !jump.isNone {
            do {
                _ = try SSHJumpHops(parsing: value)
            } catch {
                throw SSHError(.config, "-J \"\(value)\" is not valid: \(error.message)")
            }
            proxyCommand.offer(SSHProxy(kind: .command, value: "none"), from: nil)
        }
        proxyJump.offer(jump, from: nil)
    }

    mutating func addIdentityFile(_ configured: String, from location: SSHConfigLocation?) throws(SSHError) {
        // `ssh` keeps the first of two identical entries.
        guard !identityFiles.contains(where: { $0.configured == configured }) else { return }
        guard identityFiles.count < Self.maximumIdentityFiles else {
            let place = location.map { "\($0): " } ?? ""
            throw SSHError(
                .config, "\(place)more than \(Self.maximumIdentityFiles) identity files apply; remove some")
        }
        identityFiles.append((configured, location))
    }

    private mutating func apply(_ setting: ConfigSetting, _ directive: SSHConfigDirective) throws(SSHError) {
        let location = directive.location
        switch setting {
        case .hostName(let value): hostName.offer(value, from: location)
        case .user(let value): user.offer(value, from: location)
        case .port(let value): port.offer(value, from: location)
        case .hostKeyAlias(let value): hostKeyAlias.offer(value, from: location)
        case .identityFile(let value): try addIdentityFile(value, from: location)
        case .identitiesOnly(let value): identitiesOnly.offer(value, from: location)
        case .userKnownHostsFiles(let value): userKnownHostsFiles.offer(value, from: location)
        case .globalKnownHostsFiles(let value): globalKnownHostsFiles.offer(value, from: location)
        case .revokedHostKeysFiles(let value): revokedHostKeysFiles.offer(value, from: location)
        case .strictHostKeyChecking(let value): strictHostKeyChecking.offer(value, from: location)
        case .connectTimeout(let value): connectTimeout.offer(value.map { .seconds($0) }, from: location)
        case .serverAliveInterval(let value): serverAliveInterval.offer(value, from: location)
        case .serverAliveCountMax(let value): serverAliveCountMax.offer(value, from: location)
        case .identityAgent(let value): identityAgent.offer(value, from: location)
        case .algorithms(let kind, let value): algorithms[kind, default: FirstValue()].offer(value, from: location)
        case .proxy(.jump, let value):
            guard proxyJump.value == nil, proxyCommand.value == nil else { break }
            let jump = SSHProxy(kind: .jump, value: value, origin: location)
            proxyJump.offer(jump, from: location)
            if !jump.isNone {
                proxyCommand.offer(SSHProxy(kind: .command, value: "none", origin: location), from: location)
            }
        case .proxy(.command, let value):
            proxyCommand.offer(SSHProxy(kind: .command, value: value, origin: location), from: location)
        case .ignoreUnknown(let value): ignoreUnknown.offer(value, from: location)
        case .canonicalizeHostname(let value): canonicalizeHostname.offer(value, from: location)
        case .other: otherDirectives.append(directive)
        }
    }

    func finish(alias: String, environment: SSHConfigEnvironment) throws(SSHError) -> SSHHostConfig {
        let user = user.value ?? environment.localUser
        let port = port.value ?? SSHHostConfig.defaultPort
        let remoteHost = try connectionHost()

        let paths = pathExpansion(
            remoteHost: remoteHost, port: port, user: user, alias: alias, environment: environment)
        func path(_ text: String, _ keyword: String, _ origin: SSHConfigLocation?) throws(SSHError) -> String {
            try expanded(text, keyword, origin) { text throws(PercentExpansion.Failure) -> String in
                let home = try PercentExpansion.expandTilde(text, in: environment)
                return try paths.expand(home)
            }
        }

        var identities: [IdentityFile] = []
        if identityFiles.isEmpty {
            for file in SSHHostConfig.defaultIdentityFiles {
                identities.append(
                    IdentityFile(path: try path(file, "IdentityFile", nil), configured: file, isDefault: true))
            }
        } else {
            for entry in identityFiles where entry.configured.lowercased() != "none" {
                let expandedPath = try path(entry.configured, "IdentityFile", entry.origin)
                identities.append(IdentityFile(path: expandedPath, configured: entry.configured, isDefault: false))
            }
        }

        func knownHosts(
            _ slot: FirstValue<[String]>, _ defaults: [String], _ keyword: String
        ) throws(SSHError) -> [String] {
            let files = slot.value ?? defaults
            if files.count == 1, files[0].lowercased() == "none" {
                return []
            }
            var result: [String] = []
            for file in files {
                result.append(try path(file, keyword, slot.origin))
            }
            return result
        }

        var agent = IdentityAgent.disabled
        let configuredAgent = try identityAgent.value.map { value throws(SSHError) in
            try path(value, "IdentityAgent", identityAgent.origin)
        }
        switch configuredAgent {
        case nil, "SSH_AUTH_SOCK":
            agent = Self.agent(environment.variables["SSH_AUTH_SOCK"])
        case "none":
            agent = .disabled
        case let value? where value.hasPrefix("$"):
            agent = Self.agent(environment.variables[String(value.dropFirst())])
        case let value?:
            agent = .socket(value)
        }

        var config = SSHHostConfig(
            hostName: remoteHost,
            user: user,
            port: port,
            alias: alias,
            hostKeyAlias: hostKeyAlias.value,
            identityFiles: identities,
            identitiesOnly: identitiesOnly.value ?? false,
            userKnownHostsFiles: try knownHosts(
                userKnownHostsFiles, SSHHostConfig.defaultUserKnownHostsFiles, "UserKnownHostsFile"),
            globalKnownHostsFiles: try knownHosts(
                globalKnownHostsFiles, SSHHostConfig.defaultGlobalKnownHostsFiles, "GlobalKnownHostsFile"),
            revokedHostKeysFiles: try knownHosts(revokedHostKeysFiles, [], "RevokedHostKeys"),
            strictHostKeyChecking: strictHostKeyChecking.value ?? .ask,
            connectTimeout: connectTimeout.value,
            serverAliveInterval: .seconds(serverAliveInterval.value ?? 0),
            serverAliveCountMax: serverAliveCountMax.value ?? SSHHostConfig.defaultServerAliveCountMax,
            identityAgent: agent,
            algorithms: algorithmPreferences,
            proxy: [proxyJump.value, proxyCommand.value].lazy.compactMap { $0 }.first { !$0.isNone },
            otherDirectives: otherDirectives,
            origins: origins
        )
        config.appliedBlocks = appliedBlocks
        return config
    }

    /// The `%` tokens (and `${VAR}`) of path keywords, OpenSSH's `DEFAULT_CLIENT_PERCENT_EXPAND_ARGS`.
    private func pathExpansion(
        remoteHost: String, port: Int, user: String, alias: String, environment: SSHConfigEnvironment
    ) -> PercentExpansion {
        var tokens: [Character: String] = [
            "d": environment.homeDirectory, "h": remoteHost, "k": hostKeyAlias.value ?? alias, "n": alias,
            "p": String(port), "r": user, "u": environment.localUser, "j": jumpHost,
        ]
        var unavailable: [Character: String] = [
            "C": "(the connection hash) is not supported; use %h, %p and %r instead"
        ]
        if let name = environment.localHostName {
            tokens["l"] = name
            tokens["L"] = String(name.prefix { $0 != "." })
        } else {
            unavailable["l"] = "(the local host name) is not known here"
            unavailable["L"] = "(the local host name) is not known here"
        }
        if let uid = environment.userID {
            tokens["i"] = String(uid)
        } else {
            unavailable["i"] = "(the local user id) is not known here"
        }
        return PercentExpansion(tokens: tokens, variables: environment.variables, unavailable: unavailable)
    }

    /// `%j`: the host of the last `ProxyJump` hop (the one that reaches this host), empty without one.
    private var jumpHost: String {
        guard let jump = proxyJump.value, !jump.isNone, let hops = try? SSHJumpHops(parsing: jump.value) else {
            return ""
        }
        return hops.hops.last?.host ?? ""
    }

    private var algorithmPreferences: SSHAlgorithmPreferences {
        var preferences = SSHAlgorithmPreferences()
        for (kind, slot) in algorithms {
            preferences[kind] = slot.value
            if let origin = slot.origin { preferences.sources[kind] = origin.description }
        }
        return preferences
    }

    /// The line each applied setting came from, by lower-case keyword.
    private var origins: [String: SSHConfigLocation] {
        var origins: [String: SSHConfigLocation] = [:]
        let slots: [(String, SSHConfigLocation?)] = [
            ("hostname", hostName.origin), ("user", user.origin), ("port", port.origin),
            ("hostkeyalias", hostKeyAlias.origin), ("identitiesonly", identitiesOnly.origin),
            ("userknownhostsfile", userKnownHostsFiles.origin),
            ("globalknownhostsfile", globalKnownHostsFiles.origin),
            ("revokedhostkeys", revokedHostKeysFiles.origin),
            ("stricthostkeychecking", strictHostKeyChecking.origin), ("connecttimeout", connectTimeout.origin),
            ("serveraliveinterval", serverAliveInterval.origin),
            ("serveralivecountmax", serverAliveCountMax.origin), ("identityagent", identityAgent.origin),
            ("identityfile", identityFiles.lazy.compactMap(\.origin).first),
            ("ignoreunknown", ignoreUnknown.origin), ("canonicalizehostname", canonicalizeHostname.origin),
        ]
        for case (let keyword, let origin?) in slots {
            origins[keyword] = origin
        }
        for (kind, slot) in algorithms {
            if let origin = slot.origin { origins[kind.lowercasedKeyword] = origin }
        }
        return origins

    }

    private static func agent(_ socket: String?) -> IdentityAgent {
        guard let socket, !socket.isEmpty else { return .disabled }
        return .socket(socket)
    }

    private func expanded(
        _ text: String, _ keyword: String, _ origin: SSHConfigLocation?,
        _ expand: (String) throws(PercentExpansion.Failure) -> String
    ) throws(SSHError) -> String {
        do {
            return try expand(text)
        } catch {
            let place = origin.map { "\($0): " } ?? ""
            throw SSHError(.config, "\(place)\(keyword) \"\(text)\": \(error.message)")
        }
    }
}
