#!/usr/bin/env python3
"""The dashboard's figures in headless Chromium through the Performance API: the first load of the fleet page
(bytes transferred, time until the page is interactive and until every host has a row) and the main-thread
time the fleet spends rendering each batch of live events, against a real `serve` watching HOSTS aliases of
the harness sshd; then a host chart over 7 days drawn from synthetic points.

    Scripts/sshd-harness.sh start /tmp/h && Scripts/bench/alias_config.sh 300 /tmp/h > /tmp/fleet.cfg
    python3 Scripts/bench/web/bench_web.py --binary .build/release/hostscope --ssh-config /tmp/fleet.cfg \
        --hosts 300 --every 5s --seconds 60

With --soak MINUTES, the 300-host page then stays open that long while serve ticks (`--every 1s` makes it
many updates): every minute a collection (DevTools `HeapProfiler.collectGarbage`), then the JS heap, the DOM's
node and listener counts (`Memory.getDOMCounters`) and the records shown so far; the slope of each over the run.

With --trace SECONDS, it then records that long a DevTools trace of the renderer (chromedriver's performance
log with the devtools.timeline categories) and a JS CPU profile (DevTools `Profiler`), and reports the main
thread's time per tick by trace event (self time, wall and thread CPU) and by JS function: where a tick goes.

Prints one JSON object of figures (docs/benchmarks.md#web has them).
"""
import collections
import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def stop(process):
    """SIGTERM, then SIGKILL after 120 s; answers the seconds it took to end, or None if it had to be killed."""
    started = time.time()
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=120)
        return round(time.time() - started, 1)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return None


