#!/usr/bin/env bash
# Runs hostscope's whole test suite under ThreadSanitizer and under AddressSanitizer, each in its own
# build directory (.build-tsan, .build-asan) so the everyday .build stays as it is.
#
#   Scripts/sanitize.sh              both, thread first
#   Scripts/sanitize.sh thread       one of them (thread or address)
#   HOSTSCOPE_TEST_FILTER='SSHTransportTests|StorageTests' Scripts/sanitize.sh thread   some suites only
#
# Each run is Scripts/test.sh (its sshd harness, build, then the suite) with the sanitizer's flags.
# Reports are written to .build-?san/reports/ (one file per process that reported, the test runner's
# and every hostscope process a test starts), not to stderr, where they would change what the CLI tests
# read. The script ends non-zero when a test failed or any report was written, and prints each distinct
# finding with its first frame in hostscope's own sources, and how often it was reported.
set -euo pipefail
cd "$(dirname "$0")/.."

sanitizers=(thread address)
if (($# > 0)) && [[ $1 == thread || $1 == address ]]; then
    sanitizers=("$1")
    shift
fi

status=0
for sanitizer in "${sanitizers[@]}"; do
    scratch=.build-${sanitizer:0:1}san
    reports=$PWD/$scratch/reports
    rm -rf "$reports"
    mkdir -p "$reports"
    flags=(--scratch-path "$scratch" --sanitize "$sanitizer")
    if [[ $sanitizer == thread ]]; then
        # ValueFormats.Lock over pthread_mutex_t, which ThreadSanitizer sees, instead of Synchronization.Mutex,
        # whose contended path (a futex, in the uninstrumented standard library) it does not.
        flags+=(-Xswiftc -DHOSTSCOPE_TSAN)
    fi
    if [[ $sanitizer == address ]]; then
        # Go on after a report, so one run lists every finding instead of the first.
        flags+=(-Xswiftc -sanitize-recover=address)
    fi
    log=$scratch/hostscope-test.log
    started=$(date +%s)
    # A report does not change a process's exit status (exitcode=0): a CLI test would otherwise fail on a
    # report in the hostscope process it ran, which the report file already counts. Suppressions name
    # dependencies' Synchronization.Mutex-guarded state, which ThreadSanitizer cannot see locked, and one finding of
    # the toolchain's in test code for AddressSanitizer (each file says why, line by line).
    # Leaks are the fuzzers' to find (Scripts/fuzz/run.sh, one input at a time, with the suppressions of
    # Swift's runtime): a test process's caches held until exit would bury real reports here.
    test_status=0
    TSAN_OPTIONS="log_path=$reports/tsan:halt_on_error=0:second_deadlock_stack=1:exitcode=0:suppressions=$PWD/Scripts/tsan-suppressions.txt" \
        ASAN_OPTIONS="log_path=$reports/asan:halt_on_error=0:detect_leaks=0:suppressions=$PWD/Scripts/asan-suppressions.txt" \
        bash Scripts/test.sh "${flags[@]}" "$@" >"$log" 2>&1 || test_status=$?
    count=$(find "$reports" -type f | wc -l)
    echo "$sanitizer: $(($(date +%s) - started)) s, status $test_status, $count report file(s) in $reports (log $log)"
    grep -hE '^(Test run with|✘ Test .* failed|error:)' "$log" | tail -n 20 || true
    for report in "$reports"/*; do
        [[ -f $report ]] || continue
        # The kind of finding and the first frame of its first stack in hostscope's sources, or else in a
        # dependency's (.build-?san/checkouts/*/Sources).
        awk '
            function report(frame) { sub(/^ *#[0-9]+ (0x[0-9a-f]+ )?(in )?/, "", frame); print kind " @ " frame; kind = "" }
            /^(WARNING|ERROR): .*Sanitizer/ { kind = $0; sub(/ \(pid=[0-9]+\)/, "", kind); dependency = ""; next }
            kind != "" && /\/Sources\// && !/\/checkouts\// { report($0); next }
            kind != "" && /\/Sources\// && dependency == "" { dependency = $0; next }
            kind != "" && dependency != "" && /^ *$/ { report(dependency) }
        ' "$report"
    done | sed -E 's/ +/ /g' | sort | uniq -c | sort -rn
    if ((test_status != 0 || count > 0)); then
        status=1
    fi
done
exit $status
