"""What the Python peers of the watch benchmark share: the lean tick probe (kernel counters
only, as hostscope's tick reads), the details command for the processes a tick lists, and the
parser that turns the probe's output into snapshot fields (CPU from /proc/stat deltas between
ticks, memory, load, disks, network, the ten busiest processes)."""

import os

# hostscope's sample awk (LinuxProcProbe.sampleAwk): every line after its file's path, each process's
# stat line cut to `PID:(comm) state ppid utime stime starttime rss`.
SAMPLE_AWK = (
    'BEGIN { for (i = 1; i < ARGC; i++) { f = ARGV[i]; if (f == "-") continue; ARGV[i] = ""; '
    'if (f ~ /^\\/proc\\/[0-9]+\\/stat$/) { n = 0; while ((getline < f) > 0) { '
    'if (++n == 1 && match($0, /.*\\) /)) { k = split(substr($0, 1, RLENGTH), x); if (NF >= k + 22) { '
    'print $1 ":" substr($0, length($1) + 2, RLENGTH - length($1) - 1) $(k + 1) " " $(k + 2) " " '
    '$(k + 12) " " $(k + 13) " " $(k + 20) " " $(k + 22); continue } } print f ":" $0 } } '
    'else while ((getline line < f) > 0) print f ":" line; close(f) } '
    'if (ARGV[ARGC - 1] == "-") s = 1; else exit } { print "(standard input):" $0 }'
)

# PEER_PROBE=awk reads the files with hostscope's awk, as hostscope does; the default is
# `grep -aH ''` and whole process lines, as hostscope read them until 2026-11-28.
READER = f"awk '{SAMPLE_AWK}'" if os.environ.get("PEER_PROBE") == "awk" else "grep -aH ''"

PROBE = (
    f"export LC_ALL=C LANG=C; cd / 2>/dev/null; echo @@sample; {READER} /proc/uptime /proc/stat /proc/net/dev "
    "/proc/diskstats /proc/meminfo /proc/loadavg /proc/[0-9]*/stat 2>/dev/null; "
    "echo @@df; df -kPT; echo @@dfi; df -iP; echo @@end"
)


def details_command(pids):
    cmdlines = " ".join(f"/proc/{pid}/cmdline" for pid in pids)
    directories = " ".join(f"/proc/{pid}" for pid in pids)
    return (f"export LC_ALL=C LANG=C; echo @@cmdline; grep -aH '' {cmdlines} 2>/dev/null; "
            f"echo @@owners; ls -ldn {directories} 2>/dev/null; echo @@end")


def parse_details(text):
    commands, owners, section = {}, {}, None
    for line in text.split("\n"):
        if line.startswith("@@"):
            section = line[2:]
        elif section == "cmdline" and line.startswith("/proc/"):
            path, _, content = line.partition(":")
            commands[int(path.split("/")[2])] = content.rstrip("\0").replace("\0", " ")
        elif section == "owners" and line:
            fields = line.split()
            owners[int(fields[-1].rsplit("/", 1)[1])] = fields[2]
    return {pid: (commands.get(pid), user) for pid, user in owners.items()}


def parse(text, previous):
    sections, name = {}, None
    for line in text.split("\n"):
        if line.startswith("@@"):
            name = line[2:]
            sections[name] = []
        elif name:
            sections[name].append(line)
    files = {}
    for line in sections.get("sample", []):
        path, _, content = line.partition(":")
        files.setdefault(path, []).append(content)
    cpu = [int(v) for v in files["/proc/stat"][0].split()[1:]]
    uptime = float(files["/proc/uptime"][0].split()[0])
    meminfo = {l.split(":")[0]: int(l.split()[1]) * 1024 for l in files["/proc/meminfo"]}
    load = [float(v) for v in files["/proc/loadavg"][0].split()[:3]]
    network = {}
    for l in files["/proc/net/dev"][2:]:
        iface, _, rest = l.partition(":")
        values = rest.split()
        network[iface.strip()] = {"rx_bytes": int(values[0]), "tx_bytes": int(values[8])}
    processes = {}
    for path, lines in files.items():
        if path.isdigit():  # the awk's short line: (comm) state ppid utime stime starttime rss
            record = lines[0]
            tail = record[record.rfind(")") + 2:].split()
            processes[int(path)] = (int(tail[2]) + int(tail[3]), int(tail[4]))
        elif path.endswith("/stat") and path != "/proc/stat":
            record = " ".join(lines)
            close = record.rfind(")")
            tail = record[close + 2:].split()
            processes[int(record.split(" ", 1)[0])] = (int(tail[11]) + int(tail[12]), int(tail[19]))
    disks = []
    for l in sections.get("df", [])[1:]:
        parts = l.split()
        if len(parts) >= 7:
            used, available = int(parts[3]) * 1024, int(parts[4]) * 1024
            disks.append({"mount": parts[-1], "size_bytes": int(parts[2]) * 1024, "used_bytes": used,
                          "used_percent": used / (used + available) * 100 if used + available else None})
    snapshot = {"uptime_seconds": uptime, "load": load, "memory": {
        "total_bytes": meminfo["MemTotal"], "used_bytes": meminfo["MemTotal"] - meminfo["MemAvailable"]},
        "disks": disks, "network": network}
    if previous:
        deltas = [b - a for a, b in zip(previous["cpu"], cpu)]
        total = sum(deltas[:8]) or 1
        snapshot["cpu_busy_percent"] = 100 * (total - deltas[3] - deltas[4]) / total
        seconds = uptime - previous["uptime"] or 1
        busiest = sorted(((ticks - previous["processes"].get(pid, (ticks, 0))[0]) / seconds, pid)
                         for pid, (ticks, _) in processes.items())[-10:]
    else:  # no rates yet: the processes with the most CPU time so far
        busiest = sorted((ticks, pid) for pid, (ticks, _) in processes.items())[-10:]
    snapshot["top_pids"] = [pid for _, pid in busiest]
    return snapshot, {"cpu": cpu, "uptime": uptime, "processes": processes}
