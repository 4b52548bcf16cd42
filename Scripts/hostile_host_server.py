#!/usr/bin/env python3
"""An SSH and SFTP server on loopback that behaves as a broken or hostile host, for testing that
hostscope stays up, stays within its memory limits, and says what happened. Built on asyncssh.

It binds 127.0.0.1 on the given port (0 meaning a free one) with a fresh ed25519 host key, takes
password authentication (--password), and prints one JSON line on stdout when it is ready:

    {"event": "listening", "host": "127.0.0.1", "port": 40123, "behavior": "forever"}

Exec requests run on this machine with `bash -c`, as a host would run them, except hostscope's
probes (commands holding a `@@NONCE:` section marker), whose output --behavior changes:

    forever         prints lines forever and never exits
    big-line        prints one 100 MB line with no newline, then exits 0
    drip            prints one byte a second and never exits
    binary          the real output with NUL bytes, invalid UTF-8 and ANSI escapes in it
    forged-markers  the real output with section markers of other nonces (a forged end, a forged
                    df section naming the mount /forged) inside the process section
    processes       the real output with enough more processes (names holding spaces and
                    parentheses) to take it past hostscope's 16 MiB output cap: 100,000 whole
                    /proc/PID/stat lines, or 400,000 of the short lines the probe's awk prints
    exit-half       half of the real output, then exit status 1
    no-exit-status  the real output, then the channel closed without an exit status
    plain           the real output, unchanged

Shells are refused, and so is the long-lived `sh` that hostscope starts with exec to run its
probes in, so that each probe arrives as an exec request of its own (hostscope then runs probes
with exec, as it does on a server that forbids shells).

SFTP (always on) serves a fresh directory holding:

    names/          files whose names hold a newline, ESC sequences (colour, OSC 52, title), a
                    carriage return, and invalid UTF-8
    million/        a directory of 1,000,000 entries (made up as they are listed; nothing on disk)
    growing.log     a file whose size grows by 1 MiB each time it is looked at, and which never
                    ends when read
    notes.txt       6 bytes

Options: --port N, --behavior NAME, --password TEXT, --exit-on-stdin-eof (stop when the parent
process goes away).
"""

import argparse
import asyncio
import json
import os
import posixpath
import shutil
import stat
import sys
import tempfile
import threading

import asyncssh

from test_server_common import exit_on_signals, watch_stdin

MILLION = 1_000_000
PROCESSES = 100_000
SHORT_PROCESSES = 400_000
BIG_LINE = 100 * 1000 * 1000
GROWTH = 1 << 20


class Server(asyncssh.SSHServer):
    def __init__(self, password):
        self.password = password

    def begin_auth(self, username):
        return True

    def password_auth_supported(self):
        return True

    def validate_password(self, username, password):
        return password == self.password


def is_probe(command):
    return command is not None and "@@" in command and ":end" in command


def nonce_of(command):
    start = command.index("@@") + 2
    return command[start : command.index(":", start)]


def is_process_line(line):
    """A /proc/PID/stat line as the probe prints it: after its path (grep, or awk for a name with a
    newline) or, cut short by the probe's awk, after its pid."""
    head = line.split(b":", 1)[0]
    return head.isdigit() or (head.startswith(b"/proc/") and head.endswith(b"/stat") and head != b"/proc/stat")


def is_first_process_line(line):
    return line.startswith(b"/proc/1/stat:") or line.startswith(b"1:(")


def hostile_processes(output, nonce):
    """The real output with PROCESSES more /proc/PID/stat lines (SHORT_PROCESSES short ones) in the last
    sample."""
    lines = output.split(b"\n")
    template = next((line for line in lines if is_first_process_line(line)), None)
    if template is None:
        return output
    fields = template.split(b") ", 1)[1]
    short = template.startswith(b"1:")
    extra = [
        (b"%d:(worker (%d) x) %s" % (pid, pid, fields) if short
         else b"/proc/%d/stat:%d (worker (%d) x) %s" % (pid, pid, pid, fields))
        for pid in range(900000, 900000 + (SHORT_PROCESSES if short else PROCESSES))
    ]
    # Into the last sample, before the sections that follow it.
    marker = b"@@" + nonce.encode() + b":"
    last_sample = max(index for index, line in enumerate(lines) if line == marker + b"sample")
    return b"\n".join(lines[: last_sample + 1] + extra + lines[last_sample + 1 :])


