/// The `busybox` collector's probe, for hosts whose userland is BusyBox (Alpine, OpenWrt,
/// buildroot images, containers): the `proc` collector's kernel reads, with only commands and
/// options that every BusyBox build has.
///
/// The figures and their meaning are the `proc` collector's: CPU and rates from deltas of
/// `/proc/stat`, `/proc/net/dev` and `/proc/diskstats` (two samples inside the script for a
/// one-off snapshot, one per tick in `watch`), memory from `/proc/meminfo`
/// (`total-available`), processes from `/proc/PID/stat` and `/proc/PID/cmdline`; so the same
/// parser (``LinuxProcProbe/parse(_:platform:)``) and builder read it. What differs is the
/// commands around the kernel reads:
///
/// - BusyBox grep reads every file as text whatever its flags (`-a` is accepted and ignored),
///   so the samples' grep (``LinuxProcProbe/sampleGrep``) works unchanged.
/// - BusyBox `df` has no `--output`; sizes come from `df -kPT` (`df -kP` where the build lacks
///   `-T`) and inodes from `df -iP` (absent from builds without `FEATURE_DF_FANCY`: inodes are
///   then `null`). `-P` keeps long device names on their row. BusyBox lists a mount point twice
///   when mounts are stacked on it; GNU df shows it once and so does this probe.
/// - `sleep` takes fractions only in builds with `FEATURE_FLOAT_SLEEP`; elsewhere the window
///   becomes one second, which `sample_ms` reports since the interval is measured by the
///   kernel's own `/proc/uptime`.
/// - `ls -n` exists only with `FEATURE_LS_USERNAME`; builds without it print numeric owners
///   with plain `ls -l`, which the parser accepts as well as names.
/// - `getconf` is usually missing; ``HostPlatform`` reads the page size from `/proc/self/smaps`.
///
/// `ps`, `free` and `top` are not run: BusyBox `ps -o` has no CPU or memory-share column, and
/// its sizes are rounded (`14m`); the kernel files give exact figures at less cost.
public enum BusyBoxProbe {
    /// The script; `sampleSeconds` > 0 takes two samples that far apart, `nil` or 0 one.
    ///
    /// The textfiles of `textfileDirectory` are listed as the `proc` probe lists them (BusyBox `stat -c`)
    /// and read by BusyBox's `awk` applet with the `proc` probe's program and bounds; a build without
    /// `awk` lists them unread, which sets `node_textfile_scrape_error`.
    public static func command(
        sampleSeconds: Double?, nonce: String, processDetails: Bool = true,
        textfileDirectory: String = LinuxProcProbe.textfileDirectory
    ) -> String {
        let marker = "echo " + ProbeOutput.markerPrefix(nonce)
        let counters = "/proc/uptime /proc/stat /proc/net/dev /proc/diskstats"
        var script = "export LC_ALL=C LANG=C; cd / 2>/dev/null; \(marker)self; echo $$; "
        if let sampleSeconds, sampleSeconds > 0 {
            script += "\(marker)sample; \(LinuxProcProbe.sampleGrep) \(counters) /proc/[0-9]*/stat 2>/dev/null; "
            script += "sleep \(LinuxProcProbe.formatSeconds(sampleSeconds)) 2>/dev/null || sleep 1; "
        }
        script += "\(marker)sample; \(LinuxProcProbe.sampleGrep) \(counters) /proc/meminfo /proc/loadavg "
        script += "\(LinuxProcProbe.nodeFiles) /proc/[0-9]*/stat "
        script += processDetails ? "/proc/[0-9]*/cmdline 2>/dev/null; " : "2>/dev/null; "
        if !processDetails {
            let glob = LinuxProcProbe.textfileGlob(textfileDirectory)
            if !glob.isEmpty {
                // awk only where a file is there: an empty or absent directory starts no process.
                script += "set -- \(glob); if [ -f \"$1\" ] && command -v awk >/dev/null 2>&1; then "
                script += "awk '\(LinuxProcProbe.sampleAwk)' \"$@\" 2>/dev/null; fi; "
            }
            script += LinuxProcProbe.textfileListing(marker: marker, directory: textfileDirectory)
        }
        // Each option is tried on a cheap target first: running the full command twice would
        // print two tables whenever one mount cannot be read and df exits non-zero.
        if processDetails {
            script += "\(marker)owners; if ls -dn / >/dev/null 2>&1; then ls -ldn /proc/[0-9]*; "
            script += "else ls -ld /proc/[0-9]*; fi 2>/dev/null; "
        }
        script += "\(marker)df; if df -kPT / >/dev/null 2>&1; then df -kPT; else df -kP; fi; "
        script += "\(marker)dfi; df -iP 2>/dev/null; \(marker)end"
        return script
    }
}
