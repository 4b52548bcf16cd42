#!/usr/bin/env python3
"""How many of a Grafana dashboard's queries that return data for node_exporter return data for
hostscope, on the same machine, in one run.

    python3 Scripts/bench/parity/dashboard_coverage.py DASHBOARD.json [--seconds 180] [--every 5]

DASHBOARD.json is a dashboard as Grafana exports it (for example "Node Exporter Full", id 1860,
downloaded from grafana.com; the project ships none). The script starts, all on loopback:
the sshd harness (Scripts/sshd-harness.sh), Debian's prometheus-node-exporter, `hostscope serve`
watching the harness host (this machine, through SSH), and a Prometheus scraping both every
`--every` seconds. After `--seconds`, every panel query is asked of Prometheus twice, once with
`$job`/`$node` set to node_exporter's target and once to hostscope's (`$__rate_interval` is
4 × the scrape interval, as Grafana computes it, at least 1m), and counted as having data when
the instant query returns at least one series. Prints the ratio and each query missing for hostscope.
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except Exception:
            time.sleep(0.3)
    sys.exit(f"{url} did not answer within {seconds} s")


def queries(dashboard):
    found = []

    def walk(panel):
        for target in panel.get("targets") or []:
            if target.get("expr"):
                found.append((panel.get("title", "?"), target["expr"]))
        for child in panel.get("panels") or []:
            walk(child)

    for panel in dashboard.get("panels") or []:
        walk(panel)
    for row in dashboard.get("rows") or []:
        for panel in row.get("panels") or []:
            walk(panel)
    return found


def substitute(expr, job, node, nodename, rate_interval):
    values = {"job": job, "node": node, "instance": node, "nodename": nodename, "__rate_interval": rate_interval,
              "__interval": rate_interval, "__range": "1h", "__range_s": "3600", "diskdevices": "[a-z]+|nvme[0-9]+n[0-9]+|mmcblk[0-9]+"}
    def one(match):
        name = match.group(1) or match.group(2)
        return values.get(name, match.group(0))
    return re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)", one, expr)


def has_data(prometheus, expr):
    url = prometheus + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        answer = json.load(urllib.request.urlopen(url, timeout=30))
    except Exception:
        return False
    result = answer.get("data", {}).get("result")
    if answer.get("data", {}).get("resultType") == "scalar":
        return True
    return bool(result)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dashboard")
    parser.add_argument("--seconds", type=float, default=180)
    parser.add_argument("--every", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs) and name it")
    parser.add_argument("--hostscope", default=os.path.join(ROOT, ".build/debug/hostscope"))
    arguments = parser.parse_args()
    for program in ("prometheus", "prometheus-node-exporter", "sshd"):
        if not shutil.which(program) and not os.path.exists("/usr/sbin/" + program):
            sys.exit(f"{program} is needed: bash Scripts/setup.sh --tests")
    if not os.access(arguments.hostscope, os.X_OK):
        sys.exit(f"no hostscope at {arguments.hostscope}: build it (swift build) or pass --hostscope")
    dashboard = json.load(open(arguments.dashboard))
    asked = queries(dashboard)
    if not asked:
        sys.exit(f"{arguments.dashboard} has no panel with a Prometheus query: is it a Grafana dashboard export?")

    work = tempfile.mkdtemp(prefix="hostscope-parity-")
    # The harness's test user reads its authorized_keys inside: the directory must be traversable.
    os.chmod(work, 0o755)
    processes = []

    def stop(*_):
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        subprocess.run(["bash", os.path.join(ROOT, "Scripts/sshd-harness.sh"), "stop", work + "/ssh"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        subprocess.run(["bash", os.path.join(ROOT, "Scripts/sshd-harness.sh"), "start", work + "/ssh"], check=True,
                       stdout=subprocess.DEVNULL)
        env = dict(line.split("=", 1) for line in open(work + "/ssh/env").read().split() if "=" in line)
        target = f"{env['HOSTSCOPE_TEST_SSH_USER']}@127.0.0.1:{env['HOSTSCOPE_TEST_SSH_PORT']}"
        node_port, serve_port, prometheus_port = free_port(), free_port(), free_port()
        processes.append(subprocess.Popen(
            ["prometheus-node-exporter", f"--web.listen-address=127.0.0.1:{node_port}", "--log.level=warn"],
            stderr=open(work + "/node.log", "w")))
        processes.append(subprocess.Popen(
            [arguments.hostscope, "serve", target, "--every", f"{arguments.every}s", "--listen",
             f"127.0.0.1:{serve_port}", "-i", work + "/ssh/id_ed25519", "--known-hosts", work + "/ssh/known_hosts",
             "--db", work + "/serve.sqlite"],
            stdout=subprocess.DEVNULL, stderr=open(work + "/serve.log", "w")))
        with open(work + "/prometheus.yml", "w") as config:
            config.write(f"""global:
  scrape_interval: {arguments.every}s
  scrape_timeout: {arguments.every}s
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:{node_port}']
  - job_name: hostscope
    honor_labels: true
    static_configs:
      - targets: ['127.0.0.1:{serve_port}']
