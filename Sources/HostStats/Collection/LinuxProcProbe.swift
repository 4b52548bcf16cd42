import Foundation
import ValueFormats

/// The `proc` collector's probe: one POSIX `sh` script that reads the kernel's own counters
/// and gauges, so a snapshot costs one round trip and a handful of processes on the host.
///
/// A sample is one awk (``sampleAwk``; grep, ``sampleGrep``, where the host has no awk) over
/// `/proc/uptime`, `/proc/stat`, `/proc/net/dev`, `/proc/diskstats` and every `/proc/PID/stat`
/// (the last sample adds `/proc/meminfo`, `/proc/loadavg`, and with process details every
/// `/proc/PID/cmdline`, read by grep). Each line comes out after its file's path, which no process
/// name can forge; awk shortens each process's line to the six fields a tick reads. A one-off
/// snapshot takes two samples `--sample` apart inside the script (CPU and rates are deltas, never
/// since-boot averages); `watch` takes one per tick and uses the previous tick's. Then `ls -ldn /proc/[0-9]*` gives process owners,
/// `df -kPT` and `df -iP` the filesystems. Everything runs under `LC_ALL=C`.
///
/// `ps` is not used: it reads several files per process and looks up every owner, which made
/// it three quarters of the probe's CPU time on the host. User names come from `/etc/passwd`,
/// read once per connection by ``HostPlatform``.
public enum LinuxProcProbe {
    /// The script; `sampleSeconds` > 0 takes two samples that far apart, `nil` or 0 one.
    ///
    /// - Parameter processDetails: also read every process's command line and owner. `watch`
    ///   ticks leave them out and ask for those of the few processes they list, when not known
    ///   from an earlier tick (``ProcessDetailsProbe``): on a host with hundreds of processes that
    ///   is most of the output and of the parsing.
    ///   - timexSyscall: also read the kernel's clock discipline through `adjtimex(2)` with this
    ///     system call number (``adjtimexSyscall(arch:)``), where the host has `perl`.
    ///   - textfileDirectory: where the `*.prom` files are (`RemotePath.isPlainAbsolute(_:)`).
    ///   - startReaderIn: a shell pid: when the script runs in that shell (a long-lived one, where the last
    ///     ticks ran), it also starts the connection's ``readerAwk`` there (``readerStart(marker:shell:)``)
    ///     and says so in a `reader` section; later ticks then send ``readerCommand(nonce:timexSyscall:textfileDirectory:)``.
    public static func command(
        sampleSeconds: Double?, nonce: String, processDetails: Bool = true, timexSyscall: Int? = nil,
        textfileDirectory: String = textfileDirectory, startReaderIn shellPID: Int? = nil
    ) -> String {
        let marker = "echo " + ProbeOutput.markerPrefix(nonce)
        var script = "export LC_ALL=C LANG=C; cd / 2>/dev/null; \(marker)self; echo $$; "
        if let sampleSeconds, sampleSeconds > 0 {
            script += "\(marker)sample; \(sampleReader("\(counterFiles) /proc/[0-9]*/stat")) 2>/dev/null; "
            script += "sleep \(formatSeconds(sampleSeconds)); "
        }
        // df runs beside the sample's reader, not after it: its rows reach the reader through a pipe
        // and come out last, as the file `(standard input)`. GNU df prints sizes and inodes in one
        // run; other dfs take two.
        script += textfileListing(marker: marker, directory: textfileDirectory)
        if let timexSyscall { script += timexScript(marker: marker, syscall: timexSyscall) }
        script += "\(marker)sample; \(dfRows(marker: marker)) | "
        if processDetails {
            script += "\(sampleGrep) \(counterFiles) /proc/meminfo /proc/loadavg \(nodeFiles) /proc/[0-9]*/stat "
            script += "/proc/[0-9]*/cmdline - "
            script += "2>/dev/null; \(marker)owners; ls -ldn /proc/[0-9]* 2>/dev/null; "
        } else {
            script += sampleReader("\(tickFiles(textfileDirectory: textfileDirectory)) -")
            script += " 2>/dev/null; "
            if let shellPID { script += readerStart(marker: marker, shell: String(shellPID)) }
        }
        script += "\(marker)end"
        return script
    }

