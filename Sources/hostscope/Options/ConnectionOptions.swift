import Agent
import ArgumentParser

/// Connection options shared by every command that reaches hosts.
struct ConnectionOptions: ParsableArguments {
    @Option(name: [.customShort("l"), .long], help: "Remote user name (wins over ~/.ssh/config's User).")
    var user: String?

    @Option(name: [.customShort("p"), .long], help: "SSH port (wins over ~/.ssh/config's Port).")
    var port: Int?

    @Option(name: [.customShort("i"), .customLong("identity")], help: ArgumentHelp(
        "Private key file to try (repeatable); tried before the config's IdentityFile entries.", valueName: "file"))
    var identity: [String] = []

    @Option(name: .customLong("known-hosts"), help: ArgumentHelp(
        "known_hosts file to check and record host keys in (default: ~/.ssh/known_hosts).", valueName: "file"))
    var knownHosts: String?

    @Flag(name: .customLong("accept-new-host-key"), help:
        "Record the key of a host not yet in known_hosts (like StrictHostKeyChecking=accept-new). Changed keys are always refused.")
    var acceptNewHostKey = false

    @Option(name: .customLong("connect-timeout"), help: ArgumentHelp(
        "Limit on connecting and authenticating, e.g. 10s (default: ConnectTimeout, else 10s).", valueName: "duration"))
    var connectTimeout: DurationArgument?

    @Option(name: [.customShort("J"), .customLong("jump")], help: ArgumentHelp(
        "Jump hosts to go through, as ssh -J: [user@]host[:port][,…], or none (wins over ProxyJump and "
            + "ProxyCommand).",
        valueName: "hosts"))
    var jump: String?

    @Option(name: .customLong("password-env"), help: ArgumentHelp(
        "Name of an environment variable holding the SSH password (never the password itself).", valueName: "var"))
    var passwordEnv: String?

    @Option(name: .customLong("passphrase-env"), help: ArgumentHelp(
        "Name of an environment variable holding private key passphrases (default: HOSTSCOPE_KEY_PASSPHRASE).",
        valueName: "var"))
    var passphraseEnv: String?

    @Option(name: [.customShort("F"), .customLong("ssh-config")], help: ArgumentHelp(
        "ssh_config file to read instead of ~/.ssh/config and /etc/ssh/ssh_config.", valueName: "file"))
    var sshConfig: String?

    func validate() throws {
        if let port, !(1...65535).contains(port) {
            throw ValidationError("--port \(port) is not a TCP port; use 1 to 65535.")
        }
    }

    var settings: ConnectionSettings {
        var settings = ConnectionSettings()
        settings.user = user
        settings.port = port
        settings.identityFiles = identity
        settings.knownHostsFile = knownHosts
        settings.acceptNewHostKey = acceptNewHostKey
        settings.connectTimeout = connectTimeout?.duration
        settings.jump = jump
        settings.passwordEnvironmentVariable = passwordEnv
        settings.passphraseEnvironmentVariable = passphraseEnv
        settings.configFile = sshConfig
        settings.configWarning = { Output.warningOnce($0.description) }
        settings.hostKeyRecorded = { Output.notice($0.notice) }
        return settings
    }
}

/// A duration option value: `250ms`, `5s`, `10m`, `1h`, `7d`; a bare number is seconds.
struct DurationArgument: ExpressibleByArgument, Sendable {
    var duration: Duration

    init(_ duration: Duration) {
        self.duration = duration
    }

    init?(argument: String) {
        guard let duration = DurationText.parse(argument) else { return nil }
        self.duration = duration
    }

    var defaultValueDescription: String { DurationText.format(duration) }
}
