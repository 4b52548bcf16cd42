import Foundation

/// Where hostscope keeps its database when the command line does not say.
///
/// The order is `--db`, then `HOSTSCOPE_DB`, then the XDG data directory:
/// `$XDG_DATA_HOME/hostscope/hostscope.sqlite`, else `~/.local/share/hostscope/hostscope.sqlite`.
public enum DatabaseLocation {
    /// The database file's name inside the data directory.
    public static let fileName = "hostscope.sqlite"

    /// The database path for an explicit `--db` value (or `nil`) and a process environment.
    ///
    /// A relative `XDG_DATA_HOME` is ignored, as the XDG Base Directory specification asks. A
    /// leading `~/` in `--db` or `HOSTSCOPE_DB` is expanded (a shell does not expand it inside
    /// `--db=~/x` or a quoted variable). `homeDirectory` is used when `HOME` is unset.
    public static func path(
        explicit: String? = nil, environment: [String: String], homeDirectory: String? = nil
    ) -> String {
        let home = nonEmpty(environment["HOME"]) ?? homeDirectory ?? NSHomeDirectory()
        if let explicit = nonEmpty(explicit) { return expandTilde(explicit, home: home) }
        if let fromEnvironment = nonEmpty(environment["HOSTSCOPE_DB"]) {
            return expandTilde(fromEnvironment, home: home)
        }
        return (dataDirectory(environment: environment, homeDirectory: home) as NSString)
            .appendingPathComponent(fileName)
    }

    /// hostscope's own data directory: `$XDG_DATA_HOME/hostscope`, else `~/.local/share/hostscope`. It holds
    /// nothing but hostscope's files, so it is kept private (mode 0700), as the XDG specification asks.
    public static func dataDirectory(environment: [String: String], homeDirectory: String? = nil) -> String {
        let home = nonEmpty(environment["HOME"]) ?? homeDirectory ?? NSHomeDirectory()
        let dataHome: String
        if let xdg = nonEmpty(environment["XDG_DATA_HOME"]), xdg.hasPrefix("/") {
            dataHome = xdg
        } else {
            dataHome = (home as NSString).appendingPathComponent(".local/share")
        }
        return (dataHome as NSString).appendingPathComponent("hostscope")
    }

    private static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }

    private static func expandTilde(_ path: String, home: String) -> String {
        guard path == "~" || path.hasPrefix("~/") else { return path }
        return (home as NSString).appendingPathComponent(String(path.dropFirst(path == "~" ? 1 : 2)))
    }
}