    /// A `watch` tick through the connection's running ``readerAwk``: the shell sends the tick's sections, the
    /// files to read (its globs expanded) and df's rows to the reader and waits for its answer, which is a
    /// fresh tick's output (``command(sampleSeconds:nonce:processDetails:timexSyscall:textfileDirectory:startReaderIn:)``
    /// without details). No awk is started: per tick the host starts `df` alone (and `stat` where textfiles are,
    /// `perl` once a minute). Where the shell has no reader running (a new shell, a reader that ended), the
    /// output is a `noreader` section and the end marker, and the tick must be taken with the full command.
    public static func readerCommand(
        nonce: String, timexSyscall: Int? = nil, textfileDirectory: String = textfileDirectory
    ) -> String {
        let prefix = ProbeOutput.markerPrefix(nonce)
        let marker = "echo " + prefix
        let files = tickFiles(textfileDirectory: textfileDirectory)
        var script = "export LC_ALL=C LANG=C; cd / 2>/dev/null; "
        script += "if [ -n \"$hs_q\" ] && kill -0 \"$hs_q\" 2>/dev/null; then { \(marker)self; echo $$; "
        script += textfileListing(marker: marker, directory: textfileDirectory)
        if let timexSyscall { script += timexScript(marker: marker, syscall: timexSyscall) }
        script += "\(marker)sample; printf '%s\\n' '\(prefix)(files)' \(files) '\(prefix)(files)'; "
        script += "\(dfRows(marker: marker)) 2>/dev/null; \(marker)end; } >&3; read hs_x <&4; "
        script += "else \(marker)noreader; \(marker)end; fi"
        return script
    }

    /// The counters a sample reads twice, `sampleSeconds` apart.
    static let counterFiles = "/proc/uptime /proc/stat /proc/net/dev /proc/diskstats"

    /// The files a `watch` tick reads, as shell words (globs expanded by the shell): the same for a fresh awk
    /// and for the connection's reader, so that both give one output.
    static func tickFiles(textfileDirectory: String) -> String {
        "\(counterFiles) /proc/meminfo /proc/loadavg \(nodeFiles) \(textfileGlob(textfileDirectory)) /proc/[0-9]*/stat"
    }

    /// df's rows in one run where GNU df prints sizes and inodes together, in two runs with other dfs.
    static func dfRows(marker: String) -> String {
        "{ \(marker)dfoutput; df -k --output=\(dfOutputColumns) 2>/dev/null || "
            + "{ \(marker)df; df -kPT; \(marker)dfi; df -iP; }; }"
    }

    /// Starts ``readerAwk`` in the shell whose pid is `shell` (a word compared with `$$`), once per connection (a script that runs in
    /// another shell, as with exec channels, does nothing): two FIFOs in a private directory of `mktemp -d`
    /// (removed as soon as both ends are open), the awk in the background reading one and answering "done" on
    /// the other (its descriptor 5), the shell holding their other ends as descriptors 3 and 4. The awk's first
    /// line says it runs; then the script prints a `reader` section with its pid. If anything fails (no
    /// `mktemp`, no `mkfifo`, an awk that does not start), the shell keeps no reader and the ticks stay fresh.
    /// When the shell ends, the awk reads the end of its input and ends too.
    static func readerStart(marker: String, shell: String) -> String {
        "if [ \"$$\" = \(shell) ] && command -v awk >/dev/null 2>&1 && hs_d=$(mktemp -d 2>/dev/null); then "
            + "exec 3>&- 4>&-; hs_q=; if mkfifo \"$hs_d/i\" \"$hs_d/o\" 2>/dev/null; then "
            + "awk -W interactive '\(readerAwk)' <\"$hs_d/i\" 5>\"$hs_d/o\" 3>&- 4>&- 2>/dev/null & hs_q=$!; "
            + "exec 3>\"$hs_d/i\" 4<\"$hs_d/o\"; if read hs_x <&4; then \(marker)reader; echo \"$hs_q\"; "
            + "else exec 3>&- 4>&-; hs_q=; fi; fi; rm -rf \"$hs_d\"; fi; "
    }

    /// The grep that prints a sample's files, each line prefixed with its file's path.
    ///
    /// Every line, `/proc/stat`'s long `intr` and `softirq` lines included: leaving those out with
    /// `-v` and patterns made grep match a regular expression against every line, which cost the
    /// host about 0.3 ms more per run than they save the client in reading.
    static let sampleGrep = "grep -aH ''"

    /// A sample's reader: ``sampleAwk`` where the host has an `awk`, else ``sampleGrep``. Both
    /// print every line of `files` after its file's path; awk shortens the process lines.
    static func sampleReader(_ files: String) -> String {
        "if command -v awk >/dev/null 2>&1; then awk '\(sampleAwk)' \(files); else \(sampleGrep) \(files); fi"
    }

