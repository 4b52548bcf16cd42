#!/usr/bin/env bash
# Starts and stops a real OpenSSH server on loopback for hostscope's tests and benchmarks.
#
#   Scripts/sshd-harness.sh start DIR [PORT]   start sshd (and an ssh-agent); write DIR/env
#   Scripts/sshd-harness.sh stop DIR           stop both by pid
#   Scripts/sshd-harness.sh stop-sshd DIR      stop sshd and every connection it serves, keep its files
#   Scripts/sshd-harness.sh resume-sshd DIR    start that sshd again (same port and host key)
#   Scripts/sshd-harness.sh start-netns DIR NS ADDRESS PORT BASE
#                                              start sshd inside network namespace NS (root only),
#                                              on every address there, port PORT, for the user and
#                                              keys of the started harness in BASE; clients reach it
#                                              as ADDRESS. DIR gets its own host key, env and
#                                              known_hosts; `stop DIR` stops it.
#
# What a started harness gives (all paths inside DIR, listed in DIR/env as shell assignments):
#   - sshd on 127.0.0.1:PORT with a fresh ed25519 host key, internal-sftp, MaxSessions 128,
#     password and public-key auth, logs in DIR/sshd.log
#   - a dedicated test user (hostscope-test when run as root, else the current user) whose
#     shell start-up is cheap (/bin/sh, empty .profile and .bashrc)
#   - client keys: id_ed25519 (no passphrase), id_ed25519_pass (passphrase in
#     passphrase.txt), id_ecdsa, id_rsa — all authorized
#   - known_hosts holding the server's key for [127.0.0.1]:PORT
#   - an ssh-agent on DIR/agent.sock holding id_ed25519
#   - the user's password in password.txt (root only: a non-root sshd cannot check passwords)
#   - root only, when tcsh is installed: a second user, hostscope-tcsh, whose login shell is tcsh
#     and who takes the same keys
#   - root only: a second sshd on KBDINT_PORT that takes the password only through
#     keyboard-interactive (PAM), as PAM-only servers, macOS and the BSDs do
set -euo pipefail

command=${1:-}
dir=${2:-}
usage="usage: $0 start|stop|stop-sshd|resume-sshd DIR [PORT] | start-netns DIR NS ADDRESS PORT BASE"
if [[ -z "$command" || -z "$dir" ]]; then
    echo "$usage" >&2
    exit 2
fi

stop() {
    local pidfile
    for pidfile in "$dir/sshd.pid" "$dir/sshd-kbdint.pid" "$dir/agent.pid"; do
        if [[ -f "$pidfile" ]]; then
            kill "$(cat "$pidfile")" 2>/dev/null || true
            rm -f "$pidfile"
        fi
    done
}

