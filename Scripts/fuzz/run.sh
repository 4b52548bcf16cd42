#!/usr/bin/env bash
# Builds the libFuzzer harnesses of Fuzz/ (with -sanitize=fuzzer,address), seeds their corpora from
# Fixtures/ (Scripts/fuzz/build_corpora.py), and runs each named harness for SECONDS (all when none is
# named). Exits non-zero when any harness crashed, hung, leaked or ran out of memory; the input that
# did is kept under .build-fuzz/artifacts/HARNESS/ (crash-*, timeout-*, leak-*, oom-*).
#
#   Scripts/fuzz/run.sh 10                 # every harness, 10 s each (what CI runs)
#   Scripts/fuzz/run.sh 600 df probe       # two harnesses, 10 minutes each
#   FUZZ_JOBS=2 Scripts/fuzz/run.sh 600    # two harnesses at a time
#
# A harness's corpus grows in .build-fuzz/corpora/HARNESS/ across runs (git-ignored). Logs are in
# .build-fuzz/logs/HARNESS.log; the last "#N ... cov: C ft: F" line gives executions and coverage.
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=${1:-10}
shift || true
work=.build-fuzz
mkdir -p "$work"

# lld, not the default gold: gold gives every instrumented object the same empty coverage-counter
# range, and libFuzzer then runs blind ("no interesting inputs were found").
build_start=$(date +%s)
# Both forms: SwiftPM's --sanitize links libFuzzer's main in place of the executable's, and the
# same flags through -Xswiftc make sure every object is instrumented (a clean build with
# --sanitize alone was left without coverage counters here).
mkdir -p "$work/logs"
if ! swift build --package-path Fuzz --scratch-path "$work/build" -c debug \
    --sanitize fuzzer --sanitize address -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing \
    -Xswiftc -use-ld=lld >"$work/logs/build.log" 2>&1; then
    grep -E 'error:' "$work/logs/build.log" | head -n 20 >&2 || tail -n 20 "$work/logs/build.log" >&2
    echo "the fuzz build failed; the whole log is $work/logs/build.log" >&2
    exit 1
fi
echo "fuzz build: $(($(date +%s) - build_start)) s"
binary="$work/build/debug/HostscopeFuzz"
# A binary without coverage counters fuzzes blind; refuse to run one rather than report a clean run.
# (Output read whole first: `grep -q` leaving early would end the binary by SIGPIPE, failing the pipeline.)
probe_output=$(HOSTSCOPE_FUZZ_HARNESS=json "$binary" -runs=1 2>&1 || true)
if ! grep -q "inline 8-bit counters" <<<"$probe_output"; then
    echo "the fuzz binary has no coverage instrumentation; remove $work/build and run again" >&2
    exit 1
fi

harnesses=("$@")
if ((${#harnesses[@]} == 0)); then
    mapfile -t harnesses < <(HOSTSCOPE_FUZZ_HARNESS=list "$binary")
fi
python3 Scripts/fuzz/build_corpora.py --out "$work/seeds" "${harnesses[@]}"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"

run_one() {
    local harness=$1
    local corpus="$work/corpora/$harness" artifacts="$work/artifacts/$harness" log="$work/logs/$harness.log"
    mkdir -p "$corpus" "$artifacts" "$work/logs"
    HOSTSCOPE_FUZZ_HARNESS=$harness "$binary" "$corpus" "$work/seeds/$harness" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -artifact_prefix="$artifacts/" -print_final_stats=1 >"$log" 2>&1
}

jobs=${FUZZ_JOBS:-1}
failed=()
pids=()
names=()
wait_one() {
    local index=$1
    if ! wait "${pids[$index]}"; then
        failed+=("${names[$index]}")
    fi
    local harness=${names[$index]}
    local last
    last=$(grep -E '^#[0-9]+' "$work/logs/$harness.log" | tail -n 1 || true)
    printf '%-18s %s\n' "$harness" "${last:-no progress line; see $work/logs/$harness.log}"
}
for harness in "${harnesses[@]}"; do
    run_one "$harness" &
    pids+=($!)
    names+=("$harness")
    if ((${#pids[@]} - ${done_count:-0} >= jobs)); then
        wait_one "${done_count:-0}"
        done_count=$((${done_count:-0} + 1))
    fi
done
while ((${done_count:-0} < ${#pids[@]})); do
    wait_one "${done_count:-0}"
    done_count=$((${done_count:-0} + 1))
done

if ((${#failed[@]})); then
    echo "fuzzing failed in: ${failed[*]} (inputs under $work/artifacts/, logs under $work/logs/)"
    exit 1
fi
echo "fuzzing: ${#harnesses[@]} harnesses, ${seconds} s each, no crash, hang or leak"
