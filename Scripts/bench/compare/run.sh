#!/usr/bin/env bash
# Two builds of hostscope side by side in one run: the same snapshot, watch and trace-export workloads
# against one OpenSSH server on loopback (HOSTS aliases of it), the builds taking turns round by round
# (the order swapped every round) so that both meet the same machine. Prints a Markdown table of medians.
#   Scripts/bench/compare/run.sh BASE_BIN [HOSTS] [SECONDS] [ROUNDS]    (default 50 hosts, 60 s, 3 rounds)
# The other build is this tree's release build; NEW_BIN names another binary instead.
#   snapshot   `snapshot 'fleet-*'`: a connection, the probe and its parse per host, spans to a database
#   watch      `watch 'fleet-*' --every 2s --for SECONDS`: records to a file and the history, spans to the
#              database (the tracer's real load)
#   export     `trace export --format otlp` of SPANS stored spans (default 50,000: a snapshot's spans cloned
#              by Scripts/bench/otlp/make_spans.py), through the flat span reader and the OTLP encoder
set -euo pipefail
cd "$(dirname "$0")/../../.."
base=$(realpath "$1")
hosts=${2:-50}
seconds=${3:-60}
rounds=${4:-3}
if [[ -n ${NEW_BIN:-} ]]; then
    new=$(realpath "$NEW_BIN")
else
    swift build -c release --product hostscope >/dev/null
    new=$(realpath .build/release/hostscope)
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/hostscope-bench-compare.XXXXXX")
chmod 755 "$work"
cleanup() {
    bash Scripts/sshd-harness.sh stop "$work/harness" >/dev/null 2>&1 || true
    [[ -n "${KEEP_WORK:-}" ]] || rm -rf "$work"
}
trap cleanup EXIT
measure=Scripts/bench/watch/measure.py

bash Scripts/sshd-harness.sh start "$work/harness" >/dev/null
bash Scripts/bench/alias_config.sh "$hosts" "$work/harness" >"$work/ssh_config"
"$new" snapshot 'fleet-*' -F "$work/ssh_config" -o ndjson --db "$work/template.sqlite" >/dev/null
# The same spans in a file of schema 4 too: a base build from before schema 5 refuses the newer file (one that
# knows schema 5 adds its columns to the older file once, on first open).
python3 Scripts/bench/otlp/make_spans.py "$work/template.sqlite" "$work/spans.sqlite" "${SPANS:-50000}" \
    --schema-4 "$work/spans-base.sqlite"

for round in $(seq 1 "$rounds"); do
    if ((round % 2)); then order="base new"; else order="new base"; fi
    for build in $order; do
        if [[ $build == base ]]; then bin=$base spans=$work/spans-base.sqlite; else bin=$new spans=$work/spans.sqlite; fi
        run="$work/$build-$round"
        python3 $measure "$run-snapshot.json" -- "$bin" snapshot 'fleet-*' -F "$work/ssh_config" -o ndjson \
            --db "$run-snapshot.sqlite" >"$run-snapshot.ndjson"
        python3 $measure "$run-watch.json" -- "$bin" watch 'fleet-*' -F "$work/ssh_config" --every 2s \
            --for "${seconds}s" -o "$run-watch.ndjson" --db "$run-watch.sqlite"
        python3 $measure "$run-export.json" -- "$bin" trace export --format otlp --db "$spans" \
            --output "$run-export.jsonl"
    done
done

python3 - "$work" "$rounds" "$hosts" "$seconds" "$base" "$new" <<'REPORT'
import json, os, statistics, sys
work, rounds, hosts, seconds, base, new = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
def figures(build, kind):
    runs = [json.load(open(f"{work}/{build}-{r}-{kind}.json")) for r in range(1, rounds + 1)]
    for run in runs:
        if run["status"] != 0:
            sys.exit(f"{build} {kind} exited {run['status']}")
    lines = [sum(1 for _ in open(f"{work}/{build}-{r}-{kind}.{'jsonl' if kind == 'export' else 'ndjson'}"))
             for r in range(1, rounds + 1)]
    return (statistics.median(r["wall_s"] for r in runs), statistics.median(r["user_s"] + r["sys_s"] for r in runs),
            statistics.median(r["max_rss_mb"] for r in runs), statistics.median(lines))
print(f"{hosts} hosts, watch for {seconds} s every 2 s, {os.environ.get('SPANS', '50000')} spans exported, {rounds} rounds; medians")
print(f"base: {base}\nnew:  {new}\n")
print("| workload | build | wall (s) | CPU (s) | peak RSS (MiB) | lines out |")
print("|---|---|---:|---:|---:|---:|")
for kind in ["snapshot", "watch", "export"]:
    for build in ["base", "new"]:
        wall, cpu, rss, lines = figures(build, kind)
        print(f"| {kind} | {build} | {wall:.2f} | {cpu:.2f} | {rss:.0f} | {lines:.0f} |")
REPORT
echo
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r)"
