#!/bin/sh
# Tool captures, written beside this script wherever it is run from. Each file is the stdout of
# the command named in MANIFEST.md.
set -u
cd "$(dirname "$0")"
export LC_ALL=C
# Process rows of unrelated jobs on the capture machine (compilers and their long argument
# lists) are dropped; every row kept is verbatim.
# Machine-specific names (its init process, one tmpfs mount) are renamed by the sed script in
# $SCRUB, to neutral names of the same length where they sit inside aligned columns.
scrub() { if [ -n "${SCRUB:-}" ]; then sed -e "$SCRUB"; else cat; fi; }
unrelated() { grep -v -e '/work/' -e 'swift' -e '/tmp/' -e '/root/' | scrub; }
# Keeps each top frame's summary and its first five process rows.
five_rows() { awk '/^top -|^Mem:/{rows=-1} rows>=0 && rows<5 {print; rows++; next} /^ *PID /{rows=0} rows==-1 || /^ *PID /{print}'; }
mpstat -P ALL 1 1 > mpstat_P_ALL_1_1.txt
mpstat -o JSON 1 2 > mpstat_o_JSON_1_2.txt
S_TIME_FORMAT=ISO mpstat 1 2 > mpstat_1_2_iso.txt
{ cat /proc/stat; mpstat -P ALL 2 1; cat /proc/stat; } > proc_stat_around_mpstat.txt
free -b > free_b.txt
free -w -k > free_w_k.txt
{ free -k; echo "--- /proc/meminfo"; cat /proc/meminfo; } > free_k_and_proc_meminfo.txt
busybox free > busybox_free.txt
df -kP | scrub > df_kP.txt
df -hT | scrub > df_hT.txt
{ df -kP; df -iP; } | scrub > df_kP_and_iP.txt
{ df -PT -B1; echo "--- busybox df"; busybox df; } | scrub > df_PT_B1_and_busybox_df.txt
busybox df | scrub > busybox_df.txt
busybox df -h | scrub > busybox_df_h.txt
# GNU df --output tables in orders and selections of their own; the two tmpfs mounts with spaces
# (`source with space` on `/mnt/dir with space`, `データ src` on `/mnt/データ ünï`) must exist.
df --output | scrub > df_output.txt
df --output=target,size,used,avail,source,fstype | scrub > df_output_target_first.txt
df -h --output=source,target,pcent,size,fstype,used | scrub > df_h_output_source_target.txt
df -B1 --output=size,itotal,iused,iavail,used,avail,target | scrub > df_B1_output_sizes_first.txt
df --output=file,target,source '/mnt/dir with space' '/mnt/データ ünï' / | scrub > df_output_file_target_source.txt
ps -eo pid,ppid,user,pcpu,pmem,rss,vsz,stat,comm,args --sort=-pcpu | unrelated | head -20 > ps_eo_wide.txt
ps -eo pid,ppid,pcpu,pmem,rss,args | unrelated > ps_eo_all.txt
busybox ps | unrelated > busybox_ps.txt
busybox ps -o pid,ppid,user,vsz,rss,stat,comm,args | unrelated > busybox_ps_o.txt
iostat -dxk 1 2 > iostat_dxk_1_2.txt
iostat -x 1 2 > iostat_x_1_2.txt
iostat -dk 1 2 > iostat_dk_1_2.txt
top -b -n 1 | unrelated | head -20 > top_b_n1.txt
top -b -n 2 -d 1 | unrelated | five_rows > top_b_n2_d1.txt
busybox top -b -n 1 | unrelated | head -20 > busybox_top_b_n1.txt
uptime > uptime.txt
busybox uptime > busybox_uptime.txt
ip -s link > ip_s_link.txt
{ ip -s link; echo "--- /proc/net/dev"; cat /proc/net/dev; } > ip_s_link_and_proc_net_dev.txt
