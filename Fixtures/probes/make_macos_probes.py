#!/usr/bin/env python3
"""Builds the macOS probe fixtures from the public macOS captures in Fixtures/public.

No macOS host is available to record the probe's output, so each fixture is the output the
probe script would print, assembled from published captures. Every section is either copied
verbatim from a capture, re-laid out from one (same values, the probe's column set), or
written here; the functions below say which, and README.md sums it up. Run from anywhere:

    python3 Fixtures/probes/make_macos_probes.py
"""

import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
PUBLIC = os.path.join(HERE, "..", "public")
MARK = "@@NONCE:"


def public(path):
    with open(os.path.join(PUBLIC, path), encoding="utf-8") as handle:
        return handle.read()


def lines(path):
    return public(path).rstrip("\n").split("\n")


def probe(sections):
    """The probe's stdout: each section after its marker line, then the end marker."""
    out = []
    for name, text in sections:
        out.append(MARK + name)
        if text:
            out.append(text.rstrip("\n"))
    out.append(MARK + "end")
    return "\n".join(out) + "\n"


def detection(uname, product, version, build, page_size):
    """The detection script's stdout on macOS: no os-release, `uname -snrm`, `sw_vers` (format
    of its man page: `Key:<TAB>value`), BSD ps (setuid root; `ps --help` is refused), no
    sysstat, `getconf PAGESIZE`, and the head of macOS's /etc/passwd (directory-service users are
    not in it). Written here."""
    return "\n".join(
        [
            "@@os",
            uname,
            "@@sw_vers",
            f"ProductName:\t{product}",
            f"ProductVersion:\t{version}",
            f"BuildVersion:\t{build}",
            "@@ps",
            "/bin/ps",
            "-rwsr-xr-x  1 root  wheel  51200 Jul 15  2019 /bin/ps",
            "ps: illegal option -- -",
            "@@sysstat",
            "@@pagesize",
            str(page_size),
            "@@passwd",
            "##",
            "# User Database",
            "# ",
            "nobody:*:-2:-2:Unprivileged User:/var/empty:/usr/bin/false",
            "root:*:0:0:System Administrator:/var/root:/bin/sh",
            "daemon:*:1:1:System Services:/var/root:/usr/bin/false",
            "@@end",
            "",
        ]
    )


def top_two_samples(cpu_second, timestamp_second):
    """`top -l 2 -n 0 -s 1`: the summary of macos-10.14.6/top_l1_o_mem_n5_stats.txt verbatim as
    the first sample (its process rows dropped, as -n 0 prints none; whether -n 0 still prints
    the header line is not known from the captures, so it is left out). The second sample
    repeats the summary with the timestamp and `CPU usage:` line written here."""
    first = lines("macos-10.14.6/top_l1_o_mem_n5_stats.txt")[:10]
    second = list(first)
    second[1] = timestamp_second
    second[3] = cpu_second
    return "\n".join(first + [""] + second + [""])


