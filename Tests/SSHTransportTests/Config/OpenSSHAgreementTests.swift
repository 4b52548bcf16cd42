import Foundation
import SSHTransport
import Testing

/// hostscope's resolution against the real OpenSSH client's (`ssh -G`) on the same files.
///
/// Each scenario is written under a fresh directory that is `HOME` for both. `ssh` reads only the file
/// given with `-F` (plus that file's includes, through `HOME`), but it still expands `~` and `%d` in
/// known_hosts and identity paths with the password database's home; those paths are mapped onto the
/// test home before comparing, which is the one liberty taken.
@Suite struct OpenSSHAgreementTests {
    private struct Workspace {
        let home: URL
        let ssh: OpenSSHClient
        /// The user `ssh` defaults to, which hostscope's resolver is given as the local user.
        let localUser: String
        /// The home `ssh` puts in place of `~` in paths.
        let passwordHome: String

        init(_ scenario: OpenSSHScenario) throws {
            guard let ssh = OpenSSHClient.installed() else {
                throw AgreementFailure("no ssh client found; install Debian's openssh-client")
            }
            self.ssh = ssh
            home = FileManager.default.temporaryDirectory.appendingPathComponent("ssh-agree-\(UUID().uuidString)")
            for (relative, text) in scenario.files {
                let url = home.appendingPathComponent(relative)
                try FileManager.default.createDirectory(
                    at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try text.replacingOccurrences(of: "{{HOME}}", with: home.path)
                    .write(to: url, atomically: true, encoding: .utf8)
            }
            let probe = try ssh.evaluatedConfig(
                file: "/dev/null", host: "probe", user: nil, port: nil, variables: ["HOME": home.path])
            localUser = try probe.options.value("user")
            passwordHome = String(
                try probe.options.value("userknownhostsfile").prefix { $0 != " " }.dropLast(
                    "/.ssh/known_hosts".count))
        }

        func environment(_ scenario: OpenSSHScenario) -> SSHConfigEnvironment {
            var environment = SSHConfigEnvironment.current()
            environment.homeDirectory = home.path
            environment.localUser = localUser
            environment.variables = sshVariables(scenario)
            return environment
        }

        func sshVariables(_ scenario: OpenSSHScenario) -> [String: String] {
            scenario.variables.merging(["HOME": home.path]) { _, new in new }
        }

        /// A path as `ssh` printed it, with its password-database home replaced by the test home.
        func mapped(_ path: String) -> String {
            path.hasPrefix(passwordHome + "/") ? home.path + path.dropFirst(passwordHome.count) : path
        }

        func remove() {
            try? FileManager.default.removeItem(at: home)
        }
    }