def wait_for_port(port, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--ssh-config", required=True)
    parser.add_argument("--hosts", type=int, default=300)
    parser.add_argument("--every", default="5s")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--glances", action="store_true",
                        help="also compare one host's page with Glances' web mode on this machine, side by side")
    parser.add_argument("--compare-seconds", type=float, default=30)
    parser.add_argument("--trace", type=float, default=0, metavar="SECONDS",
                        help="then trace the renderer this long: its main thread's time per tick by event and JS function")
    parser.add_argument("--trace-file", metavar="PATH",
                        help="with --trace, write the trace there too (JSON that DevTools and Perfetto open)")
    parser.add_argument("--soak", type=float, default=0, metavar="MINUTES",
                        help="then keep the page open this long, sampling heap and DOM after a collection every minute")
    options = parser.parse_args()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    work = tempfile.mkdtemp(prefix="hostscope-bench-web-")
    port = free_port()
    hosts = [f"fleet-{index:03d}" for index in range(options.hosts)]
    log = open(os.path.join(work, "serve.log"), "wb")
    serve = subprocess.Popen(
        [options.binary, "serve", *hosts, "--ssh-config", options.ssh_config, "--every", options.every, "--listen",
         f"127.0.0.1:{port}", "--db", os.path.join(work, "db.sqlite"), "--max-connections-per-address", "512"],
        stderr=log, stdout=subprocess.DEVNULL)
    chrome = webdriver.ChromeOptions()
    chrome.binary_location = shutil.which("chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1400,900", "--enable-precise-memory-info"):
        chrome.add_argument(argument)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=chrome)
    figures = {"hosts": options.hosts, "every": options.every}
    try:
        wait_for_port(port, 30)
        # Let every host have a first record, so the first load is the full page.
        time.sleep(float(options.every.rstrip("s")) + 5)
        started = time.time()
        driver.get(f"http://127.0.0.1:{port}/")
        while time.time() - started < 60:
            # Rows off screen are rendered when they scroll into view: the page counts the hosts with a record.
            rows = driver.execute_script("""return globalThis.hostscopeFleetHostsWithRecord?.() ??
                [...document.querySelectorAll('#fleet tbody tr')].filter(r => r.dataset.collectedAt).length""")
            if rows >= options.hosts:
                break
            time.sleep(0.05)
        figures["every_row_filled_ms"] = round((time.time() - started) * 1000)
        load = driver.execute_script("""
            const nav = performance.getEntriesByType('navigation')[0];
            const resources = performance.getEntriesByType('resource');
            const assets = resources.filter(r => r.name.includes('/assets/'));
            return {transferred_bytes: nav.transferSize + assets.reduce((s, r) => s + r.transferSize, 0),
                    api_bytes: resources.filter(r => r.name.includes('/api/v1/hosts')).reduce((s, r) => s + r.transferSize, 0),
                    dom_interactive_ms: nav.domInteractive, dom_content_loaded_ms: nav.domContentLoadedEventEnd,
                    load_ms: nav.loadEventEnd}""")
        figures["first_load"] = load
        driver.execute_script("""
            window.benchLongTasks = [];
            new PerformanceObserver(l => window.benchLongTasks.push(...l.getEntries().map(e => e.duration)))
              .observe({type: 'longtask', buffered: false});
            globalThis.hostscopeFleetRenderTimes.length = 0;""")
        # The heap after a collection, before and after the window: a page left open must stay flat.
        driver.execute_cdp_cmd("HeapProfiler.collectGarbage", {})
        heap_before = driver.execute_script("return performance.memory?.usedJSHeapSize ?? null")
        # Chrome's own main-thread busy time over the window (script, parsing the events, style, layout,
        # paint), per tick of the fleet: what a live update of every host costs the page in all.
        driver.execute_cdp_cmd("Performance.enable", {"timeDomain": "timeTicks"})

        def busy():
            metrics = {m["name"]: m["value"] for m in driver.execute_cdp_cmd("Performance.getMetrics", {})["metrics"]}
            return metrics["TaskDuration"], metrics.get("ScriptDuration", 0)

        task_before, script_before = busy()
        time.sleep(options.seconds)
        task_after, script_after = busy()
        ticks = options.seconds / seconds_of(options.every)
        figures["main_thread_ms_per_tick_of_all_hosts"] = {
            "all": round((task_after - task_before) * 1000 / ticks, 1),
            "script": round((script_after - script_before) * 1000 / ticks, 1),
        }
        driver.execute_cdp_cmd("HeapProfiler.collectGarbage", {})
        figures["js_heap_after_gc_bytes"] = {
            "before": heap_before, "after": driver.execute_script("return performance.memory?.usedJSHeapSize ?? null")}
        renders = driver.execute_script("return [...globalThis.hostscopeFleetRenderTimes]")
        long_tasks = driver.execute_script("return window.benchLongTasks")
        figures["fleet_render_ms"] = {
            "batches": len(renders),
            "median": round(statistics.median(renders), 2) if renders else None,
            "p95": round(sorted(renders)[int(len(renders) * 0.95)], 2) if renders else None,
            "max": round(max(renders), 2) if renders else None,
        }
        figures["long_tasks_over_50ms"] = len(long_tasks)
        figures["js_heap_bytes"] = driver.execute_script("return performance.memory?.usedJSHeapSize ?? null")
        fleet_render = driver.execute_script("""return {rows: [...globalThis.hostscopeFleetRenderRows ?? []],
            script: [...globalThis.hostscopeFleetRenderScriptTimes ?? []]}""")
        if fleet_render["script"]:
            figures["fleet_render_script_ms"] = {"median": round(statistics.median(fleet_render["script"]), 2),
                                                 "max": round(max(fleet_render["script"]), 2)}
            figures["fleet_render_rows_per_frame_max"] = max(fleet_render["rows"])
        print(json.dumps(figures), file=sys.stderr)
        if options.trace:
            events = []
            figures["trace"] = trace(driver, options.trace, options.trace / seconds_of(options.every), events)
            if options.trace_file:
                with open(options.trace_file, "w") as handle:
                    json.dump({"traceEvents": events}, handle)
            print(json.dumps(figures["trace"]), file=sys.stderr)
        if options.soak:
            figures["soak"] = soak(driver, options.soak)
            print(json.dumps(figures["soak"]), file=sys.stderr)
        driver.set_script_timeout(120)
        # The chart is drawn by the browser alone: serve (300 hosts on the same cores) is stopped first, as a
        # browser on another machine would not share them. The page keeps its modules.
        figures["serve_stop_seconds"] = stop(serve)
        # A 7-day chart at 15 s: 40,320 points per series, four series, drawn by the page's own chart code.
        figures["chart_7d_15s_ms"] = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            import('/assets/chart.js').then(({timeChart}) => {
              const canvas = document.createElement('canvas');
              canvas.width = 600; canvas.height = 180;
              canvas.style.width = '600px'; canvas.style.height = '180px';
              document.body.append(canvas);
              const to = Date.now(), from = to - 7 * 86400000, n = 40320;
              const times = Array.from({length: n}, (_, i) => from + i * 15000);
              const series = [0, 1, 2, 3].map(k => ({label: 's' + k, values: times.map((t, i) => 50 + 40 * Math.sin(i / (500 + k * 50)))}));
              const runs = [];
              for (let r = 0; r < 5; r++) {
                const start = performance.now();
                timeChart(canvas, {times, series, from, to, format: v => v.toFixed(0), gap: 37500, max: 100});
                runs.push(performance.now() - start);
              }
              canvas.remove();
              done(runs.sort((a, b) => a - b)[2]);
            }).catch((error) => done('chart.js did not load: ' + error));""")
    finally:
        driver.quit()
        if serve.poll() is None:
            figures["serve_stop_seconds"] = stop(serve)
        log.close()
    if options.glances:
        figures["same_host_side_by_side"] = compare_with_glances(options, webdriver, Service, chrome)
    print(json.dumps(figures, indent=2))
    return 0


def seconds_of(every):
    """`--every` (`5s`, `500ms`) in seconds."""
    return float(every[:-2]) / 1000 if every.endswith("ms") else float(every.rstrip("s"))


def trace(driver, seconds, ticks, raw=None):
    """A DevTools trace and a JS CPU profile of `seconds` of the page: the renderer main thread's tasks (wall
    and thread CPU time) and the self time of each trace event and of each JS function, per tick, largest first."""
    import urllib.request
    import websocket  # selenium's own dependency (websocket-client)
    address = driver.capabilities["goog:chromeOptions"]["debuggerAddress"]
    page = next(t for t in json.load(urllib.request.urlopen(f"http://{address}/json")) if t["type"] == "page")
    channel = websocket.create_connection(page["webSocketDebuggerUrl"], suppress_origin=True)
    channel.send(json.dumps({"id": 1, "method": "Tracing.start", "params": {
        "transferMode": "ReportEvents", "traceConfig": {"includedCategories": [
            "devtools.timeline", "disabled-by-default-devtools.timeline", "toplevel", "v8.execute"]}}}))
    driver.execute_cdp_cmd("Profiler.enable", {})
    driver.execute_cdp_cmd("Profiler.setSamplingInterval", {"interval": 200})
    driver.execute_cdp_cmd("Profiler.start", {})
    time.sleep(seconds)
    profile = driver.execute_cdp_cmd("Profiler.stop", {})["profile"]
    channel.send(json.dumps({"id": 2, "method": "Tracing.end"}))
    events = []
    while True:
        message = json.loads(channel.recv())
        if message.get("method") == "Tracing.dataCollected":
            events.extend(message["params"]["value"])
        elif message.get("method") == "Tracing.tracingComplete":
            break
    channel.close()
    if raw is not None:
        raw.extend(events)
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    mains = [key for key, name in names.items() if name == "CrRendererMain"]
    spans = collections.defaultdict(list)
    for event in events:
        if event.get("ph") == "X" and "dur" in event:
            spans[(event["pid"], event["tid"])].append(event)
    # The page's renderer: the main thread that ran the most script.
    main = max(mains, key=lambda key: sum(e["dur"] for e in spans[key] if e["name"] == "FunctionCall"), default=None)
    if main is None:
        return {"error": "no renderer main thread in the trace"}
    wall = collections.Counter()
    cpu = collections.Counter()
    stack = []
    for event in sorted(spans[main], key=lambda e: (e["ts"], -e["dur"])):
        while stack and stack[-1]["ts"] + stack[-1]["dur"] <= event["ts"]:
            stack.pop()
        if stack:
            wall[stack[-1]["name"]] -= event["dur"]
            cpu[stack[-1]["name"]] -= event.get("tdur", 0)
        wall[event["name"]] += event["dur"]
        cpu[event["name"]] += event.get("tdur", 0)
        stack.append(event)
    tasks = [e for e in spans[main] if e["name"] == "ThreadControllerImpl::RunTask"]
    # The tasks that ran the fleet's frame callback: script, style, layout, paint, layerization and commit of
    # one frame, as wall time and as the thread's own CPU time (wall minus the waits for a core).
    callbacks = [e for e in spans[main] if e["name"] == "FunctionCall"
                 and e["args"].get("data", {}).get("functionName") == "render"
                 and e["args"]["data"].get("url", "").endswith("/fleet.js")]
    frames = [task for task in tasks if any(task["ts"] <= c["ts"] < task["ts"] + task["dur"] for c in callbacks)]

    def spread(values):
        values = sorted(value / 1000 for value in values)
        return {"p50": round(statistics.median(values), 2), "p95": round(values[int(len(values) * 0.95)], 2),
                "max": round(values[-1], 2)} if values else None
    per_tick = lambda us: round(us / 1000 / ticks, 1)
    functions = collections.Counter()
    nodes = {node["id"]: node for node in profile["nodes"]}
    for sample, delta in zip(profile.get("samples", []), profile.get("timeDeltas", [])):
        frame = nodes[sample]["callFrame"]
        where = frame["url"].rsplit("/", 1)[-1]
        functions[f"{frame['functionName'] or '(anonymous)'} {where}:{frame['lineNumber'] + 1}" if where
                  else frame["functionName"]] += delta
    return {
        "seconds": seconds, "ticks": round(ticks, 2),
        "main_thread_tasks_ms_per_tick": {"count": round(len(tasks) / ticks), "wall": per_tick(sum(e["dur"] for e in tasks)),
                                          "cpu": per_tick(sum(e.get("tdur", 0) for e in tasks))},
        "fleet_frames": {"count": len(frames), "wall_ms": spread([e["dur"] for e in frames]),
                         "cpu_ms": spread([e.get("tdur", 0) for e in frames])},
        "self_ms_per_tick_by_event": [
            {"event": name, "wall": per_tick(us), "cpu": per_tick(cpu[name])} for name, us in wall.most_common(20)],
        "js_profile_self_ms_per_tick": [
            {"function": name, "ms": per_tick(us)} for name, us in functions.most_common(20)],
    }


def slope_per_hour(samples, key):
    """The least-squares slope of `key` over the samples' minutes, per hour."""
    points = [(sample["minute"], sample[key]) for sample in samples if sample.get(key) is not None]
    if len(points) < 2:
        return None
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    return round(sum((x - mean_x) * (y - mean_y) for x, y in points) / spread * 60, 1) if spread else None


