import SSHTransport

/// Connection options for a resolved host as the command line builds them, without secrets or an agent,
/// strict about host keys: what ``SSHConfig/resolveConnection(_:overrides:makeOptions:)`` is handed in
/// these tests.
func plainOptions(_ host: SSHHostConfig, _ displayName: String) -> SSHConnectionOptions {
    SSHConnectionOptions(
        displayName: displayName, hostName: host.hostName, port: host.port, user: host.user,
        identityFiles: host.identityFiles.map(\.path), identitiesOnly: host.identitiesOnly,
        knownHostsFiles: host.userKnownHostsFiles, hostKeyPolicy: .strict,
        connectTimeout: host.connectTimeout ?? .seconds(10), allowPassword: false)
}

extension SSHConfig {
    /// `host` (as given on a command line) resolved with the hosts on its way, through ``plainOptions(_:_:)``.
    func connection(
        _ host: String, overrides: SSHConnectionOverrides = SSHConnectionOverrides()
    ) throws -> SSHConnectionOptions {
        try resolveConnection(SSHDestination(parsing: host), overrides: overrides, makeOptions: plainOptions)
    }
}

extension SSHRoute {
    /// The jump host, when the route goes through one.
    var hop: SSHConnectionOptions? {
        if case .jump(let hop) = self { return hop }
        return nil
    }

    /// The `ProxyCommand`, when the route runs one.
    var command: SSHProxyCommand? {
        if case .command(let command) = self { return command }
        return nil
    }

    /// Why the route cannot be used, when it cannot.
    var problem: SSHError? {
        if case .unusable(let error) = self { return error }
        return nil
    }

    var isDirect: Bool {
        if case .direct = self { return true }
        return false
    }
}