    /// The awk program of a sample (any POSIX awk: mawk, gawk, BusyBox's): grep's output, except
    /// that a `/proc/PID/stat` whose record is whole on its first line comes out short, after its
    /// pid as a path (`PID:(comm) state ppid utime stime starttime rss`, read with
    /// ``ProcPidStatParser/Layout/compact``).
    ///
    /// A process line is ~250 bytes of which a tick reads six fields: on a host with a thousand
    /// processes the long lines were five sixths of the output, and decrypting and parsing them
    /// most of the client's CPU per tick. awk reads the files as fast as grep; cutting the lines
    /// adds ~1 µs per process on the host (0.3 ms per tick with 370 processes).
    ///
    /// - `comm` runs to the **last** `) ` (a process may call itself `x) S 1 2`); the fields
    ///   after it are counted from there, so kernels that add fields at the end change nothing.
    /// - A record that a newline in `comm` spreads over several lines, or that has fewer fields
    ///   than a kernel prints, is passed on whole after its real path, as grep prints it.
    /// - Files are opened with `getline`, which reports a missing file (a process that ended
    ///   since the shell expanded the glob) where naming it as an operand would end awk.
    /// - `-` (df's rows) is read by the main rule: BusyBox awk's `getline` does not take `-`
    ///   for standard input. Without `-` the program exits after `BEGIN` and reads nothing.
    /// - No `'` (the program sits in single quotes) and no `!` (csh history).
    static let sampleAwk = [
        "BEGIN { srand(); print \"(clock):\" srand(); ",
        "for (i = 1; i < ARGC; i++) { f = ARGV[i]; if (f == \"-\") continue; ARGV[i] = \"\"; ",
        fileReader(emit: { "print " + $0 }),
        "} if (ARGV[ARGC - 1] == \"-\") s = 1; else exit } { print \"(standard input):\" $0 }",
    ].joined()

    /// What a sample's awk does with the file `f`: a `/proc/PID/stat` shortened (``sampleAwk``), the
    /// node files cut (``nodeFilesReader(emit:)``), any other file passed on line by line after its path.
    /// `emit` turns an awk string expression into the statement that outputs it.
    static func fileReader(emit: (String) -> String) -> String {
        [
            "if (f ~ /^\\/proc\\/[0-9]+\\/stat$/) { n = 0; while ((getline < f) > 0) { ",
            "if (++n == 1 && match($0, /.*\\) /)) { k = split(substr($0, 1, RLENGTH), x); if (NF >= k + 22) { ",
            emit(
                "$1 \":\" substr($0, length($1) + 2, RLENGTH - length($1) - 1) $(k + 1) \" \" $(k + 2) \" \" "
                    + "$(k + 12) \" \" $(k + 13) \" \" $(k + 20) \" \" $(k + 22)"),
            "; continue } } ", emit("f \":\" $0"), " } } ",
            nodeFilesReader(emit: emit),
            "else while ((getline line < f) > 0) ", emit("f \":\" line"), "; close(f) ",
        ].joined()
    }

    /// The long-lived awk of a connection (``readerStart(marker:shell:)``): the reads of
    /// ``fileReader(emit:)``, one tick at a time, with the output of a fresh ``sampleAwk`` run, so that a
    /// tick starts no awk. It reads requests from standard input (the shell's end of a FIFO) and answers on
    /// standard output, the session's:
    ///
    /// - a request starts with the tick's `@@NONCE:self` line; every line up to `@@NONCE:(files)` (the
    ///   shell's pid, the textfile and timex sections, the sample marker) is passed on as it is;
    /// - the lines up to a second `@@NONCE:(files)` are the files to read, in the order a fresh awk takes
    ///   them as operands;
    /// - later lines (df's rows) come out as `(standard input):LINE`, until `@@NONCE:end`, which ends the
    ///   answer.
    ///
    /// The answer is gathered in memory (in pieces of about 4 KB, so that the copies stay short) and
    /// written at once: one write for the whole tick, few SSH packets for sshd to send. Then a line on
    /// descriptor 5 tells the shell that the tick is done. Requests are read with `getline` from
    /// `/dev/stdin` and, in mawk, with `-W interactive`: mawk otherwise waits to fill its input buffer
    /// before it hands over a line. The program ends with the shell (the end of its input).
    static let readerAwk = [
        "function w(t) { zb = zb t \"\\n\"; if (length(zb) > 4000) { zo = zo zb; zb = \"\" } } ",
        "BEGIN { print \".\" > \"/dev/fd/5\"; fflush(\"/dev/fd/5\"); while ((getline zr < \"/dev/stdin\") > 0) { ",
        "if (zs == 0) { if (zr ~ /^@@.*:self$/) { zp = substr(zr, 1, length(zr) - 4); zs = 1; w(zr) } } ",
        "else if (zs == 1) { if (zr == zp \"(files)\") { zs = 2; zn = 0; np = 0; srand(); w(\"(clock):\" srand()) } ",
        "else w(zr) } ",
        "else if (zs == 2) { if (zr == zp \"(files)\") { for (zi = 1; zi <= zn; zi++) { f = zf[zi]; ",
        fileReader(emit: { "w(" + $0 + ")" }),
        "} zs = 3 } else zf[++zn] = zr } ",
        "else if (zr == zp \"end\") { w(zr); printf \"%s\", zo zb; fflush(); zo = zb = \"\"; zs = 0; ",
        "print \".\" > \"/dev/fd/5\"; fflush(\"/dev/fd/5\") } ",
        "else w(\"(standard input):\" zr) } }",
    ].joined()