def soak(driver, minutes):
    """The page left open `minutes` while serve ticks: after a collection each minute, the JS heap, the DOM's
    counters and the records shown; their slopes per hour, and the fleet's slowest frame meanwhile."""
    samples = []
    worst_frame = 0
    started = time.time()
    for minute in range(int(minutes) + 1):
        while time.time() < started + minute * 60:
            time.sleep(1)
            worst_frame = max(worst_frame, driver.execute_script(
                "return Math.max(0, ...(globalThis.hostscopeFleetRenderScriptTimes ?? []))"))
        driver.execute_cdp_cmd("HeapProfiler.collectGarbage", {})
        counters = driver.execute_cdp_cmd("Memory.getDOMCounters", {})
        heap = driver.execute_cdp_cmd("Runtime.getHeapUsage", {})
        samples.append({
            "minute": minute, "js_heap_used_bytes": heap["usedSize"], "dom_nodes": counters["nodes"],
            "js_event_listeners": counters["jsEventListeners"], "documents": counters["documents"],
            "records_shown": driver.execute_script("return globalThis.hostscopeFleetRecords ?? 0"),
            # The alert list above the fleet follows serve's rules (pending and firing alerts come and go).
            "alerts_listed": driver.execute_script("return document.querySelectorAll('#alerts li').length"),
            "fleet_rows": driver.execute_script("return document.querySelectorAll('#fleet tbody tr').length")})
        print(json.dumps(samples[-1]), file=sys.stderr)
    records = samples[-1]["records_shown"] - samples[0]["records_shown"]
    return {
        "minutes": int(minutes), "samples": samples, "records_shown": records,
        "heap_bytes_per_hour": slope_per_hour(samples, "js_heap_used_bytes"),
        "dom_nodes_per_hour": slope_per_hour(samples, "dom_nodes"),
        "listeners_per_hour": slope_per_hour(samples, "js_event_listeners"),
        "slowest_frame_script_ms": round(worst_frame, 2),
    }


