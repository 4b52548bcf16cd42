"""Helpers the loopback test servers share (http_test_server.py, llm_mock_server.py)."""
import os
import select
import signal
import socket
import sys
import time


def client_gone(sock):
    """True when the peer closed its side (readable with no data), without consuming request bytes."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        return sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


def blackhole(host, family):
    """A listening socket whose accept queue is full, so further SYNs are dropped and connects hang."""
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.bind((host, 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(4):
        filler = socket.socket(family, socket.SOCK_STREAM)
        filler.setblocking(False)
        try:
            filler.connect((host, port))
        except BlockingIOError:
            pass
        fillers.append(filler)
    time.sleep(0.2)
    return listener, fillers, port


def watch_stdin():
    while sys.stdin.buffer.read(4096):
        pass
    os._exit(0)


def exit_on_signals():
    """Exit on SIGTERM and SIGINT even when the parent started us with them blocked or ignored, as some
    runtimes' process spawners do: the tests stop servers by pid with SIGTERM."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
