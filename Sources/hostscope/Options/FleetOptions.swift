import ArgumentParser
import HostscopeCore

/// `--fleet FILE` and `--label NAME=VALUE`: the options of every command that watches or reaches a fleet.
struct FleetOptions: ParsableArguments {
    @Option(
        name: .customLong("fleet"),
        help: ArgumentHelp(
            "Fleet file (YAML): groups of hosts and patterns with labels and settings (docs/fleet.md); flags win.",
            valueName: "file"))
    var fleetFile: String?

    @Option(
        name: .customLong("label"),
        help: ArgumentHelp("Only the hosts with this label (from --fleet); repeatable.", valueName: "name=value"))
    var labels: [String] = []

    /// The label filters.
    func selector() throws -> LabelSelector {
        do {
            return try LabelSelector(arguments: labels)
        } catch {
            throw ValidationError(error.message)
        }
    }
}
