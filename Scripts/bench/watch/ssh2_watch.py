#!/usr/bin/env python3
"""The libssh2 comparison for the watch and snapshot benchmarks: ssh2-python (libssh2 inside) with
one thread and one blocking session per host, as a threaded Python poller would be written. Each
tick opens a channel, runs the same lean probe as the asyncssh loop (probe_common.py), parses it
and fetches command lines and owners of newly seen busy processes with a second command.

    ssh2_watch.py HOSTS.txt KEY USER EVERY_S FOR_S OUT.ndjson    fixed-rate ticks, NDJSON records
    ssh2_watch.py --snapshot HOSTS.txt KEY USER OUT.ndjson        one cold snapshot of every host:
        connect, authenticate, the probe twice 250 ms apart (CPU from the difference), parse
    ssh2_watch.py --warm HOSTS.txt KEY USER COUNT OUT.json        COUNT warm ticks on the first
        host, one after another; prints their wall times and this process's CPU per tick

The host key is not checked (ssh2-python leaves that to the caller); hostscope and asyncssh
check theirs.
"""
import json
import os
import resource
import socket
import sys
import threading
import time

from ssh2.error_codes import LIBSSH2_ERROR_EAGAIN
from ssh2.session import Session

from probe_common import PROBE, details_command, parse, parse_details


def connect(port, key, user):
    sock = socket.create_connection(("127.0.0.1", port))
    session = Session()
    session.handshake(sock)
    session.userauth_publickey_fromfile(user, key)
    return session, sock


def run(session, command):
    channel = session.open_session()
    channel.execute(command)
    chunks = []
    while True:
        size, data = channel.read()
        if size == LIBSSH2_ERROR_EAGAIN:
            continue
        if size <= 0:
            break
        chunks.append(data)
    while channel.read_stderr()[0] > 0:
        pass
    channel.close()
    channel.wait_closed()
    return b"".join(chunks).decode("utf-8", "replace")


def with_details(session, snapshot, processes, known):
    for pid in [pid for pid, entry in known.items() if processes.get(pid, (0, None))[1] != entry[0]]:
        del known[pid]
    pids = snapshot.get("top_pids", [])
    missing = [pid for pid in pids if pid not in known]
    if missing:
        for pid, detail in parse_details(run(session, details_command(missing))).items():
            if pid in processes:
                known[pid] = (processes[pid][1], detail)
    snapshot["processes"] = [{"pid": pid, "command": known[pid][1][0] if pid in known else None,
                              "user": known[pid][1][1] if pid in known else None} for pid in pids]


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main():
    lock = threading.Lock()
    if sys.argv[1] == "--snapshot":
        hosts_file, key, user, out = sys.argv[2:6]
        hosts = [line.split() for line in open(hosts_file) if line.strip()]
        records = []

        def snapshot(name, port):
            began = time.monotonic()
            try:
                session, sock = connect(port, key, user)
                _, previous = parse(run(session, PROBE), None)
                time.sleep(0.25)
                record, state = parse(run(session, PROBE), previous)
                with_details(session, record, state["processes"], {})
                record["host"] = name
                session.disconnect()
                sock.close()
            except Exception as error:  # noqa: BLE001 - every host yields a record
                record = {"host": name, "error": str(error)}
            record["duration_ms"] = (time.monotonic() - began) * 1000
            with lock:
                records.append(record)

        threads = [threading.Thread(target=snapshot, args=(name, int(port))) for name, _, port in hosts]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        with open(out, "w") as out_file:
            for record in records:
                out_file.write(json.dumps(record) + "\n")
        return

    if sys.argv[1] == "--warm":
        hosts_file, key, user, count, out = sys.argv[2:7]
        _, _, port = open(hosts_file).readline().split()
        session, _ = connect(int(port), key, user)
        previous, known = None, {}
        for _ in range(20):  # warm-up, as the Swift benchmark does
            record, previous = parse(run(session, PROBE), previous)
            with_details(session, record, previous["processes"], known)
        walls = []
        cpu_start = cpu_seconds()
        for _ in range(int(count)):
            began = time.monotonic()
            record, previous = parse(run(session, PROBE), previous)
            with_details(session, record, previous["processes"], known)
            walls.append((time.monotonic() - began) * 1000)
        cpu_ms = (cpu_seconds() - cpu_start) * 1000 / int(count)
        walls.sort()
        json.dump({"wall_median_ms": walls[len(walls) // 2], "client_cpu_ms": cpu_ms}, open(out, "w"))
        return

    hosts_file, key, user, every, duration, out = sys.argv[1:7]
    every, duration = float(every), float(duration)
    hosts = [line.split() for line in open(hosts_file) if line.strip()]
    start = time.monotonic() + 1
    wall_offset = time.time() - time.monotonic()
    out_file = open(out, "w")

    def watch(name, port):
        try:
            session, _ = connect(port, key, user)
        except Exception as error:  # noqa: BLE001
            with lock:
                out_file.write(json.dumps({"host": name, "collected_at": time.time(), "error": str(error)}) + "\n")
            return
        previous, known, tick = None, {}, 0
        while True:
            due = start + tick * every
            if due > start + duration:
                break
            time.sleep(max(0, due - time.monotonic()))
            stamp = time.time()
            began = time.monotonic()
            try:
                record, previous = parse(run(session, PROBE), previous)
                with_details(session, record, previous["processes"], known)
                record.update(host=name, collected_at=stamp)
            except Exception as error:  # noqa: BLE001 - every tick yields a record
                record = {"host": name, "collected_at": stamp, "error": str(error)}
            record["duration_ms"] = (time.monotonic() - began) * 1000
            record["slot"] = due + wall_offset
            with lock:
                out_file.write(json.dumps(record) + "\n")
            tick += 1

    threads = [threading.Thread(target=watch, args=(name, int(port))) for name, _, port in hosts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    out_file.close()


if __name__ == "__main__":
    os.environ.setdefault("LC_ALL", "C")
    main()
