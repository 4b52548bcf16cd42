extension SSHConfig {
    /// The most hosts a route may pass through before it is taken for a loop that no single repeat shows.
    public static let maximumJumpHosts = 16

    /// Resolves `destination` and every host on the way to it, as `ssh` reaches them.
    ///
    /// A `ProxyJump a,b` host is reached through `b`, and `b` as `ssh -J a b` would reach it: its user and
    /// port from the list, its other settings from its own blocks, and `a` instead of any `ProxyJump` or
    /// `ProxyCommand` of its own; the first hop, `a`, is reached the way its own configuration says. The
    /// command line's keys, known_hosts files, host key policy and timeout (`overrides`) apply to every hop;
    /// its user, port and `-J` only to `destination`. A `ProxyCommand` gets `%h %k %n %p %r %%` expanded.
    ///
    /// - Parameter makeOptions: turns one resolved host (the target or a hop) into the options to connect to
    ///   it; `displayName` is what messages call it: the destination as given, or the hop as written.
    /// - Throws: the target's own resolution errors, as ``resolve(_:overrides:)``. A way to it that cannot
    ///   be used (a loop, a hop whose configuration fails, a `ProxyCommand` with an unknown token) does not
    ///   throw: the route is ``SSHRoute/unusable(_:)``, so connecting fails for this host alone and a fleet
    ///   goes on without it.
    public func resolveConnection(
        _ destination: SSHDestination, overrides: SSHConnectionOverrides = SSHConnectionOverrides(),
        makeOptions: (SSHHostConfig, _ displayName: String) throws(SSHError) -> SSHConnectionOptions
    ) throws(SSHError) -> SSHConnectionOptions {
        let host = try resolve(destination, overrides: overrides)
        let name = destination.description
        var options = try makeOptions(host, name)
        do {
            let start = RouteStep(name: name, host: destination.host, forcedJump: overrides.proxyJump)
            options.route = try route(to: host, overrides: overrides, path: [start], makeOptions: makeOptions)
        } catch {
            options.route = .unusable(SSHError(error.code, "\(name): \(error.message)"))
        }
        return options
    }

    /// One host on the way, and what decides how it is reached.
    private struct RouteStep {
        /// As the user wrote it: the destination, or the hop in a `ProxyJump` list.
        var name: String
        var host: String
        /// The hops a list put before it (what `ssh -J` would get), which replace its own proxy settings.
        var forcedJump: String?
        /// Where the jump from the previous step to this one was set.
        var setting = "-J"

        /// The same host reached the same way again: following it would go round for ever.
        func repeats(_ other: RouteStep) -> Bool {
            host.lowercased() == other.host.lowercased() && forcedJump == other.forcedJump
        }
    }

    private func route(
        to host: SSHHostConfig, overrides: SSHConnectionOverrides, path: [RouteStep],
        makeOptions: (SSHHostConfig, String) throws(SSHError) -> SSHConnectionOptions
    ) throws(SSHError) -> SSHRoute {
        guard let proxy = host.proxy else { return .direct }
        let place = proxy.origin.map { "\($0): " } ?? ""
        switch proxy.kind {
        case .command:
            let tokens = PercentExpansion(
                tokens: [
                    "h": host.hostName, "k": host.hostKeyAlias ?? host.alias, "n": host.alias,
                    "p": String(host.port), "r": host.user,
                ],
                variables: nil)
            do {
                let command = try tokens.expand(proxy.value)
                return .command(SSHProxyCommand(command: command, configured: proxy.value, origin: proxy.origin))
            } catch {
                throw SSHError(.config, "\(place)ProxyCommand \"\(proxy.value)\": \(error.message)")
            }
        case .jump:
            let hops: [SSHDestination]
            do {
                hops = try SSHJumpHops(parsing: proxy.value).hops
            } catch {
                let keyword = proxy.origin == nil ? "-J" : "ProxyJump"
                throw SSHError(.config, "\(place)\(keyword) \"\(proxy.value)\" is not valid: \(error.message)")
            }
            guard let last = hops.last else { return .direct }
            var hopOverrides = overrides.forJumpHost
            hopOverrides.user = last.user
            hopOverrides.port = last.port
            if hops.count > 1 {
                hopOverrides.proxyJump = hops.dropLast().map(\.description).joined(separator: ",")
            }
            var step = RouteStep(name: last.description, host: last.host, forcedJump: hopOverrides.proxyJump)
            step.setting =
                proxy.origin.map { "ProxyJump \(proxy.value), \($0)" }
                ?? (path.count == 1 ? "-J \(proxy.value)" : "the list \(proxy.value)")
            if let start = path.firstIndex(where: { $0.repeats(step) }) {
                throw loop(Array(path[start...]) + [step])
            }
            guard path.count <= Self.maximumJumpHosts else {
                throw SSHError(
                    .config,
                    "the way to it passes through more than \(Self.maximumJumpHosts) jump hosts ("
                        + (path.map(\.name) + [step.name]).joined(separator: " → ")
                        + "); check the ProxyJump settings of these hosts")
            }
            let hopHost: SSHHostConfig
            var hopOptions: SSHConnectionOptions
            do {
                hopHost = try resolve(SSHDestination(host: last.host), overrides: hopOverrides)
                hopOptions = try makeOptions(hopHost, step.name)
            } catch {
                throw SSHError(error.code, "jump host \(step.name): \(error.message)")
            }
            hopOptions.route = try route(
                to: hopHost, overrides: hopOverrides, path: path + [step], makeOptions: makeOptions)
            return .jump(hopOptions)
        }
    }

    private func loop(_ steps: [RouteStep]) -> SSHError {
        var chain = steps[0].name
        for step in steps.dropFirst() {
            chain += " → \(step.name) (\(step.setting))"
        }
        return SSHError(
            .config,
            "the jump hosts loop: \(chain), so no connection can be made; give one of these hosts ProxyJump none "
                + "in a block before the line that sends it back, or remove the hop")
    }
}
