import ArgumentParser
import HostscopeCore
import TerminalUI
import ValueFormats

/// How a command names the connection options whose short names it may give away.
protocol ConnectionOptionStyle {
    /// `-i` and `--identity`, or `--identity` alone.
    static var identityNames: NameSpecification { get }
    /// `-F` and `--ssh-config`, or `--ssh-config` alone.
    static var sshConfigNames: NameSpecification { get }
    /// `-l` and `--user`, or `--user` alone.
    static var userNames: NameSpecification { get }
    /// `-v` and `--verbose`, or `--verbose` alone.
    static var verboseNames: NameSpecification { get }
    /// Whether the help leaves out the defaults and asides (the help of `files grep` is kept short).
    static var briefHelp: Bool { get }
}

/// The connection options of every command that reaches hosts.
enum StandardConnectionNames: ConnectionOptionStyle {
    static let identityNames: NameSpecification = [.customShort("i"), .customLong("identity")]
    static let sshConfigNames: NameSpecification = [.customShort("F"), .customLong("ssh-config")]
    static let userNames: NameSpecification = [.customShort("l"), .customLong("user")]
    static let verboseNames: NameSpecification = [.customShort("v"), .customLong("verbose")]
    static let briefHelp = false
}

/// `files ls`'s: there `-l` keeps its ls meaning (the long listing).
enum ListingConnectionNames: ConnectionOptionStyle {
    static let identityNames = StandardConnectionNames.identityNames
    static let sshConfigNames = StandardConnectionNames.sshConfigNames
    static let userNames: NameSpecification = [.customLong("user")]
    static let verboseNames = StandardConnectionNames.verboseNames
    static let briefHelp = false
}

/// `files grep`'s: there `-i`, `-F`, `-l` and `-v` keep their grep meanings (ignore case, fixed strings, files
/// with matches, invert).
enum GrepConnectionNames: ConnectionOptionStyle {
    static let identityNames: NameSpecification = [.customLong("identity")]
    static let sshConfigNames: NameSpecification = [.customLong("ssh-config")]
    static let userNames: NameSpecification = [.customLong("user")]
    static let verboseNames: NameSpecification = [.customLong("verbose")]
    static let briefHelp = true
}

/// Connection options shared by every command that reaches hosts.
typealias ConnectionOptions = ConnectionOptionGroup<StandardConnectionNames>
/// ``ConnectionOptions`` without the short names `-i`, `-F`, `-l` and `-v`.
typealias GrepConnectionOptions = ConnectionOptionGroup<GrepConnectionNames>
/// ``ConnectionOptions`` without the short name `-l`.
typealias ListingConnectionOptions = ConnectionOptionGroup<ListingConnectionNames>

/// The connection options (`--user`, `--port`, `--identity`, …), named as `Style` says.
struct ConnectionOptionGroup<Style: ConnectionOptionStyle>: ParsableArguments {
    @Option(name: Style.userNames, help: "Remote user name (wins over ~/.ssh/config's User).")
    var user: String?

    @Option(name: [.customShort("p"), .long], help: "SSH port (wins over ~/.ssh/config's Port).")
    var port: Int?

    @Option(
        name: Style.identityNames,
        help: ArgumentHelp(
            "Private key file to try (repeatable); tried before the config's IdentityFile entries.", valueName: "file"))
    var identity: [String] = []

    @Option(
        name: .customLong("known-hosts"),
        help: ArgumentHelp(
            "known_hosts file to check and record host keys in (default: ~/.ssh/known_hosts).", valueName: "file"))
    var knownHosts: String?

    @Flag(
        name: .customLong("accept-new-host-key"),
        help: ArgumentHelp(
            Style.briefHelp
                ? "Record the key of a host not yet in known_hosts."
                : "Record the key of a host not yet in known_hosts (like StrictHostKeyChecking=accept-new). "
                    + "Changed keys are always refused."))
    var acceptNewHostKey = false

    @Option(
        name: .customLong("connect-timeout"),
        help: ArgumentHelp(
            Style.briefHelp
                ? "Limit on connecting and authenticating, e.g. 10s."
                : "Limit on connecting and authenticating, e.g. 10s (default: ConnectTimeout, else 10s).",
            valueName: "duration"))
    var connectTimeout: DurationArgument?

    @Option(
        name: [.customShort("J"), .customLong("jump")],
        help: ArgumentHelp(
            Style.briefHelp
                ? "Jump hosts to go through, as ssh -J: [user@]host[:port][,…], or none."
                : "Jump hosts to go through, as ssh -J: [user@]host[:port][,…], or none (wins over ProxyJump and "
                    + "ProxyCommand).",
            valueName: "hosts"),
        completion: Completions.jumpHosts)
    var jump: String?

    @Option(
        name: .customLong("password-env"),
        help: ArgumentHelp(
            Style.briefHelp
                ? "Name of an environment variable holding the SSH password."
                : "Name of an environment variable holding the SSH password (never the password itself).",
            valueName: "var"))
    var passwordEnv: String?

    @Option(
        name: .customLong("passphrase-env"),
        help: ArgumentHelp(
            Style.briefHelp
                ? "Name of an environment variable holding private key passphrases."
                : "Name of an environment variable holding private key passphrases (default: "
                    + "HOSTSCOPE_KEY_PASSPHRASE).",
            valueName: "var"))
    var passphraseEnv: String?

    @Option(
        name: Style.sshConfigNames,
        help: ArgumentHelp(
            "ssh_config file to read instead of ~/.ssh/config and /etc/ssh/ssh_config.", valueName: "file"))
    var sshConfig: String?

    @Flag(
        name: Style.verboseNames,
        help: ArgumentHelp(
            Style.briefHelp
                ? "Print each step of reaching the host on stderr, as ssh -v."
                : "Print each step of reaching a host on stderr, as ssh -v: the ssh_config blocks used, the "
                    + "address, jump hosts, the host key and where it was found, the authentication methods tried, "
                    + "each command and how long it took (never a secret)."))
    var verbose = false

    func validate() throws {
        if let port, !(1...65535).contains(port) {
            throw ValidationError("--port \(port) is not a TCP port; use 1 to 65535.")
        }
    }

    /// The options as the core takes them; secrets no variable holds are asked for on the terminal.
    var settings: ConnectionSettings { settings(attended: true) }

    /// The options as the core takes them. Only an attended run (one host, a person at the terminal) asks for a
    /// secret no variable holds; an unattended one (a watch, several hosts at once) never prompts, as
    /// OpenSSH's `BatchMode`: the host fails with an authentication error and the others go on.
    func settings(attended: Bool) -> ConnectionSettings {
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
        settings.prompter = attended ? TerminalPrompt.prompter : nil
        settings.configWarning = { Output.warningOnce($0) }
        settings.hostKeyRecorded = { Output.notice($0) }
        settings.debug = Output.diagnostics(verbose: verbose).debug
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