def page_figures(driver, url, seconds, updates_script):
    """First load and main-thread time per update of one page, read the same way for any page: bytes of
    everything fetched in the first two seconds (`transferSize`), `domInteractive`, and Chrome's own
    TaskDuration (main-thread busy time, DevTools Performance domain) over `seconds`, divided by the page's
    updates in that time (`updates_script` counts them)."""
    driver.execute_cdp_cmd("Performance.enable", {"timeDomain": "timeTicks"})
    driver.get(url)
    time.sleep(2)
    first = driver.execute_script("""
        const nav = performance.getEntriesByType('navigation')[0];
        const early = performance.getEntriesByType('resource').filter(r => r.startTime < 2000);
        return {transferred_bytes: nav.transferSize + early.reduce((s, r) => s + r.transferSize, 0),
                requests: 1 + early.length, dom_interactive_ms: Math.round(nav.domInteractive)}""")
    time.sleep(3)

    def busy():
        metrics = {m["name"]: m["value"] for m in driver.execute_cdp_cmd("Performance.getMetrics", {})["metrics"]}
        return metrics["TaskDuration"], metrics.get("ScriptDuration", 0)

    before_updates = driver.execute_script(updates_script)
    before_task, before_script = busy()
    time.sleep(seconds)
    after_task, after_script = busy()
    updates = driver.execute_script(updates_script) - before_updates
    task_ms = (after_task - before_task) * 1000
    return {
        "first_load": first,
        "updates": updates,
        "main_thread_ms_per_update": round(task_ms / updates, 2) if updates else None,
        "script_ms_per_update": round((after_script - before_script) * 1000 / updates, 2) if updates else None,
        "main_thread_ms_per_second": round(task_ms / seconds, 2),
        "js_heap_bytes": driver.execute_script("return performance.memory?.usedJSHeapSize ?? null"),
    }


