/// Command lines and owners of a few processes, for `watch` ticks: a tick reads only the
/// kernel's counters, and the processes it lists get their details here when an earlier tick
/// has not already learnt them (a pid with the same start time is the same process).
public enum ProcessDetailsProbe {
    public struct Details: Sendable, Equatable {
        /// `nil` for a process without a command line (a kernel thread, a zombie).
        public var command: String?
        public var user: String?
    }

    /// The script for `pids`: their `cmdline` through `grep -aH` (unforgeable paths) and their
    /// owners through `ls -ldn` (`ls -ld` where BusyBox has no `-n`).
    ///
    /// - Parameter lsTakesN: `ls -n` is known to work, as on GNU and macOS userlands: the owners come
    ///   from one `ls`. Otherwise (BusyBox, built with or without `-n`) `ls -dn /` is tried first,
    ///   which costs the host one process more.
    public static func command(pids: [Int], nonce: String, lsTakesN: Bool = false) -> String {
        let marker = "echo " + ProbeOutput.markerPrefix(nonce)
        let cmdlines = pids.map { "/proc/\($0)/cmdline" }.joined(separator: " ")
        let directories = pids.map { "/proc/\($0)" }.joined(separator: " ")
        let owners =
            lsTakesN
            ? "ls -ldn \(directories) 2>/dev/null; "
            : "if ls -dn / >/dev/null 2>&1; then ls -ldn \(directories); else ls -ld \(directories); fi 2>/dev/null; "
        return "export LC_ALL=C LANG=C; \(marker)cmdline; grep -aH '' \(cmdlines) 2>/dev/null; "
            + "\(marker)owners; \(owners)\(marker)end"
    }

    /// Details by pid for every process still running when the script ran.
    public static func parse(_ output: ProbeOutput, platform: HostPlatform) throws(ParseError) -> [Int: Details] {
        guard output.isComplete else {
            throw ParseError(source: "process details", message: "output ended early: the host cut the command short")
        }
        var commands: [Int: String] = [:]
        ProbeOutput.forEachPrefixedFile(in: output.section("cmdline") ?? "") { path, content in
            if case .cmdline(let pid)? = LinuxProcProbe.processFile(path) {
                commands[pid] = LinuxProcProbe.commandLine(String(decoding: content, as: UTF8.self))
            }
        }
        var details: [Int: Details] = [:]
        for (pid, user) in LinuxProcProbe.owners(output.section("owners") ?? "", platform: platform) {
            details[pid] = Details(command: commands[pid], user: user)
        }
        return details
    }
}
