import ArgumentParser

/// Where a command's hosts come from beside its host arguments: `--hosts-file`, and a fleet file's groups with
/// `--fleet` and `--label`. The options of `watch`, `top`, `serve`, `snapshot` and `mcp`; each command keeps
/// its own host argument, whose help says what it does with the hosts.
struct HostSourceOptions: ParsableArguments {
    @Option(
        name: .customLong("hosts-file"),
        help: ArgumentHelp("File with one host or pattern per line.", valueName: "file"))
    var hostsFile: String?

    @OptionGroup var fleet: FleetOptions

    /// Refuses a `--label` that is not `NAME=VALUE` (ArgumentParser calls it for each command using these).
    func validate() throws {
        _ = try fleet.selector()
    }
}