    /// The awk program starts with the host's clock in whole seconds, as `(clock):SECONDS` (`srand()`
    /// seeds from the time of day and a second call returns that seed: POSIX, no process started);
    /// ``NodeFiguresReader`` makes it exact with the clock read once per connection.
    ///
    /// The awk branches of ``nodeFiles`` and the textfiles: `/proc/vmstat` cut to node_exporter's
    /// default fields; `/proc/net/netstat`, `/proc/net/snmp` and `/proc/net/snmp6` cut to its default
    /// netstat fields (``netstatFieldsERE``: the 5 KB of a tick's 10 that ``ProcNetstatParser`` would
    /// drop), each header and value line pair kept as a pair of the chosen columns, and a pair whose
    /// counts differ passed on whole for the parser to report; and at most
    /// ``NodeFiguresReader/textfileLimit`` `*.prom` files of ``NodeFiguresReader/textfileLineLimit``
    /// lines, a file past either bound named on a `(cut)` line. The netstat files are recognised by
    /// their last two path components, so that tests can give copies.
    static func nodeFilesReader(emit: (String) -> String) -> String {
        let files = String(NodeFiguresReader.textfileLimit)
        let lines = String(NodeFiguresReader.textfileLineLimit)
        return "else if (f == \"/proc/vmstat\") { while ((getline line < f) > 0) "
            + "if (line ~ /^(oom_kill|pgpg|pswp|pg.*fault)/) " + emit("f \":\" line") + " } "
            + "else if (f ~ /\\/net\\/(netstat|snmp)$/) { hp = \"\"; while ((getline line < f) > 0) { "
            + "nv = split(line, nt, \" \"); if (nv == 0) continue; if (nt[1] != hp) { hp = nt[1]; hl = line; "
            + "nh = split(line, hn, \" \"); continue } hp = \"\"; "
            + "if (nv != nh) { " + emit("f \":\" hl") + "; " + emit("f \":\" line") + "; continue } "
            + "ph = nt[1]; pv = nt[1]; pr = substr(nt[1], 1, length(nt[1]) - 1) \"_\"; "
            + "for (c = 2; c <= nv; c++) if ((pr hn[c]) ~ /\(netstatFieldsERE)/) { ph = ph \" \" hn[c]; pv = pv \" \" nt[c] } "
            + "if (ph != nt[1]) { " + emit("f \":\" ph") + "; " + emit("f \":\" pv") + " } } close(f) } "
            + "else if (f ~ /\\/net\\/snmp6$/) { while ((getline line < f) > 0) { split(line, nt, \" \"); "
            + "q = index(nt[1], \"6\"); if (q > 0 && (substr(nt[1], 1, q) \"_\" substr(nt[1], q + 1)) ~ /\(netstatFieldsERE)/) "
            + emit("f \":\" line") + " } close(f) } "
            + "else if (f ~ /\\.prom$/) { n = 0; if (++np > " + files + ") " + emit("\"(cut):\" f") + "; "
            + "else while ((getline line < f) > 0) { if (++n > " + lines + ") "
            + "{ " + emit("\"(cut):\" f") + "; break } " + emit("f \":\" line") + " } } "
    }

    /// node_exporter's default `--collector.netstat.fields` as a POSIX extended regular expression over
    /// `Protocol_Field` (``ProcNetstatParser/isDefaultField(_:)``, which has the last word).
    static let netstatFieldsERE =
        "^(.*_(InErrors|InErrs)|Ip_Forwarding|Ip(6|Ext)_(InOctets|OutOctets)|Icmp6?_(InMsgs|OutMsgs)|"
        + "TcpExt_(Listen.*|Syncookies.*|TCPSynRetrans|TCPTimeouts)|"
        + "Tcp_(ActiveOpens|InSegs|OutSegs|OutRsts|PassiveOpens|RetransSegs|CurrEstab)|"
        + "Udp6?_(InDatagrams|OutDatagrams|NoPorts|RcvbufErrors|SndbufErrors))$"

    /// The kernel files of node_exporter's other default collectors (``NodeFigures``), read in the
    /// last sample by the same reader: each is a file or two of a few kilobytes, and a file the host
    /// lacks (`/proc/pressure` before Linux 4.20, conntrack without its module) is skipped.
    /// `/proc/vmstat` is cut by awk to node_exporter's fields. Of `/sys/class/net`, the attributes
    /// that change and are always readable (state, carrier change counts, and `statistics/rx_nohandler`,
    /// which node_exporter reads through netlink and `/proc/net/dev` lacks) are read every tick; the
    /// others once per connection (``HostPlatform/detectionCommand``): `carrier`, `speed` and
    /// `duplex` fail to read (`EINVAL`) on a link that is down, which stops mawk.
    static let nodeFiles =
        "/proc/vmstat /proc/pressure/cpu /proc/pressure/io /proc/pressure/memory /proc/net/sockstat "
        + "/proc/net/sockstat6 /proc/net/netstat /proc/net/snmp /proc/net/snmp6 /proc/sys/fs/file-nr "
        + "/proc/sys/kernel/random/entropy_avail /proc/sys/kernel/random/poolsize /proc/net/softnet_stat "
        + "/proc/sys/net/netfilter/nf_conntrack_count /proc/sys/net/netfilter/nf_conntrack_max "
        + "/proc/net/stat/nf_conntrack /proc/net/udp "
        + "/proc/net/udp6 /proc/net/arp /proc/mounts /sys/class/net/*/operstate "
        + "/sys/class/net/*/carrier_changes /sys/class/net/*/carrier_up_count /sys/class/net/*/carrier_down_count "
        + "/sys/class/net/*/statistics/rx_nohandler"