""")
        processes.append(subprocess.Popen(
            ["prometheus", f"--config.file={work}/prometheus.yml", f"--storage.tsdb.path={work}/tsdb",
             f"--web.listen-address=127.0.0.1:{prometheus_port}"],
            stdout=subprocess.DEVNULL, stderr=open(work + "/prometheus.log", "w")))
        prometheus = f"http://127.0.0.1:{prometheus_port}"
        wait_http(prometheus + "/-/ready")
        wait_http(f"http://127.0.0.1:{serve_port}/healthz")
        print(f"scraping node_exporter and hostscope every {arguments.every} s for {arguments.seconds:.0f} s …",
              file=sys.stderr)
        time.sleep(arguments.seconds)

        hosts = json.load(urllib.request.urlopen(f"http://127.0.0.1:{serve_port}/api/v1/hosts"))["hosts"]
        if hosts and hosts[0].get("state") != "ok":
            print(f"hostscope's host is {hosts[0].get('state')}: {hosts[0].get('last_error')}", file=sys.stderr)
        rate_interval = f"{max(60, 4 * arguments.every)}s"
        def nodename(job):
            url = prometheus + "/api/v1/query?" + urllib.parse.urlencode({"query": f'node_uname_info{{job="{job}"}}'})
            result = json.load(urllib.request.urlopen(url))["data"]["result"]
            return result[0]["metric"].get("nodename", "") if result else ""
        node_target = ("node", f"127.0.0.1:{node_port}", nodename("node"))
        hostscope_target = ("hostscope", target, nodename("hostscope"))
        both, node_only, hostscope_only, neither = [], [], [], 0
        for title, expr in asked:
            node_has = has_data(prometheus, substitute(expr, *node_target, rate_interval))
            hostscope_has = has_data(prometheus, substitute(expr, *hostscope_target, rate_interval))
            if node_has and hostscope_has:
                both.append(expr)
            elif node_has:
                node_only.append((title, expr))
            elif hostscope_has:
                hostscope_only.append(expr)
            else:
                neither += 1
        with_node = len(both) + len(node_only)
        print(f"dashboard: {dashboard.get('title', arguments.dashboard)} ({len(asked)} queries)")
        version = subprocess.run(["prometheus-node-exporter", "--version"], capture_output=True, text=True)
        print((version.stdout + version.stderr).strip().splitlines()[0])
        print(f"queries with data for node_exporter: {with_node}")
        print(f"  of those, with data for hostscope: {len(both)} ({100 * len(both) / max(with_node, 1):.1f} %)")
        print(f"queries with data for hostscope only: {len(hostscope_only)}; for neither: {neither}")
        print(f"host picker (node_uname_info nodename): node_exporter {node_target[2]!r}, hostscope {hostscope_target[2]!r}")
        for title, expr in node_only:
            print(f"  missing for hostscope: [{title}] {expr}")
    finally:
        stop()
        if arguments.keep:
            print(f"logs kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