    struct AgreementFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    @Test(arguments: OpenSSHScenario.all)
    func resolutionAgreesWithSSHDashG(scenario: OpenSSHScenario) throws {
        let workspace = try Workspace(scenario)
        defer { workspace.remove() }
        let configFile = workspace.home.appendingPathComponent(OpenSSHScenario.configPath).path
        let config = try SSHConfig.load(environment: workspace.environment(scenario), configFile: configFile)
        #expect(config.warnings.isEmpty)

        for invocation in scenario.invocations {
            let reference = try workspace.ssh.evaluatedConfig(
                file: configFile, host: invocation.host, user: invocation.user, port: invocation.port,
                variables: workspace.sshVariables(scenario))
            try #require(reference.status == 0, "ssh -G \(invocation.host) failed: \(reference.errors)")
            let ssh = reference.options
            let ours = try config.resolve(
                SSHDestination(parsing: invocation.host),
                overrides: SSHConnectionOverrides(user: invocation.user, port: invocation.port))
            let context = Comment(rawValue: "\(scenario.name): \(invocation.host)")

            #expect(try ssh.value("hostname") == ours.hostName, context)
            #expect(try ssh.value("user") == ours.user, context)
            #expect(try ssh.value("port") == String(ours.port), context)
            #expect(try ssh.value("identitiesonly") == (ours.identitiesOnly ? "yes" : "no"), context)
            #expect(try ssh.value("stricthostkeychecking") == Self.sshSpelling(ours.strictHostKeyChecking), context)
            #expect(try ssh.value("connecttimeout") == ours.connectTimeout.map(Self.seconds) ?? "none", context)
            #expect(try ssh.value("serveraliveinterval") == Self.seconds(ours.serverAliveInterval), context)
            #expect(try ssh.value("serveralivecountmax") == String(ours.serverAliveCountMax), context)

            let knownHosts = try ssh.value("userknownhostsfile")
            if knownHosts == "none" {
                #expect(ours.userKnownHostsFiles.isEmpty, context)
            } else {
                // `ssh -G` joins the files with spaces, so compare the joined text, file by file mapped.
                let mapped = knownHosts.replacingOccurrences(
                    of: workspace.passwordHome + "/", with: workspace.home.path + "/")
                #expect(mapped == ours.userKnownHostsFiles.joined(separator: " "), context)
            }

            let globalKnownHosts = ours.globalKnownHostsFiles.joined(separator: " ")
            #expect(try ssh.value("globalknownhostsfile") == globalKnownHosts, context)
            #expect(ssh.first("hostkeyalias") == ours.hostKeyAlias, context)

            let configured = ssh.values("identityfile")
            let loaded = try workspace.ssh.expandedIdentityFiles(
                file: configFile, host: invocation.host, user: invocation.user, port: invocation.port,
                variables: workspace.sshVariables(scenario)
            ).map(workspace.mapped)
            if ours.identityFiles.contains(where: { $0.isDefault }) {
                // hostscope's defaults are a reordered subset of ssh's (see SSHHostConfig.defaultIdentityFiles).
                #expect(configured.count == 7 && configured.first == "~/.ssh/id_rsa", context)
                #expect(Set(ours.identityFiles.map(\.configured)).isSubset(of: configured), context)
                #expect(Set(ours.identityFiles.map(\.path)).isSubset(of: loaded), context)
            } else {
                #expect(
                    configured.filter { $0.lowercased() != "none" } == ours.identityFiles.map(\.configured), context)
                #expect(loaded == ours.identityFiles.map(\.path), context)
            }

            // `ssh -G` prints `proxyjump` for a jump host, else `proxycommand` when one is set.
            if let jump = ssh.first("proxyjump") {
                #expect(ours.proxy == SSHProxy(kind: .jump, value: jump, origin: ours.proxy?.origin), context)
            } else if let command = ssh.first("proxycommand") {
                #expect(ours.proxy == SSHProxy(kind: .command, value: command, origin: ours.proxy?.origin), context)
            } else {
                #expect(ours.proxy == nil, context)
            }

            switch ssh.first("identityagent") {
            case nil, "SSH_AUTH_SOCK":
                #expect(ours.identityAgent.socketPath == scenario.variables["SSH_AUTH_SOCK"], context)
            case "none":
                #expect(ours.identityAgent == .disabled, context)
            case let variable? where variable.hasPrefix("$"):
                #expect(ours.identityAgent.socketPath == scenario.variables[String(variable.dropFirst())], context)
            case let path?:
                #expect(ours.identityAgent == .socket(workspace.mapped(path)), context)
            }
        }
    }

    @Test(arguments: OpenSSHScenario.rejected)
    func configsSSHRefusesAreRefusedToo(scenario: OpenSSHScenario) throws {
        let workspace = try Workspace(scenario)
        defer { workspace.remove() }
        let configFile = workspace.home.appendingPathComponent(OpenSSHScenario.configPath).path
        for invocation in scenario.invocations {
            let reference = try workspace.ssh.evaluatedConfig(
                file: configFile, host: invocation.host, user: nil, port: nil,
                variables: workspace.sshVariables(scenario))
            #expect(reference.status != 0, "ssh accepted it: \(scenario.name)")
            let error = ConfigTest.error {
                let config = try SSHConfig.load(environment: workspace.environment(scenario), configFile: configFile)
                _ = try config.resolve(SSHDestination(parsing: invocation.host))
            }
            #expect(error?.code == .config, "\(scenario.name)")
            #expect(error?.message.contains(configFile) == true, "\(scenario.name): \(error?.message ?? "")")
        }
    }

    @Test func theScenariosCoverWhatTheyClaim() {
        let text = OpenSSHScenario.all.flatMap(\.files.values).joined(separator: "\n")
        let features = [
            "Include", "!", "%h", "%r", "%u", "%p", "%d", "%%", "~/", "\"", "${", "=", "Match all", "Match host",
            "Match originalhost", "Match user", "Match localuser", "Match final", "Match canonical", "IgnoreUnknown",
            "ProxyJump", "ProxyCommand",
        ]
        for feature in features {
            #expect(text.contains(feature), "no scenario uses \(feature)")
        }
    }

    private static func seconds(_ duration: Duration) -> String {
        String(duration.components.seconds)
    }

    private static func sshSpelling(_ value: StrictHostKeyChecking) -> String {
        switch value {
        case .yes: "true"
        case .no: "false"
        case .ask: "ask"
        case .acceptNew: "accept-new"
        }
    }
}

extension [(String, String)] {
    func values(_ key: String) -> [String] {
        filter { $0.0 == key }.map(\.1)
    }

    func first(_ key: String) -> String? {
        values(key).first
    }

    func value(_ key: String) throws -> String {
        guard let value = first(key) else {
            throw OpenSSHAgreementTests.AgreementFailure("ssh -G printed no \(key)")
        }
        return value
    }
}
