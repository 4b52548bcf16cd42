#!/usr/bin/env python3
"""An SSH server on loopback that puts terminal escape sequences wherever a server chooses the
text, for testing that hostscope never lets them reach the terminal. Built on asyncssh.

It binds 127.0.0.1 on the given port (0 meaning a free one) with a fresh ed25519 host key and
prints one JSON line on stdout when it is ready:

    {"event": "listening", "host": "127.0.0.1", "port": 40123, "hostile": "\\u001b]52;c;…"}

Modes:

    --mode kbdint   only keyboard-interactive authentication, whose one prompt (shown, not
                    hidden, so no password answers it) carries the hostile text; every answer
                    is refused.
    --mode sftp     password authentication (the password is --password) and an SFTP server
                    over a fresh directory holding notes.txt (6 bytes, mode 0644, modified
                    2024-05-06T07:08:09Z), whose long listing gives the hostile text as owner
                    and group.

The hostile text is an OSC 52 clipboard write, an OSC 0 title and ESC[2J (clear screen); the
owner and group are its halves, without spaces, as a long listing's fields are.

Options: --port N, --mode kbdint|sftp, --password TEXT, --exit-on-stdin-eof (stop when the
parent process goes away).
"""

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import threading

import asyncssh

from test_server_common import exit_on_signals, watch_stdin

CLIPBOARD = "\x1b]52;c;aG9zdGlsZQ==\x07"  # OSC 52: set the clipboard to "hostile"
TITLE = "\x1b]0;owned\x07"  # OSC 0: set the window title
CLEAR = "\x1b[2J"  # erase the whole screen
PROMPT = CLIPBOARD + TITLE + CLEAR + "Verification code: "
OWNER = CLIPBOARD + "root"
GROUP = TITLE + CLEAR + "staff"
MTIME = 1714979289  # 2024-05-06T07:08:09Z


class HostileServer(asyncssh.SSHServer):
    def __init__(self, mode, password):
        self.mode = mode
        self.password = password

    def begin_auth(self, username):
        return True

    def password_auth_supported(self):
        return self.mode == "sftp"

    def validate_password(self, username, password):
        return password == self.password

    def kbdint_auth_supported(self):
        return self.mode == "kbdint"

    def get_kbdint_challenge(self, username, lang, submethods):
        # (name, instruction, language, [(prompt, echo)]): shown text, so no password fits it.
        return "", "", "", [(PROMPT, True)]

    def validate_kbdint_response(self, username, responses):
        return False


class HostileSFTPServer(asyncssh.SFTPServer):
    def format_user(self, uid):
        return OWNER

    def format_group(self, gid):
        return GROUP


async def serve(arguments, root):
    key = asyncssh.generate_private_key("ssh-ed25519")
    server = await asyncssh.create_server(
        lambda: HostileServer(arguments.mode, arguments.password),
        "127.0.0.1",
        arguments.port,
        server_host_keys=[key],
        sftp_factory=(lambda channel: HostileSFTPServer(channel, chroot=root)) if arguments.mode == "sftp" else None,
        allow_scp=False,
    )
    port = server.sockets[0].getsockname()[1]
    print(json.dumps({"event": "listening", "host": "127.0.0.1", "port": port, "hostile": PROMPT}), flush=True)
    await asyncio.Event().wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--mode", choices=["kbdint", "sftp"], required=True)
    parser.add_argument("--password", default="hostile-test-password")
    parser.add_argument("--exit-on-stdin-eof", action="store_true")
    arguments = parser.parse_args()
    exit_on_signals()
    if arguments.exit_on_stdin_eof:
        threading.Thread(target=watch_stdin, daemon=True).start()
    root = tempfile.mkdtemp(prefix="hostscope-hostile-sftp-")
    try:
        notes = os.path.join(root, "notes.txt")
        with open(notes, "w") as file:
            file.write("hello\n")
        os.chmod(notes, 0o644)
        os.utime(notes, (MTIME, MTIME))
        asyncio.run(serve(arguments, root))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