def df_kP():
    """`df -kP`: macos-10.14.6/df.txt re-laid out: POSIX columns without inodes, 512-byte
    blocks halved with BSD df's truncating division."""
    rows = ["Filesystem                                             1024-blocks       Used  Available Capacity  Mounted on"]
    for line in lines("macos-10.14.6/df.txt")[1:]:
        head, mount = line.split("   /", 1) if "   /" in line else (line, "")
        fields = head.split()
        # source (may hold a space), 512-blocks, used, available, capacity, iused, ifree, %iused
        numbers = fields[-7:]
        source = " ".join(fields[:-7])
        blocks, used, available = (int(value) // 2 for value in numbers[:3])
        rows.append(f"{source:<54} {blocks:>11} {used:>10} {available:>10} {numbers[3]:>8}   /{mount}")
    return "\n".join(rows)


def ps_rows(self_pid, shell):
    """`ps -A -o pid,ppid,user,%cpu,%mem,rss,command`: the rows of macos-10.14.6/ps_axu_head.txt
    re-laid out (PID, USER, %CPU, %MEM, RSS and COMMAND as captured). `ps aux` has no PPID: it is
    written here as 1 (launchd, the parent of daemons and apps) and 608 for the login shell.
    The probe's own shell and its `ps` are added, as ps lists them."""
    out = ["  PID  PPID USER               %CPU %MEM      RSS COMMAND"]
    for line in lines("macos-10.14.6/ps_axu_head.txt")[1:]:
        fields = line.split(None, 10)
        user, pid, cpu, mem, rss, command = fields[0], fields[1], fields[2], fields[3], fields[5], fields[10]
        ppid = "608" if command == "-bash" else "1"
        out.append(f"{pid:>5} {ppid:>5} {user:<16} {cpu:>6} {mem:>4} {rss:>8} {command}")
    out.append(f"{self_pid:>5} {self_pid - 1:>5} {'kbrazil':<16} {'0.0':>6} {'0.0':>4} {'1204':>8} {shell}")
    out.append(
        f"{self_pid + 9:>5} {self_pid:>5} {'root':<16} {'0.0':>6} {'0.0':>4} {'1032':>8} "
        "ps -A -o pid,ppid,user,%cpu,%mem,rss,command"
    )
    return "\n".join(out)


def netstat(path, deltas, extra=()):
    """`netstat -ibn` rows of a capture, with every counter of an interface's rows raised by the
    amounts in `deltas` (written here, to stand for traffic between two reads); `extra` rows are
    appended (written here). Raised figures keep their column's right edge, as netstat aligns
    them."""
    out = []
    for index, line in enumerate(lines(path)):
        fields = line.split()
        if index == 0 or fields[0].rstrip("*") not in deltas:
            out.append(line)
            continue
        ipkts, ibytes, opkts, obytes = deltas[fields[0].rstrip("*")]
        # The last seven fields: Ipkts Ierrs Ibytes Opkts Oerrs Obytes Coll.
        spans = [match.span() for match in re.finditer(r"\S+", line)][-7:]
        raised = [int(line[slice(*spans[0])]) + ipkts, None, int(line[slice(*spans[2])]) + ibytes,
                  int(line[slice(*spans[3])]) + opkts, None, int(line[slice(*spans[5])]) + obytes, None]
        text, edge = line[: spans[0][0]], spans[0][0]
        for (begin, finish), value in zip(spans, raised):
            token = line[begin:finish] if value is None else str(value)
            width = finish - edge
            text += token.rjust(width) if len(token) <= width else " " + token
            edge = finish
        out.append(text)
    out.extend(extra)
    return "\n".join(out)


SHELL = "zsh -c export LC_ALL=C LANG=C; cd / 2>/dev/null; echo @@NONCE:self; echo $$; ..."


def intel():
    """An Intel Mac (4096-byte pages) before the memory compressor: `vm_stat` of
    macos-10.8-era (verbatim) with that machine's `hw.memsize` (the same 16 GiB that
    macos-10.14.6's sysctl states); sysctl, top, df and ps of macos-10.14.6; netstat of the
    macos-10.7-era excerpt (empty lo0 address, `*` marks)."""
    folder = os.path.join(HERE, "macos-intel-composite")
    os.makedirs(folder, exist_ok=True)
    sysctl_lines = {line.split(":")[0]: line for line in lines("macos-10.14.6/sysctl_a_selected.txt")}
    sysctl = "\n".join(
        sysctl_lines[key] for key in ["hw.memsize", "hw.ncpu", "vm.swapusage", "kern.boottime", "vm.loadavg"]
    )
    vm_stat = public("macos-10.8-era/vm_stat_4096.txt")
    df_i = public("macos-10.14.6/df.txt")
    top = top_two_samples("CPU usage: 12.50% user, 8.33% sys, 79.16% idle ", "2020/12/31 04:44:37")
    netstat_before = netstat("macos-10.7-era/netstat_ib_excerpt.txt", {})
    netstat_after = netstat(
        "macos-10.7-era/netstat_ib_excerpt.txt", {"en0": (1630, 1_250_000, 410, 310_000), "lo0": (12, 20_000, 12, 20_000)}
    )
    def gauges(self_pid):
        return [
            ("sysctl", sysctl), ("vm_stat", vm_stat), ("df", df_kP()), ("dfi", df_i),
            ("ps", ps_rows(self_pid, SHELL)),
        ]

    write(folder, "detect.txt", detection("Darwin kbrazil-mac 18.7.0 x86_64", "Mac OS X", "10.14.6", "18G84", 4096))
    write(folder, "snapshot.txt", probe(
        [("self", "4242"), ("clock", "1609389875.912345"), ("netstat", netstat_before), ("top", top),
         ("clock", "1609389877.012345"), ("netstat", netstat_after)] + gauges(4242)
    ))
    # Two watch ticks 5 s apart. utun1 (written here) is re-created between them, so its
    # counters go back and its rates must be null; en0 and lo0 carry on.
    utun_before = ["utun1 1380  <Link#21>                          8861     0    4412040     9012     0     822240     0"]
    utun_after = ["utun1 1380  <Link#21>                            17     0       2240       21     0       1968     0"]
    tick_top = top_two_samples("CPU usage: 3.10% user, 2.02% sys, 94.88% idle ", "2020/12/31 04:44:42")
    write(folder, "tick-1.txt", probe(
        [("self", "4251"), ("top", top), ("clock", "1609389877.012345"),
         ("netstat", netstat("macos-10.7-era/netstat_ib_excerpt.txt", {}, utun_before))] + gauges(4251)
    ))
    write(folder, "tick-2.txt", probe(
        [("self", "4263"), ("top", tick_top), ("clock", "1609389882.013345"),
         ("netstat", netstat(
             "macos-10.7-era/netstat_ib_excerpt.txt",
             {"en0": (8200, 6_000_000, 2100, 1_500_000), "lo0": (60, 100_000, 60, 100_000)}, utun_after))]
        + gauges(4263)
    ))


def apple_silicon():
    """An Apple Silicon Mac (16384-byte pages, memory compressor): `vm_stat` of
    macos-14.4.1-apple-silicon verbatim, and that machine's sysctl lines verbatim where it has
    them (hw.memsize, hw.ncpu, kern.boottime); vm.swapusage and vm.loadavg, absent from that
    capture, are written here in the format of macos-10.14.6's. netstat is the macos-26
    excerpt (widened Name column; its address rows name hosts, as it was run without -n, which
    does not change the <Link#N> rows the probe reads). top, df and ps as for the Intel
    fixture."""
    folder = os.path.join(HERE, "macos-14.4.1-apple-silicon")
    os.makedirs(folder, exist_ok=True)
    sysctl_lines = {line.split(":")[0]: line for line in lines("macos-14.4.1-apple-silicon/sysctl_selected.txt")}
    sysctl = "\n".join(
        [sysctl_lines["hw.memsize"], sysctl_lines["hw.ncpu"],
         "vm.swapusage: total = 2048.00M  used = 1085.75M  free = 962.25M  (encrypted)",
         sysctl_lines["kern.boottime"], "vm.loadavg: { 3.05 2.87 2.66 }"]
    )
    top = top_two_samples("CPU usage: 21.43% user, 9.52% sys, 69.04% idle ", "2020/12/31 04:44:37")
    path = "macos-26/netstat_ib_excerpt.txt"
    write(folder, "detect.txt", detection("Darwin v-mbp.local 23.4.0 arm64", "macOS", "14.4.1", "23E224", 16384))
    write(folder, "snapshot.txt", probe(
        [("self", "4242"), ("clock", "1712001234.500000"), ("netstat", netstat(path, {})), ("top", top),
         ("clock", "1712001235.750000"), ("netstat", netstat(path, {"lo0": (250, 65_536, 250, 65_536)})),
         ("sysctl", sysctl), ("vm_stat", public("macos-14.4.1-apple-silicon/vm_stat.txt")),
         ("df", df_kP()), ("dfi", public("macos-10.14.6/df.txt")), ("ps", ps_rows(4242, SHELL))]
    ))


def write(folder, name, text):
    with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
        handle.write(text)


if __name__ == "__main__":
    intel()
    apple_silicon()
