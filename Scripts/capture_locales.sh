#!/usr/bin/env bash
# Captures df, free, mpstat, iostat, top and uptime under every UTF-8 locale whose language has a
# translation of procps, coreutils or sysstat on this machine (Debian's locales-all provides the
# locales), plus the C locale, into Fixtures/locales/LOCALE/NAME.txt. LocaleCaptureTests reads
# every file there: each must parse, or be refused with the sentence naming the C-locale command
# to capture instead, and its figures that do not change between captures (sizes, totals, core
# counts) must equal the C capture's.
#
#   apt-get install locales-all sysstat procps coreutils   # once
#   bash Scripts/capture_locales.sh                          # rewrites Fixtures/locales/
#   HOSTSCOPE_RECORD_GOLDENS=1 swift test --filter LocaleCaptureTests   # then the goldens
#
# top's process list is cut to its first 40 lines: the header and the busiest processes are what
# the parser reads, and the rest would only add this machine's command lines.
set -euo pipefail
cd "$(dirname "$0")/.."
out=Fixtures/locales

# NAME and the command, as the file is named and the command run.
captures=(
    "df-kPT|df -kPT"
    "df-iP|df -iP"
    "df-h|df -h"
    "df-T|df -T"
    "df-output|df --output=source,fstype,itotal,iused,iavail,ipcent,size,used,avail,pcent,file,target"
    "free-b|free -b"
    "free-k|free -k"
    "free-m|free -m"
    "free-h|free -h"
    "free-w|free -w"
    "mpstat-P-ALL|mpstat -P ALL"
    "iostat|iostat"
    "top-b-n1|top -b -n 1"
    "uptime|uptime"
)

languages=$(ls /usr/share/locale/*/LC_MESSAGES/{procps-ng,coreutils,sysstat}.mo 2>/dev/null |
    awk -F/ '{print $5}' | sort -u)
# Folder name (the locale without .utf8) and the name to run it by (the listed UTF-8 one: a bare
# "zh_CN" is GB2312 on Debian, "zh_CN.utf8" is UTF-8).
folders=(C)
run_names=(C)
for locale in $(locale -a); do
    for language in $languages; do
        case $locale in
            "$language" | "$language"_* | "$language".* | "$language"@*)
                if [[ $(LC_ALL=$locale locale charmap 2>/dev/null) == UTF-8 ]]; then
                    folder=${locale/.utf8/}
                    if [[ " ${folders[*]} " != *" $folder "* ]]; then
                        folders+=("$folder")
                        run_names+=("$locale")
                    fi
                fi
                ;;
        esac
    done
done

rm -rf "$out"
for index in "${!folders[@]}"; do
    locale=${folders[$index]}
    name=${run_names[$index]}
    mkdir -p "$out/$locale"
    for capture in "${captures[@]}"; do
        file=${capture%%|*}
        command=${capture#*|}
        if [[ $file == top-* ]]; then
            env -i PATH="$PATH" HOME="$HOME" TERM=dumb LC_ALL="$name" COLUMNS=512 $command 2>/dev/null | head -n 40 >"$out/$locale/$file.txt" || true
        else
            env -i PATH="$PATH" HOME="$HOME" TERM=dumb LC_ALL="$name" $command >"$out/$locale/$file.txt" 2>/dev/null || true
        fi
    done
done
{
    echo "# Captured by Scripts/capture_locales.sh on $(date -u +%Y-%m-%d): $(uname -srm)."
    echo "# $(dpkg-query -W -f='${Package} ${Version}' procps), $(dpkg-query -W -f='${Package} ${Version}' coreutils), $(dpkg-query -W -f='${Package} ${Version}' sysstat)"
    echo "# file	command (run with LC_ALL=the folder's locale; its .utf8 name where Debian lists one)"
    for capture in "${captures[@]}"; do echo "${capture%%|*}.txt	${capture#*|}"; done
} >"$out/commands.tsv"
# A tool that crashed under a locale (procps top under ka_GE) printed nothing: no capture to keep.
find "$out" -type f -size 0 -print -delete
echo "captured ${#folders[@]} locales into $out"
