#!/usr/bin/env bash
# Prints an ssh_config naming HOSTS aliases fleet-000 … of the one loopback OpenSSH server started by
# Scripts/sshd-harness.sh in HARNESS_DIR: a fleet that costs one sshd.
#   Scripts/bench/alias_config.sh HOSTS HARNESS_DIR > ssh_config
set -euo pipefail
hosts=${1:?usage: $0 HOSTS HARNESS_DIR}
harness=${2:?usage: $0 HOSTS HARNESS_DIR}
source "$harness/env"
for index in $(seq 0 $((hosts - 1))); do
    cat <<CONFIG
Host $(printf 'fleet-%03d' "$index")
    HostName 127.0.0.1
    Port $HOSTSCOPE_TEST_SSH_PORT
    User $HOSTSCOPE_TEST_SSH_USER
    IdentityFile $harness/id_ed25519
    IdentitiesOnly yes
    UserKnownHostsFile $harness/known_hosts
CONFIG
done