    /// The textfile directory node_exporter's Debian package reads (`--collector.textfile.directory`), the
    /// default of `--textfile-directory`.
    public static let textfileDirectory = "/var/lib/prometheus/node-exporter"

    /// The `*.prom` files of `directory` as a shell glob; nothing for a directory that cannot be used.
    static func textfileGlob(_ directory: String) -> String {
        RemotePath.isPlainAbsolute(directory) ? "\(directory)/*.prom" : ""
    }

    /// The textfiles' modification times (`stat -c '%Y %n'`, GNU and BusyBox), a process started only
    /// where the directory holds a `*.prom` file (the shell's glob tells, without a process: Debian's
    /// node_exporter package leaves the directory there and empty, and `stat` would cost such a host a
    /// process every tick); awk reads their text with the sample, at most
    /// ``NodeFiguresReader/textfileLimit`` files of ``NodeFiguresReader/textfileLineLimit`` lines. A
    /// directory that cannot be used (`RemotePath.isPlainAbsolute(_:)`) is read as none.
    static func textfileListing(marker: String, directory: String) -> String {
        guard RemotePath.isPlainAbsolute(directory) else { return "" }
        let glob = textfileGlob(directory)
        return "if [ -d \(directory) ]; then \(marker)textfiles; for hs_t in \(glob); do [ -e \"$hs_t\" ] && "
            + "stat -c '%Y %n' \(glob) 2>/dev/null; break; done; fi; "
    }

    /// How often a watch reads `adjtimex(2)`: starting `perl` costs the host a few milliseconds of
    /// CPU, more than the rest of a tick's probe, and the clock discipline moves slowly.
    public static let timexInterval: Double = 60

    /// `adjtimex`'s system call number on the host's architecture (`uname -m`), nil where unknown.
    public static func adjtimexSyscall(arch: String?) -> Int? {
        switch arch {
        case "x86_64"?: 159
        case "aarch64"?, "arm64"?, "riscv64"?, "loongarch64"?: 171
        case "i386"?, "i486"?, "i586"?, "i686"?, "armv6l"?, "armv7l"?, "armv8l"?, "ppc"?, "ppc64"?, "ppc64le"?,
            "s390x"?:
            124
        default: nil
        }
    }

    /// `adjtimex(2)` in read-only mode (`modes` 0) through perl's `syscall`, which Debian and Ubuntu
    /// always have (`perl-base` is essential) and most other distributions install: no system file or
    /// standard command gives the kernel's NTP state. It prints the return value and `struct timex`'s
    /// fields, laid out with the host's own `int` and `long` sizes; a host without perl prints no section.
    static func timexScript(marker: String, syscall: Int) -> String {
        "if command -v perl >/dev/null 2>&1; then \(marker)timex; perl -e '$b=\"\\0\"x256; $r=syscall(\(syscall),$b); "
            + "print join(\" \",$r,unpack(\"i x![l!] l! l! l! l! i x![l!] l! l! l! l! l! l! l! l! i x![l!] l! l! l! l! l! i\",$b)),"
            + "\"\\n\"' 2>/dev/null; fi; "
    }

    /// The name grep gives the file it reads from its standard input.
    static let standardInput = "(standard input)"

    /// `0.25`, not `0.25000000000000000`; `sleep` wants a plain decimal.
    static func formatSeconds(_ seconds: Double) -> String {
        let millis = Int((seconds * 1000).rounded())
        return millis % 1000 == 0 ? String(millis / 1000) : "\(millis / 1000).\(String(format: "%03d", millis % 1000))"
    }