# Waits up to 5 s for the sshd writing pid file $1 to accept connections on port $2.
wait_listening() {
    for _ in $(seq 1 100); do
        if [[ -s "$1" ]] && (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null; then return 0; fi
        sleep 0.05
    done
    return 1
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

if [[ "$command" == stop ]]; then
    stop
    exit 0
fi
if [[ "$command" == stop-sshd ]]; then
    if [[ -f "$dir/sshd.pid" ]]; then
        listener=$(cat "$dir/sshd.pid")
        # The per-connection processes are the listener's descendants (monitor, session
        # process, the user's shells): end them all, as a host going down would. A session
        # process whose monitor alone died would go on serving its connection.
        descendants() {
            local child
            for child in $(pgrep -P "$1" 2>/dev/null); do
                echo "$child"
                descendants "$child"
            done
        }
        victims=$(descendants "$listener")
        kill -KILL "$listener" $victims 2>/dev/null || true
        rm -f "$dir/sshd.pid"
    fi
    exit 0
fi
if [[ "$command" == resume-sshd ]]; then
    sshd_bin=$(command -v sshd || echo /usr/sbin/sshd)
    "$sshd_bin" -f "$dir/sshd_config" -E "$dir/sshd.log"
    port=$(awk '/^Port /{print $2}' "$dir/sshd_config")
    wait_listening "$dir/sshd.pid" "$port" && exit 0
    echo "sshd did not start again; see $dir/sshd.log" >&2
    exit 1
fi
if [[ "$command" == start-netns ]]; then
    namespace=${3:-}
    address=${4:-}
    port=${5:-}
    base=${6:-}
    if [[ -z "$namespace" || -z "$address" || -z "$port" || ! -f "$base/env" ]]; then
        echo "$usage" >&2
        exit 2
    fi
    sshd_bin=$(command -v sshd || echo /usr/sbin/sshd)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    base=$(cd "$base" && pwd)
    stop
    chmod 755 "$dir"
    rm -f "$dir"/ssh_host_ed25519_key*
    ssh-keygen -q -t ed25519 -N '' -C "hostscope-test-$namespace-$port" -f "$dir/ssh_host_ed25519_key"
    # The base harness's client keys and user work here too: the namespace shares the file system.
    for key in id_ed25519 id_ed25519_pass id_ecdsa id_rsa passphrase.txt password.txt; do
        [[ -e "$base/$key" ]] && ln -sf "$base/$key" "$dir/$key"
    done
    sed -e "s/^Port .*/Port $port/" -e "s/^ListenAddress .*/ListenAddress 0.0.0.0/" \
        -e "s|^HostKey .*|HostKey $dir/ssh_host_ed25519_key|" -e "s|^PidFile .*|PidFile $dir/sshd.pid|" \
        "$base/sshd_config" >"$dir/sshd_config"
    ip netns exec "$namespace" "$sshd_bin" -f "$dir/sshd_config" -E "$dir/sshd.log"
    listening=no
    for _ in $(seq 1 100); do
        if [[ -s "$dir/sshd.pid" ]] &&
            ip netns exec "$namespace" bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null; then
            listening=yes
            break
        fi
        sleep 0.05
    done
    if [[ $listening == no ]]; then
        echo "sshd did not start in $namespace; see $dir/sshd.log" >&2
        exit 1
    fi
    name=$address
    [[ $port == 22 ]] || name="[$address]:$port"
    echo "$name $(cut -d' ' -f1-2 "$dir/ssh_host_ed25519_key.pub")" >"$dir/known_hosts"
    sed -e "s|^HOSTSCOPE_TEST_SSH_DIR=.*|HOSTSCOPE_TEST_SSH_DIR=$dir|" \
        -e "s|^HOSTSCOPE_TEST_SSH_HOST=.*|HOSTSCOPE_TEST_SSH_HOST=$address|" \
        -e "s|^HOSTSCOPE_TEST_SSH_PORT=.*|HOSTSCOPE_TEST_SSH_PORT=$port|" \
        -e "s|^HOSTSCOPE_TEST_SSH_KBDINT_PORT=.*|HOSTSCOPE_TEST_SSH_KBDINT_PORT=|" "$base/env" >"$dir/env"
    exit 0
fi
if [[ "$command" != start ]]; then
    echo "$usage" >&2
    exit 2
fi

sshd_bin=$(command -v sshd || echo /usr/sbin/sshd)
if [[ ! -x "$sshd_bin" ]]; then
    echo "sshd is not installed: run 'apt-get install openssh-server' (Scripts/setup.sh --tests does)." >&2
    exit 1
fi

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
stop
port=${3:-$(free_port)}

if [[ $(id -u) -eq 0 ]]; then
    user=hostscope-test
    created=no
    if ! id "$user" >/dev/null 2>&1; then
        useradd --create-home --shell /bin/sh "$user"
        created=yes
    fi
    home=$(getent passwd "$user" | cut -d: -f6)
    : >"$home/.profile"
    : >"$home/.bashrc"
    chown "$user:" "$home/.profile" "$home/.bashrc"
    # The harness directory must be readable by sshd's privilege-separated child for the
    # authorized keys file; keys themselves stay private to root.
    chmod 755 "$dir"
    mkdir -p /run/sshd
    # One password per machine, kept where only root reads it: harnesses started at the same
    # time (several test runs) must not reset each other's password.
    secret=/etc/hostscope-test/password
    if [[ ! -s "$secret" ]]; then
        mkdir -p -m 700 /etc/hostscope-test
        (umask 077 && head -c 18 /dev/urandom | base64 | tr -d '/+=\n' >"$secret")
        created=yes
    fi
    if [[ $created == yes ]]; then
        echo "$user:$(cat "$secret")" | chpasswd
    fi
    (umask 077 && tr -d '\n' <"$secret" >"$dir/password.txt")
    password_auth=yes
    # A second user whose login shell is tcsh (when installed): hosts where csh is the login
    # shell take only csh syntax in exec requests.
    tcsh_user=""
    if command -v tcsh >/dev/null 2>&1; then
        tcsh_user=hostscope-tcsh
        # `*`: no password, yet not locked (sshd refuses locked accounts even for keys).
        id "$tcsh_user" >/dev/null 2>&1 || useradd --create-home --password '*' --shell "$(command -v tcsh)" "$tcsh_user"
        tcsh_home=$(getent passwd "$tcsh_user" | cut -d: -f6)
        : >"$tcsh_home/.tcshrc"
        chown "$tcsh_user:" "$tcsh_home/.tcshrc"
    fi
else
    user=$(id -un)
    home=$HOME
    password_auth=no
    tcsh_user=""
    rm -f "$dir/password.txt"
fi

rm -f "$dir"/ssh_host_ed25519_key* "$dir"/id_ed25519* "$dir"/id_ecdsa* "$dir"/id_rsa*
ssh-keygen -q -t ed25519 -N '' -C hostscope-test-host -f "$dir/ssh_host_ed25519_key"
ssh-keygen -q -t ed25519 -N '' -C hostscope-test -f "$dir/id_ed25519"
passphrase=$(head -c 12 /dev/urandom | base64 | tr -d '/+=')
(umask 077 && printf '%s' "$passphrase" >"$dir/passphrase.txt")
ssh-keygen -q -t ed25519 -N "$passphrase" -C hostscope-test-pass -f "$dir/id_ed25519_pass"
ssh-keygen -q -t ecdsa -b 256 -N '' -C hostscope-test-ecdsa -f "$dir/id_ecdsa"
ssh-keygen -q -t rsa -b 2048 -N '' -C hostscope-test-rsa -f "$dir/id_rsa"
cat "$dir/id_ed25519.pub" "$dir/id_ed25519_pass.pub" "$dir/id_ecdsa.pub" "$dir/id_rsa.pub" >"$dir/authorized_keys"
chmod 644 "$dir/authorized_keys"

cat >"$dir/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $dir/ssh_host_ed25519_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication $password_auth
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin no
AllowUsers $user $tcsh_user
MaxSessions 128
MaxStartups 512
MaxAuthTries 12
LoginGraceTime 30
ClientAliveInterval 0
PrintMotd no
UseDNS no
LogLevel VERBOSE
Subsystem sftp internal-sftp
EOF

"$sshd_bin" -f "$dir/sshd_config" -E "$dir/sshd.log"
if ! wait_listening "$dir/sshd.pid" "$port"; then
    echo "sshd did not start; see $dir/sshd.log" >&2
    exit 1
fi

echo "[127.0.0.1]:$port $(cut -d' ' -f1-2 "$dir/ssh_host_ed25519_key.pub")" >"$dir/known_hosts"

kbdint_port=
if [[ $password_auth == yes && -f /etc/pam.d/sshd ]]; then
    kbdint_port=$(free_port)
    sed -e "s/^Port .*/Port $kbdint_port/" -e "s|^PidFile .*|PidFile $dir/sshd-kbdint.pid|" \
        -e 's/^PasswordAuthentication .*/PasswordAuthentication no/' \
        -e 's/^KbdInteractiveAuthentication .*/KbdInteractiveAuthentication yes/' \
        -e 's/^UsePAM .*/UsePAM yes/' "$dir/sshd_config" >"$dir/sshd_kbdint_config"
    "$sshd_bin" -f "$dir/sshd_kbdint_config" -E "$dir/sshd-kbdint.log"
    if ! wait_listening "$dir/sshd-kbdint.pid" "$kbdint_port"; then
        echo "the keyboard-interactive sshd did not start; see $dir/sshd-kbdint.log" >&2
        exit 1
    fi
    echo "[127.0.0.1]:$kbdint_port $(cut -d' ' -f1-2 "$dir/ssh_host_ed25519_key.pub")" >>"$dir/known_hosts"
fi

rm -f "$dir/agent.sock"
eval "$(ssh-agent -s -a "$dir/agent.sock")" >/dev/null
echo "$SSH_AGENT_PID" >"$dir/agent.pid"
SSH_AUTH_SOCK="$dir/agent.sock" ssh-add -q "$dir/id_ed25519" 2>/dev/null

cat >"$dir/env" <<EOF
HOSTSCOPE_TEST_SSH_DIR=$dir
HOSTSCOPE_TEST_SSH_HOST=127.0.0.1
HOSTSCOPE_TEST_SSH_PORT=$port
HOSTSCOPE_TEST_SSH_USER=$user
HOSTSCOPE_TEST_SSH_HOME=$home
HOSTSCOPE_TEST_SSH_PASSWORD_AUTH=$password_auth
HOSTSCOPE_TEST_SSH_KBDINT_PORT=$kbdint_port
HOSTSCOPE_TEST_SSH_TCSH_USER=$tcsh_user
EOF
echo "sshd listening on 127.0.0.1:$port for user $user (pid $(cat "$dir/sshd.pid")); environment in $dir/env"