def binary_output(output):
    """The real output with NUL, invalid UTF-8 and escapes inside process names and command lines."""
    hostile = b"\x00\xff\xfe\x1b]52;c;aG9zdGlsZQ==\x07\x1b[2J\x9b31m"
    result = []
    for line in output.split(b"\n"):
        if is_process_line(line):
            line = line.replace(b"(", b"(" + hostile, 1)
        elif line.startswith(b"/proc/") and b"/cmdline:" in line:
            line = line + hostile
        result.append(line)
    return b"\n".join(result)


def forged_markers(output, nonce):
    """The real output with markers of other nonces inside the process samples."""
    forged = [b"@@end", b"@@00000000:end", b"@@deadbeef:df",
              b"Filesystem 1024-blocks Used Available Capacity Mounted on",
              b"/dev/forged 100 50 50 50% /forged", b"@@" + nonce.encode()[::-1] + b":end"]
    result = []
    for line in output.split(b"\n"):
        result.append(line)
        if is_first_process_line(line):
            # grep prefixes every line of a file with its path; a process can still print bare lines
            # into its command line, which is what a forged marker would have to ride on.
            result += forged
    return b"\n".join(result)


async def run_locally(command):
    process = await asyncio.create_subprocess_exec(
        "bash", "-c", command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL)
    stdout, stderr = await process.communicate()
    return stdout, stderr, process.returncode


