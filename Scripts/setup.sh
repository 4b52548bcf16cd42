#!/usr/bin/env bash
# Installs what hostscope needs on Debian 12 (or Ubuntu).
#
#   Scripts/setup.sh           to build and run it: the C libraries it links (libssh2, libcurl, OpenSSL,
#                              SQLite, zlib, libedit) and procps (the local probe's ps).
#   Scripts/setup.sh --tests   that, and what its tests start and read: OpenSSH server and client,
#                              Prometheus and node_exporter, sysstat, busybox and tcsh (collectors and
#                              login shells), wrk (benchmarks), tmux (the full-screen view), iproute2
#                              (network namespaces), systemd's tools (the unit files), Chromium, its
#                              driver and Node.js (the dashboard's browser and script tests), and the
#                              Python packages of the test servers and receivers (opentelemetry-proto,
#                              rotel, asyncssh, Arize Phoenix, prometheus-client, the MCP client, Selenium).
#   Scripts/setup.sh [--tests] --list   prints the Debian and Python packages it would install, and stops.
#
# Safe to run again; uses sudo when not run as root.
set -euo pipefail

tests=0
list=0
for argument in "$@"; do
    case "$argument" in
    --tests) tests=1 ;;
    --list) list=1 ;;
    *)
        echo "setup.sh: unknown argument $argument; use --tests and/or --list" >&2
        exit 64
        ;;
    esac
done

packages=(libssh2-1-dev libcurl4-openssl-dev libssl-dev libsqlite3-dev zlib1g-dev libedit-dev procps)
python_packages=()
if ((tests)); then
    packages+=(
        openssh-server openssh-client sysstat busybox tcsh python3 python3-pip iproute2 tmux systemd
        prometheus prometheus-node-exporter prometheus-alertmanager wrk chromium chromium-driver nodejs
    )
    # arize-phoenix is large (a few minutes to install): the Phoenix tests skip, saying why, where it is missing.
    python_packages=(opentelemetry-proto protobuf rotel asyncssh arize-phoenix prometheus-client mcp selenium jsonschema pyyaml)
fi

if ((list)); then
    printf 'debian %s\n' "${packages[@]}"
    ((${#python_packages[@]})) && printf 'python %s\n' "${python_packages[@]}"
    exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then
    sudo="sudo"
fi

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# Debian's sshd package starts a system daemon on port 22; the tests start their own. Likewise
# prometheus, prometheus-node-exporter and prometheus-alertmanager: the serve and alert tests and benchmarks start their own on
# loopback ports with temporary configurations.

if ((${#python_packages[@]})) &&
    ! python3 -c 'import opentelemetry.proto, google.protobuf, rotel, asyncssh, phoenix, prometheus_client, mcp, jsonschema, selenium, yaml' 2>/dev/null; then
    pip_flags=(--quiet --disable-pip-version-check --root-user-action=ignore)
    if python3 -m pip install --help 2>/dev/null | grep -q -- --break-system-packages; then
        pip_flags+=(--break-system-packages)
    fi
    python3 -m pip install "${pip_flags[@]}" "${python_packages[@]}" >/dev/null
fi
if ((tests)); then
    echo "hostscope set-up complete (with what the tests need)"
else
    echo "hostscope set-up complete (to build and run it; Scripts/setup.sh --tests adds what the tests need)"
fi