def compare_with_glances(options, webdriver, Service, chrome):
    """hostscope's page watching this machine through the harness sshd, and Glances' web mode on this
    machine, both refreshing every 2 s, measured one after the other in one browser."""
    glances = shutil.which("glances")
    if not glances:
        return "glances is not installed (pip install 'glances[web]'); no comparison"
    work = tempfile.mkdtemp(prefix="hostscope-bench-glances-")
    serve_port, glances_port = free_port(), free_port()
    log = open(os.path.join(work, "processes.log"), "wb")
    serve = subprocess.Popen(
        [options.binary, "serve", "fleet-000", "--ssh-config", options.ssh_config, "--every", "2s", "--listen",
         f"127.0.0.1:{serve_port}", "--db", os.path.join(work, "db.sqlite")], stderr=log, stdout=subprocess.DEVNULL)
    peer = subprocess.Popen(
        [glances, "-w", "--bind", "127.0.0.1", "--port", str(glances_port), "--disable-autodiscover", "-t", "2"],
        stderr=log, stdout=log)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=chrome)
    try:
        for port in (serve_port, glances_port):
            wait_for_port(port, 60)
        time.sleep(5)
        result = {"refresh": "2s", "seconds": options.compare_seconds}
        result["hostscope"] = page_figures(
            driver, f"http://127.0.0.1:{serve_port}/", options.compare_seconds,
            "return globalThis.hostscopeFleetRecords ?? 0")
        result["glances"] = page_figures(
            driver, f"http://127.0.0.1:{glances_port}/", options.compare_seconds,
            "return performance.getEntriesByType('resource').filter(r => new URL(r.name).pathname === '/api/4/all')"
            ".length")
        return result
    finally:
        driver.quit()
        for process in (serve, peer):
            stop(process)
        log.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