    /// Reads the probe's output. Counter samples are required; a gauge that could not be read
    /// becomes a warning, and the rest of the snapshot is kept.
    public static func parse(_ output: ProbeOutput, platform: HostPlatform) throws(ParseError) -> LinuxProbeResult {
        guard output.isComplete else {
            throw ParseError(
                source: "probe", message: "output ended early (no end marker): the host cut the command short")
        }
        let sampleTexts = output.sectionBytes(named: "sample")
        guard !sampleTexts.isEmpty else {
            throw ParseError(source: "probe", message: "no /proc samples in the output: is this a Linux host?")
        }
        var result = LinuxProbeResult()
        result.probePID = output.section("self").flatMap { TextScanning.lines($0).first }.flatMap {
            Int($0.trimmingBlanks())
        }
        var commandLines: [Int: String] = [:]
        // df's rows, piped through grep (see ``command(sampleSeconds:nonce:processDetails:)``).
        var piped: String?
        for (sampleIndex, sampleText) in sampleTexts.enumerated() {
            var files: [String: String] = [:]
            var processes: [ProcessSample] = []
            commandLines = [:]
            ProbeOutput.forEachPrefixedFile(in: sampleText) { path, content in
                switch processFile(path) {
                case .stat?:
                    // A record that does not parse is a process that vanished mid-read.
                    if let sample = try? ProcPidStatParser.sample(bytes: content, line: 1) { processes.append(sample) }
                case .compactStat(let pid)?:
                    if let sample = try? ProcPidStatParser.sample(bytes: content, line: 1, layout: .compact, pid: pid) {
                        processes.append(sample)
                    }
                case .cmdline(let pid)?:
                    commandLines[pid] = commandLine(String(decoding: content, as: UTF8.self))
                case nil:
                    let path = String(decoding: path, as: UTF8.self)
                    if path == Self.standardInput {
                        piped = String(decoding: content, as: UTF8.self)
                    } else {
                        files[path] = String(decoding: content, as: UTF8.self) + "\n"
                    }
                }
            }
            guard let uptimeText = files["/proc/uptime"], let statText = files["/proc/stat"] else {
                throw ParseError(source: "probe", message: "/proc/uptime or /proc/stat could not be read")
            }
            var sample = LinuxCounterSample(
                uptimeSeconds: try ProcUptimeParser.parse(uptimeText), cpu: try ProcStatParser.parse(statText))
            if let text = files["/proc/net/dev"] {
                do { sample.network = try ProcNetDevParser.parse(text) } catch {
                    result.warnings.append(error.description)
                }
            }
            if let text = files["/proc/diskstats"] {
                do { sample.disks = try ProcDiskStatsParser.parse(text) } catch {
                    result.warnings.append(error.description)
                }
            }
            sample.processes = processes
            result.samples.append(sample)
            if let text = files["/proc/meminfo"] {
                do { result.memory = try ProcMemInfoParser.parse(text, warnings: &result.warnings) } catch {
                    result.warnings.append(error.description)
                }
            }
            if let text = files["/proc/loadavg"] {
                do { result.load = try ProcLoadAvgParser.parse(text) } catch {
                    result.warnings.append(error.description)
                }
            }
            if sampleIndex == sampleTexts.count - 1 {
                result.node = NodeFiguresReader.read(
                    files: files, clock: output.section("clock"), textfiles: output.section("textfiles"),
                    pageSize: platform.pageSize, clockBase: platform.clockBase, uptime: sample.uptimeSeconds,
                    warnings: &result.warnings)
                if let text = output.section("timex"), !text.isEmpty {
                    do { result.node?.timex = try TimexParser.parse(text) } catch {
                        result.warnings.append(error.description)
                    }
                }
            }
        }

        let owners = Self.owners(output.section("owners") ?? "", platform: platform)
        let detailed = output.section("owners") != nil
        result.pageSize = platform.pageSize
        // Without details (a watch tick) there is nothing to join to the samples: the builder takes
        // resident sizes from them, and commands and owners come later for the processes listed.
        if detailed, let current = result.samples.last {
            result.processTable = current.processes.map { sample in
                ProcessStats(
                    pid: sample.pid, ppid: sample.ppid, user: owners[sample.pid],
                    rssBytes: ProcPidStatParser.rssBytes(
                        sample, pageSize: platform.pageSize, warnings: &result.warnings),
                    command: commandLines[sample.pid] ?? "[\(sample.comm)]")
            }
        }

        // Older probes printed df's sections straight to the output; keep reading those.
        let dfSections = piped.map { ProbeOutput($0 + "\n", nonce: output.nonce) } ?? output
        if let text = dfSections.section("dfoutput"), !text.isEmpty {
            do {
                result.disks = try parseDfOutput(text, warnings: &result.warnings)
            } catch {
                result.warnings.append(error.description)
            }
        }
        if let text = dfSections.section("df") {
            do {
                // Stacked mounts are shown once, as GNU df does, without a warning on every tick.
                let parsed = try DfParser.parse(text, reportingStackedMounts: false)
                result.disks = withoutBindMounts(parsed.value)
                result.warnings.append(contentsOf: parsed.warnings)
            } catch {
                result.warnings.append(error.description)
            }
        }
        if let text = dfSections.section("dfi"), var disks = result.disks,
            let inodes = try? DfParser.parse(text, reportingStackedMounts: false).value
        {
            disks = joinInodes(inodes, into: disks)
            result.disks = disks
        }
        return result
    }

