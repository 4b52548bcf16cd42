#!/usr/bin/env bash
# Runs hostscope's whole test suite against real components: it checks the modules' imports against
# docs/architecture.md and the code's format against .swift-format, starts an OpenSSH server and an
# ssh-agent on loopback (Scripts/sshd-harness.sh), runs `swift test`, and stops them.
# Tests that need other servers (OTLP receivers, LLM endpoints) start them themselves.
set -euo pipefail
cd "$(dirname "$0")/.."

# The layering first: a module importing what docs/architecture.md does not allow fails the run.
python3 Scripts/check_imports.py

# The checked-in .swift-format: a file it would change fails the run (`swift format -i -r Sources Tests
# Fuzz Package.swift` fixes them).
swift format lint --strict -r Sources Tests Fuzz Package.swift

harness=$(mktemp -d "${TMPDIR:-/tmp}/hostscope-test-sshd.XXXXXX")
cleanup() {
    bash Scripts/sshd-harness.sh stop "$harness" >/dev/null 2>&1 || true
    rm -rf "$harness"
}
trap cleanup EXIT
bash Scripts/sshd-harness.sh start "$harness" >/dev/null
export HOSTSCOPE_TEST_SSH_DIR="$harness"

swift build --build-tests "$@"
# Tests run one after another within a test process: several check wall-clock bounds (deadlines,
# tick rates) and block threads while they wait for servers, which a 2-core machine running every
# test at once cannot keep. Three such processes run side by side, each on its own part of the suite
# (Scripts/test_jobs.py): most tests wait on servers and processes, so three keep two cores busy.
# HOSTSCOPE_TEST_JOBS=N runs N of them; 1 runs `swift test` serially. HOSTSCOPE_TEST_FILTER, when set,
# keeps the tests whose id matches it (swift build takes no --filter).
jobs=${HOSTSCOPE_TEST_JOBS:-3}
if [[ $jobs -gt 1 ]]; then
    bin_path=$(swift build --show-bin-path "$@")
    python3 Scripts/test_jobs.py --jobs "$jobs" --bundle "$bin_path/hostscopePackageTests.xctest" \
        ${HOSTSCOPE_TEST_FILTER:+--filter "$HOSTSCOPE_TEST_FILTER"}
    exit
fi
filter=()
if [[ -n ${HOSTSCOPE_TEST_FILTER:-} ]]; then
    filter=(--filter "$HOSTSCOPE_TEST_FILTER")
fi
swift test --skip-build --no-parallel "$@" "${filter[@]}"
