#!/usr/bin/env bash
# Installs what hostscope needs to build and test on Debian 12 (or Ubuntu): the C libraries it
# links (libssh2, libcurl, SQLite, zlib, libedit), the real servers its tests start (OpenSSH server and client,
# Prometheus, node_exporter), the tools its collectors and benchmarks read (sysstat, busybox, wrk),
# tmux for the tests that drive the full-screen view through a pseudo-terminal, iproute2 for the
# network namespaces of the bastion tests, and the Python packages of its test servers and receivers
# (opentelemetry-proto, the rotel collector, Arize Phoenix, prometheus-client).
# Safe to run again; uses sudo when not run as root.
set -euo pipefail

sudo=""
if [[ $(id -u) -ne 0 ]]; then
    sudo="sudo"
fi

packages=(
    libssh2-1-dev libcurl4-openssl-dev libssl-dev libsqlite3-dev zlib1g-dev libedit-dev
    openssh-server openssh-client sysstat busybox procps tcsh python3 python3-pip iproute2 tmux
    prometheus prometheus-node-exporter wrk
)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# Debian's sshd package starts a system daemon on port 22; the tests start their own. Likewise
# prometheus and prometheus-node-exporter: the serve tests and benchmarks start their own on
# loopback ports with temporary configurations.

# arize-phoenix is large (a few minutes to install): the Phoenix tests skip, saying why, where it is missing.
python_packages=(opentelemetry-proto protobuf rotel asyncssh arize-phoenix prometheus-client mcp)
if ! python3 -c 'import opentelemetry.proto, google.protobuf, rotel, asyncssh, phoenix, prometheus_client, mcp, jsonschema' 2>/dev/null; then
    pip_flags=(--quiet --disable-pip-version-check --root-user-action=ignore)
    if python3 -m pip install --help 2>/dev/null | grep -q -- --break-system-packages; then
        pip_flags+=(--break-system-packages)
    fi
    python3 -m pip install "${pip_flags[@]}" "${python_packages[@]}" >/dev/null
fi
echo "hostscope set-up complete"