    /// The rows of a plain `df` table (BusyBox has no `--output`) with bind mounts left out, as GNU
    /// df leaves them out: GNU df shows one row per device, BusyBox one per mount. df prints no device
    /// number, so a row is taken for a bind mount of an earlier one when both name the same device
    /// path and report the same size, used and available figures; the shorter mount point is kept,
    /// as GNU df keeps it. Pseudo filesystems (`tmpfs`, `overlay`: no `/` in the source) are separate
    /// instances however alike their figures, and are all kept.
    static func withoutBindMounts(_ disks: [DiskStats]) -> [DiskStats] {
        struct Device: Hashable {
            var filesystem: String
            var size, used, available: UInt64?
        }
        var kept: [DiskStats] = []
        var positions: [Device: Int] = [:]
        for disk in disks {
            guard disk.filesystem.hasPrefix("/") else {
                kept.append(disk)
                continue
            }
            let device = Device(
                filesystem: disk.filesystem, size: disk.sizeBytes, used: disk.usedBytes, available: disk.availableBytes)
            if let position = positions[device] {
                if disk.mount.utf8.count < kept[position].mount.utf8.count { kept[position] = disk }
            } else {
                positions[device] = kept.count
                kept.append(disk)
            }
        }
        return kept
    }

    /// Copies inode counts from a second df run (`df -iP`, or macOS `df -i`) onto the
    /// filesystems of the first, by mount point. Filesystems without inodes (vfat, and BusyBox's
    /// `0` rows) keep `nil`, as GNU df's `-` gives.
    static func joinInodes(_ inodes: [DiskStats], into disks: [DiskStats]) -> [DiskStats] {
        let byMount = Dictionary(inodes.map { ($0.mount, $0) }, uniquingKeysWith: { _, last in last })
        return disks.map { disk in
            var disk = disk
            guard let match = byMount[disk.mount], let total = match.inodesTotal, total > 0 else { return disk }
            disk.inodesTotal = total
            disk.inodesUsed = match.inodesUsed
            return disk
        }
    }

    /// The columns the probe asks GNU df for: the numbers sit between the source and the mount
    /// point, so either may contain spaces and still be told apart.
    static let dfOutputColumns = "source,fstype,itotal,iused,size,used,avail,target"

    /// Reads `df -k --output=source,fstype,itotal,iused,size,used,avail,target`.
    ///
    /// Each row is: source (may hold spaces), type, five numbers (`-` where a filesystem has no
    /// inodes), mount point (may hold spaces); the first type-and-five-numbers run splits it. A
    /// figure out of range is left out (`null`) and named in `warnings`.
    static func parseDfOutput(_ text: String, warnings: inout [String]) throws(ParseError) -> [DiskStats] {
        var disks: [DiskStats] = []
        var seen: [String: Int] = [:]
        for (number, line) in TextScanning.lines(text).enumerated() where number > 0 && !line.isEmpty {
            let fields = TextScanning.fieldRanges(line)
            var outOfRange: [String] = []
            func value(_ index: Int) -> UInt64?? {
                let token = line[fields[index]]
                if token == "-" { return .some(nil) }
                switch TextScanning.readCounter(token) {
                case .value(let value): return .some(value)
                case .outOfRange:
                    outOfRange.append(TextScanning.outOfRangeWarning("df figure on line \(number + 1)", token))
                    return .some(nil)
                case nil: return nil
                }
            }
            var row: DiskStats?
            var start = 1
            while start + 6 < fields.count {
                outOfRange = []
                if let inodes = value(start + 1), let inodesUsed = value(start + 2), let size = value(start + 3),
                    let used = value(start + 4), let available = value(start + 5)
                {
                    let kib: (UInt64?) -> UInt64? = { kibibytes in
                        guard let kibibytes else { return nil }
                        let bytes = kibibytes.checkedMultiplied(by: 1024)
                        if bytes == nil {
                            outOfRange.append(
                                TextScanning.outOfRangeWarning(
                                    "df size in bytes on line \(number + 1)", "\(kibibytes)K"))
                        }
                        return bytes
                    }
                    let (usedBytes, availableBytes) = (kib(used), kib(available))
                    row = DiskStats(
                        filesystem: String(line[fields[0].lowerBound..<fields[start - 1].upperBound]),
                        type: String(line[fields[start]]),
                        mount: String(line[fields[start + 6].lowerBound..<line.endIndex]),
                        sizeBytes: kib(size), usedBytes: usedBytes, availableBytes: availableBytes,
                        usedPercent: DiskStats.usedPercent(used: usedBytes, available: availableBytes),
                        inodesTotal: inodes == 0 ? nil : inodes, inodesUsed: inodes == 0 ? nil : inodesUsed)
                    break
                }
                start += 1
            }
            guard let row else {
                throw ParseError(
                    source: "df --output", message: "row has no type followed by five numbers", line: number + 1)
            }
            warnings += outOfRange
            // GNU df lists each mount point once already; keep the last should one repeat.
            if let index = seen[row.mount] {
                disks[index] = row
            } else {
                seen[row.mount] = disks.count
                disks.append(row)
            }
        }
        return disks
    }