async def handle(process, behavior):
    command = process.command
    if os.environ.get("HOSTILE_DEBUG"):
        print(f"exec: {command!r}", file=sys.stderr, flush=True)
    try:
        if not is_probe(command) or behavior == "plain":
            stdout, stderr, status = await run_locally(command)
            process.stdout.write(stdout)
            process.stderr.write(stderr)
            process.exit(status)
            return
        if behavior == "forever":
            line = b"y" * 1023 + b"\n"
            while True:
                process.stdout.write(line * 64)
                await process.stdout.drain()
        if behavior == "big-line":
            chunk = b"x" * (1 << 20)
            for _ in range(BIG_LINE // len(chunk)):
                process.stdout.write(chunk)
                await process.stdout.drain()
            process.exit(0)
            return
        if behavior == "drip":
            while True:
                process.stdout.write(b".")
                await process.stdout.drain()
                await asyncio.sleep(1)
        stdout, stderr, status = await run_locally(command)
        nonce = nonce_of(command)
        if behavior == "binary":
            stdout = binary_output(stdout)
        elif behavior == "forged-markers":
            stdout = forged_markers(stdout, nonce)
        elif behavior == "processes":
            stdout = hostile_processes(stdout, nonce)
        elif behavior == "exit-half":
            process.stdout.write(stdout[: len(stdout) // 2])
            process.exit(1)
            return
        process.stdout.write(stdout)
        process.stderr.write(stderr)
        await process.stdout.drain()
        if behavior == "no-exit-status":
            process.channel.close()
            return
        process.exit(status)
    except (asyncssh.BreakReceived, asyncssh.TerminalSizeChanged, BrokenPipeError, ConnectionError):
        pass
    except asyncssh.DisconnectError:
        pass


class HostileSFTPServer(asyncssh.SFTPServer):
    """A real directory, plus a made-up million-entry directory and an endless growing file."""

    def __init__(self, channel, root):
        super().__init__(channel, chroot=root.encode())
        self.looks = 0

    @staticmethod
    def _is(path, name):
        # Paths come as the client sent them; the chroot is applied later, by map_path.
        return posixpath.normpath(posixpath.join(b"/", path)) == b"/" + name

    def _growing_attrs(self):
        self.looks += 1
        return asyncssh.SFTPAttrs(
            type=asyncssh.FILEXFER_TYPE_REGULAR, size=GROWTH * self.looks, permissions=stat.S_IFREG | 0o644,
            uid=0, gid=0, atime=0, mtime=0)

    def _million_attrs(self):
        return asyncssh.SFTPAttrs(
            type=asyncssh.FILEXFER_TYPE_DIRECTORY, size=4096, permissions=stat.S_IFDIR | 0o755,
            uid=0, gid=0, atime=0, mtime=0, nlink=2)

    async def scandir(self, path):
        if self._is(path, b"million"):
            file_attrs = asyncssh.SFTPAttrs(
                type=asyncssh.FILEXFER_TYPE_REGULAR, size=1, permissions=stat.S_IFREG | 0o644, uid=0, gid=0,
                atime=0, mtime=0, nlink=1)
            for name in (b".", b".."):
                yield asyncssh.SFTPName(name, attrs=self._million_attrs())
            # The long name is given, as a real server's would be: asyncssh would otherwise format one per
            # entry (a user and group lookup and three strftime calls), which made listing the million
            # entries take 80 s of the server's CPU.
            for index in range(MILLION):
                name = b"entry-%07d" % index
                yield asyncssh.SFTPName(
                    name, longname=b"-rw-r--r--    1 root     root            1 Jan  1  1970 " + name, attrs=file_attrs)
            return
        async for name in super().scandir(path):
            yield name

    def stat(self, path):
        if self._is(path, b"million"):
            return self._million_attrs()
        if self._is(path, b"growing.log"):
            return self._growing_attrs()
        return super().stat(path)

    def lstat(self, path):
        return self.stat(path) if self._is(path, b"million") or self._is(path, b"growing.log") else super().lstat(path)

    def open(self, path, pflags, attrs):
        if self._is(path, b"growing.log"):
            return "growing"
        return super().open(path, pflags, attrs)

    def fstat(self, file_obj):
        if file_obj == "growing":
            return self._growing_attrs()
        return super().fstat(file_obj)

    def read(self, file_obj, offset, size):
        if file_obj == "growing":
            return b"g" * size
        return super().read(file_obj, offset, size)

    def close(self, file_obj):
        if file_obj == "growing":
            return None
        return super().close(file_obj)


def make_root():
    root = tempfile.mkdtemp(prefix="hostscope-hostile-host-")
    with open(os.path.join(root, "notes.txt"), "w") as file:
        file.write("hello\n")
    names = os.path.join(root, "names").encode()
    os.mkdir(names)
    for name in [b"two\nlines", b"\x1b[31mred\x1b[0m", b"\x1b]52;c;aG9zdGlsZQ==\x07clip", b"carriage\rreturn",
                 b"latin1-\xe9t\xe9", b"\x1b]0;owned\x07title"]:
        with open(os.path.join(names, name), "wb") as file:
            file.write(b"x\n")
    os.mkdir(os.path.join(root, "million"))
    with open(os.path.join(root, "growing.log"), "w") as file:
        file.write("")
    return root


async def serve(arguments, root):
    key = asyncssh.generate_private_key("ssh-ed25519")
    # Exec requests run; shells are refused, as on a host that allows no login shell, and so is the
    # long-lived `sh` hostscope would run its probes in, so that each probe is an exec of its own.
    session_class = asyncssh.stream.SSHServerStreamSession
    exec_requested = session_class.exec_requested
    session_class.shell_requested = lambda session: False
    session_class.exec_requested = lambda session, command: (
        command.strip() != "exec sh" and exec_requested(session, command))
    server = await asyncssh.create_server(
        lambda: Server(arguments.password),
        "127.0.0.1",
        arguments.port,
        server_host_keys=[key],
        process_factory=lambda process: handle(process, arguments.behavior),
        encoding=None,
        sftp_factory=lambda channel: HostileSFTPServer(channel, root),
        allow_scp=False,
    )
    port = server.sockets[0].getsockname()[1]
    print(json.dumps({"event": "listening", "host": "127.0.0.1", "port": port, "behavior": arguments.behavior}),
          flush=True)
    await asyncio.Event().wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument(
        "--behavior", default="plain",
        choices=["forever", "big-line", "drip", "binary", "forged-markers", "processes", "exit-half",
                 "no-exit-status", "plain"])
    parser.add_argument("--password", default="hostile-test-password")
    parser.add_argument("--exit-on-stdin-eof", action="store_true")
    arguments = parser.parse_args()
    exit_on_signals()
    if arguments.exit_on_stdin_eof:
        threading.Thread(target=watch_stdin, daemon=True).start()
    root = make_root()
    try:
        asyncio.run(serve(arguments, root))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
