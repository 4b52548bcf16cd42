#!/bin/sh
# Kernel-file captures, written beside this script wherever it is run from. Two helper processes
# give /proc/PID/stat lines whose comm contains spaces and ") R 1 (".
set -u
cd "$(dirname "$0")"
bash -c 'printf "evil) R 1 (x" > /proc/$$/comm; while :; do sleep 1; done' &
helper1=$!
bash -c 'printf "name with spc" > /proc/$$/comm; while :; do sleep 1; done' &
helper2=$!
sleep 0.5
export LC_ALL=C
cat /proc/uptime > proc_uptime.txt
cat /proc/stat > proc_stat.txt
{ cat /proc/stat; sleep 1; cat /proc/stat; } > proc_stat_2samples.txt
# Machine-specific names are renamed by the sed script in $SCRUB (see capture-tools.sh).
cat /proc/[0-9]*/stat 2>/dev/null | if [ -n "${SCRUB:-}" ]; then sed -e "$SCRUB"; else cat; fi > proc_pid_stat_all.txt
{ cat /etc/os-release; uname -snrm; } > os_release_uname_snrm.txt
cat /proc/diskstats > proc_diskstats.txt
cat /proc/net/dev > proc_net_dev.txt
cat /proc/loadavg > proc_loadavg.txt
cat /proc/meminfo > proc_meminfo.txt
kill "$helper1" "$helper2"