    /// Owners by pid from `ls -ldn /proc/PID…` lines (`dr-xr-xr-x 9 0 0 0 Nov 20 01:10 /proc/1`:
    /// the third field is the uid). An `ls` without `-n` (minimal BusyBox) prints a name there,
    /// or a uid it cannot name.
    static func owners(_ text: String, platform: HostPlatform) -> [Int: String] {
        var owners: [Int: String] = [:]
        for line in TextScanning.lines(text) {
            let fields = TextScanning.fields(line)
            guard fields.count >= 4, let last = fields.last, let pid = Int(last.split(separator: "/").last ?? "")
            else { continue }
            owners[pid] = UInt32(fields[2]).map { platform.userNames[$0] ?? String($0) } ?? String(fields[2])
        }
        return owners
    }

    enum ProcessFile {
        case stat
        /// ``sampleAwk``'s short `/proc/PID/stat` line, after its pid.
        case compactStat(Int)
        case cmdline(Int)
    }

    /// Which per-process file `path` is: `/proc/PID/stat`, `/proc/PID/cmdline`, or a bare pid
    /// (``sampleAwk``'s short stat line; no file grep names is all digits).
    static func processFile(_ path: UnsafeBufferPointer<UInt8>) -> ProcessFile? {
        if let (pid, end) = leadingPID(path, from: 0), end == path.count { return .compactStat(pid) }
        let prefix: StaticString = "/proc/"
        let prefixLength = prefix.utf8CodeUnitCount
        guard path.count > prefixLength + 2, memcmp(path.baseAddress!, prefix.utf8Start, prefixLength) == 0,
            let (value, index) = leadingPID(path, from: prefixLength), index < path.count,
            path[index] == UInt8(ascii: "/")
        else { return nil }
        let name = UnsafeBufferPointer(rebasing: path[(index + 1)...])
        if name.elementsEqual("stat".utf8) { return .stat }
        if name.elementsEqual("cmdline".utf8) { return .cmdline(value) }
        return nil
    }

    /// The decimal at `start` of `path` and the index after it; `nil` when there are no digits
    /// or the number passes Int.max (no pid the kernel could have given).
    private static func leadingPID(_ path: UnsafeBufferPointer<UInt8>, from start: Int) -> (Int, Int)? {
        var value = 0
        var index = start
        while index < path.count, path[index] >= 48, path[index] <= 57 {
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(Int(path[index] - 48))
            guard !overflow, !carry else { return nil }
            value = sum
            index += 1
        }
        return index > start ? (value, index) : nil
    }

    /// `/proc/PID/cmdline` (arguments each ended by NUL) as `ps args` shows it: arguments
    /// joined by spaces, newlines shown as spaces; nil when empty (kernel threads, zombies).
    static func commandLine(_ raw: String) -> String? {
        var bytes = Array(raw.utf8)
        for index in bytes.indices where bytes[index] == 0 || bytes[index] == UInt8(ascii: "\n") {
            bytes[index] = UInt8(ascii: " ")
        }
        while bytes.last == UInt8(ascii: " ") { bytes.removeLast() }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }
}

/// One read of the kernel's counters.
public struct LinuxCounterSample: Sendable, Equatable {
    /// `/proc/uptime`: the host's own clock for the interval between two samples.
    public var uptimeSeconds: Double
    public var cpu: CPUCounters
    public var network: [NetworkInterfaceStats] = []
    public var disks: [DiskIOCounters] = []
    public var processes: [ProcessSample] = []
    /// The processes' ticks alone, once ``keepForNextSample()`` dropped the rest.
    public private(set) var processTicks: ProcessTickTable?

    public init(
        uptimeSeconds: Double, cpu: CPUCounters, network: [NetworkInterfaceStats] = [], disks: [DiskIOCounters] = [],
        processes: [ProcessSample] = []
    ) {
        self.uptimeSeconds = uptimeSeconds
        self.cpu = cpu
        self.network = network
        self.disks = disks
        self.processes = processes
    }

    /// The ticks of every process, for the CPU shares of a later sample.
    public var tickTable: ProcessTickTable { processTicks ?? ProcessTickTable(processes) }

    /// Keeps only what the next sample's deltas need: the processes become a ``ProcessTickTable``.
    public mutating func keepForNextSample() {
        processTicks = tickTable
        processes = []
    }
}

/// Everything one run of the probe yielded.
public struct LinuxProbeResult: Sendable {
    /// One or two counter samples, oldest first.
    public var samples: [LinuxCounterSample] = []
    public var memory: MemoryStats?
    public var load: LoadAverage?
    public var disks: [DiskStats]?
    /// Owners, resident sizes and command lines by pid, when the probe read them (a one-off snapshot).
    public var processTable: [ProcessStats]?
    /// The host's page size, for resident sizes counted in pages.
    public var pageSize: UInt64 = 4096
    /// The probe's own shell; it and its children are left out of the process list.
    public var probePID: Int?
    /// The figures of node_exporter's other collectors, from the last sample.
    public var node: NodeFigures?
    public var warnings: [String] = []
}
