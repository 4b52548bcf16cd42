#!/usr/bin/env python3
"""Drives serve's dashboard in headless Chromium (Debian `chromium` and `chromium-driver`, PyPI `selenium`)
against a real `hostscope serve` it starts, and checks what a person would see. Run by
Tests/CLITests/WebDashboardTests.swift; exits 0 when every check holds, else prints what failed on stderr
and exits 1; exits 77 (and says why) when Chromium or Selenium is missing.

    web_dashboard_check.py --binary .build/debug/hostscope --ssh-config CFG --hosts h1,h2 --hostile-host evil1 \
        --db FILE --artifacts DIR [--files-root DIR]

The tour: the token form (a wrong token named as wrong), the fleet listing every host with a value that
changes within two ticks, the hostile host error and process command line rendered as text, a host page
drawing its charts and switching range, the tracing list and a trace's waterfall, with --files-root the Files
screen (a file named as markup and a file holding <script> and ANSI escapes shown as text, a grep result
opening its line, a live tail, a download), the page reconnecting by itself after serve restarts, no error in
the browser console, and screenshots at 1400x900 and 390x844.

With --chat-base-url (the OpenAI base URL of Scripts/llm_mock_server.py), serve answers chat too and the tour
includes the Chat screen: a turn streams text and tool rows, model output holding raw HTML stays text, a tool row
opens its span in Tracing with its SSH children, stop ends a running turn, a provider's 401 is shown inline with
nothing lost, and the API key never reaches the page. `--tour chat` runs the token form and the chat only.
"""
import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

failures = []
HOSTILE_PROCESS = "[<img src=x onerror=window.hostscopeXSS=1><script>window.hostscopeXSS=2</script>]"
CHAT_KEY = "sk-web-chat-" + secrets.token_hex(16)


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL: " + message, file=sys.stderr)
    return condition


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Serve:
    def __init__(self, options, port, token_file):
        self.options = options
        self.port = port
        self.token_file = token_file
        self.process = None

    def start(self):
        hosts = self.options.hosts.split(",") + [name for name in (self.options.hostile_host, self.options.down_host)
                                                 if name]
        self.log = open(os.path.join(self.options.artifacts, "serve.log"), "ab")
        self.process = subprocess.Popen(
            [self.options.binary, "serve", *hosts, "--ssh-config", self.options.ssh_config, "--every",
             self.options.every, "--listen", f"127.0.0.1:{self.port}", "--db", self.options.db, "--token-file",
             self.token_file, "--log-level", "info", *self.chat_arguments()]
            + (["--files-root", self.options.files_root] if self.options.files_root else [])
            + (["--rules", self.options.rules] if self.options.rules else []),
            stderr=self.log, stdout=subprocess.DEVNULL, env={**os.environ, "OPENAI_API_KEY": CHAT_KEY})
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.process.poll() is not None:
                    raise SystemExit(f"serve ended at start with status {self.process.returncode}")
                time.sleep(0.1)
        raise SystemExit("serve did not listen within 30 s")

    def chat_arguments(self):
        if not self.options.chat_base_url:
            return []
        return ["--chat-provider", "openai", "--chat-base-url", self.options.chat_base_url, "--chat-model",
                "mock-tool-loop"]

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


def wait(driver, condition, seconds, what):
    deadline = time.time() + seconds
    last = None
    while time.time() < deadline:
        try:
            last = driver.execute_script(condition)
            if last:
                return last
        except Exception as error:  # a page between two states: try again
            last = error
        time.sleep(0.2)
    check(False, f"{what} (within {seconds} s; last: {str(last)[:300]})")
    return None


def severe_logs(driver):
    return [entry for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]


HOSTILE_NAME = "<img src=x onerror=alert(1)>"
HOSTILE_TEXT = "<script>alert(2)</script>\x1b[31mred\x1b[0m <b>bold</b>\n"


def make_files(root):
    """The files the Files screen shows: a name that is markup, content that is markup and ANSI, a log with a
    needle on line 150, a 1.6 MB log whose line 40,000 lies past its first mebibyte. Readable by the harness's
    user, who is not this one."""
    os.makedirs(os.path.join(root, "logs"), exist_ok=True)
    with open(os.path.join(root, HOSTILE_NAME), "w") as handle:
        handle.write(HOSTILE_TEXT)
    with open(os.path.join(root, "logs", "app.log"), "w") as handle:
        handle.writelines("the needle\n" if n == 150 else f"line {n}\n" for n in range(1, 301))
    with open(os.path.join(root, "logs", "big.log"), "w") as handle:
        handle.writelines(f"big line {n:06d} " + "x" * 24 + "\n" for n in range(1, 40_001))
    for directory, _, names in os.walk(root):
        os.chmod(directory, 0o755)
        for name in names:
            os.chmod(os.path.join(directory, name), 0o644)


def no_alert(driver):
    from selenium.common.exceptions import NoAlertPresentException
    try:
        text = driver.switch_to.alert.text
    except NoAlertPresentException:
        return True
    driver.switch_to.alert.dismiss()
    check(False, f"an alert opened: {text!r}")
    return False


def files_tour(driver, base, host, options):
    """The tree, the hostile name and content previewed inert, grep to a line, a live tail, a download."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    root = os.path.realpath(options.files_root)
    scripts = driver.execute_script("return document.scripts.length")
    driver.get(base + "#/files/" + host)
    wait(driver, "return document.querySelectorAll('.tree a.entry').length > 0", 20, "the Files tree lists the root")
    driver.find_element(By.CSS_SELECTOR, ".tree a.entry").click()
    names = wait(driver, f"""const names = [...document.querySelectorAll('.tree a.entry')].map(a => a.textContent);
                             return names.includes({json.dumps(HOSTILE_NAME)}) && names""", 20,
                 "the tree lists the file named as markup, as text")
    check(names and "logs/" in names, f"the tree lists the directory: {names}")
    check("path=" in driver.current_url, "the directory is in the URL")
    # Keyboard: the arrow keys move along the tree.
    first = driver.find_element(By.CSS_SELECTOR, ".tree a.entry")
    first.send_keys(Keys.ARROW_DOWN)
    check(driver.execute_script("return document.activeElement !== arguments[0] && "
                                "document.activeElement.classList.contains('entry')", first),
          "the down arrow moves to the next entry")
    driver.find_element(By.XPATH, "//a[@class='entry' and text()=" + json.dumps(HOSTILE_NAME) + "]").click()
    shown = wait(driver, "return [...document.querySelectorAll('.code .t')].map(t => t.textContent).join('\\n')",
                 20, "the hostile file's preview shows")
    check(shown and shown.startswith("<script>alert(2)</script>\u241b[31mred"), f"its content is text: {shown!r}")
    check(no_alert(driver), "no alert opened")
    check(driver.execute_script("return document.scripts.length") == scripts, "no script element was injected")
    check(driver.execute_script("return document.querySelectorAll('main b, main img, main script').length") == 0,
          "no element was made from the file's name or content")
    driver.save_screenshot(os.path.join(options.artifacts, "files-1400x900.png"))
    driver.set_window_size(390, 844)
    driver.save_screenshot(os.path.join(options.artifacts, "files-390x844.png"))
    driver.set_window_size(1400, 900)

    # grep from the root; its result opens the line.
    driver.get(base + "#/files/" + host + "?path=" + root)
    wait(driver, "return document.querySelectorAll('.tree a.entry').length > 1", 20, "the root's tree is back")
    driver.find_element(By.CSS_SELECTOR, "[data-filter]").send_keys("needle", Keys.ENTER)
    wait(driver, "return document.querySelectorAll('.results a').length === 1", 20, "grep finds the needle")
    driver.find_element(By.CSS_SELECTOR, ".results a").click()
    wait(driver, "const l = document.getElementById('L150'); return l && l.classList.contains('target') && "
                 "l.textContent === '150the needle'", 20, "the grep result opens its line, numbered")
    check("line=150" in driver.current_url, "the line is in the URL")

    # A live tail, then the download through fetch (the token in a header, never in the URL).
    driver.find_element(By.XPATH, "//button[text()='Follow']").click()
    wait(driver, "return [...document.querySelectorAll('.code .t')].some(t => t.textContent === 'line 300')", 20,
         "the live tail shows the last lines")
    with open(os.path.join(root, "logs", "app.log"), "a") as handle:
        handle.write("appended <i>live</i>\n")
    wait(driver, "return [...document.querySelectorAll('.code .t')].some(t => t.textContent === 'appended <i>live</i>')",
         20, "an appended line arrives in the live tail")
    driver.find_element(By.XPATH, "//button[text()='Follow']").click()
    driver.find_element(By.XPATH, "//button[text()='Download']").click()
    wait(driver, "return document.querySelector('main p.note').textContent.startsWith('Downloaded')", 20,
         "the download completes")
    check(no_alert(driver), "no alert opened")

    # A link to a line past the first mebibyte of a large file opens there, numbered.
    driver.get(base + "#/files/" + host + "?path=" + root + "/logs/big.log&line=39990")
    wait(driver, "const l = document.getElementById('L39990'); return l && l.classList.contains('target') && "
                 "l.textContent.startsWith('39990big line 039990 ')", 20, "a line past the first MiB opens, numbered")

    files_tree_kept(driver, base, host)


# The tree as shown: the expanded folders' last names, the chosen file's, the preview's first line.
TREE_STATE = """const open = [...document.querySelectorAll('.tree li[aria-expanded="true"]')]
                  .map(li => li.dataset.path.split('/').pop());
                const chosen = document.querySelector('.tree li[aria-selected="true"]');
                const first = document.querySelector('.code .t');
                return open.length === 2 && open[1] === 'logs' && chosen && chosen.dataset.path.endsWith('/logs/app.log')
                  && first && first.textContent === 'line 1' && open.join(',')"""


def files_tree_kept(driver, base, host):
    """Folders expanded in the tree and the file chosen come back after a reload, a visit to another screen
    and from the shared URL."""
    from selenium.webdriver.common.by import By
    driver.get(base + "#/files/" + host)
    wait(driver, "return document.querySelectorAll('.tree li[aria-expanded=\"false\"]').length > 0", 20,
         "the Files tree lists the roots")
    driver.find_element(By.CSS_SELECTOR, ".tree li[aria-expanded] > button.toggle").click()
    wait(driver, "return [...document.querySelectorAll('.tree li')].some(li => li.dataset.path.endsWith('/logs'))", 20,
         "the root expands in place")
    driver.execute_script("""[...document.querySelectorAll('.tree li')].find(li => li.dataset.path.endsWith('/logs'))
                             .querySelector(':scope > button.toggle').click()""")
    wait(driver, "return document.querySelector('.tree a[data-file$=\"/logs/app.log\"]') !== null", 20,
         "the logs folder expands in place")
    driver.find_element(By.CSS_SELECTOR, ".tree a[data-file$='/logs/app.log']").click()
    wait(driver, TREE_STATE, 20, "the file chosen in the expanded tree opens with the tree as it was")
    check("open=" in driver.current_url and "tree=" in driver.current_url, "the expanded folders are in the URL")
    shared = driver.current_url
    driver.refresh()
    wait(driver, TREE_STATE, 20, "a reload keeps the expanded folders and the file")
    driver.find_element(By.ID, "nav-fleet").click()
    wait(driver, "return document.querySelector('#fleet') !== null", 20, "the fleet shows")
    driver.find_element(By.ID, "nav-files").click()
    wait(driver, TREE_STATE, 20, "back through the Files link, the tree is as it was left")
    driver.get(base + "#/")
    driver.get(shared)
    wait(driver, TREE_STATE, 20, "the shared URL opens the same tree")
    # Folding a folder forgets it (and what it held) in the URL.
    driver.execute_script("""[...document.querySelectorAll('.tree li')].find(li => li.dataset.path.endsWith('/logs'))
                             .querySelector(':scope > button.toggle').click()""")
    check(driver.current_url.count("open=") == 1, f"a folded folder leaves the URL: {driver.current_url}")


def main():
    parser = argparse.ArgumentParser()
    for name in ("--binary", "--ssh-config", "--hosts", "--db", "--artifacts"):
        parser.add_argument(name, required=True)
    parser.add_argument("--hostile-host", default="")
    # A host reached through a ProxyCommand that connects only while this file exists and writes its pid
    # to FILE.pid.
    parser.add_argument("--down-host", default="")
    parser.add_argument("--down-flag", default="")
    parser.add_argument("--every", default="2s")
    parser.add_argument("--chat-base-url", default="")
    parser.add_argument("--tour", choices=("all", "chat", "files"), default="all")
    parser.add_argument("--files-root", default="")
    # A rules file with an alert named WebCheck that fires on every host at once (its summary is markup).
    parser.add_argument("--rules", default="")
    options = parser.parse_args()
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By
    except ImportError:
        print("selenium is not installed (pip install selenium); the browser tests are skipped", file=sys.stderr)
        return 77
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    chromedriver = shutil.which("chromedriver")
    if not chromium or not chromedriver:
        print("chromium and chromium-driver are not installed (apt-get install chromium chromium-driver); "
              "the browser tests are skipped", file=sys.stderr)
        return 77
    os.makedirs(options.artifacts, exist_ok=True)
    if options.files_root:
        make_files(options.files_root)
    every = float(options.every.rstrip("s"))
    token = secrets.token_hex(24)
    # The token stays out of the artifacts, which CI keeps.
    secrets_directory = tempfile.mkdtemp(prefix="hostscope-web-token-")
    token_file = os.path.join(secrets_directory, "token")
    with open(token_file, "w") as handle:
        handle.write(token + "\n")
    os.chmod(token_file, 0o600)
    # A busy process whose command line is markup: a top process of the harness host (this machine).
    hostile = subprocess.Popen(
        ["nice", "-n", "19", "bash", "-c", f"exec -a '{HOSTILE_PROCESS}' {sys.executable} -c 'while True: pass'"])
    serve = Serve(options, free_port(), token_file)
    serve.start()
    chrome = webdriver.ChromeOptions()
    chrome.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1400,900", "--no-first-run", "--disable-extensions"):
        chrome.add_argument(argument)
    chrome.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(chromedriver), options=chrome)
    base = f"http://127.0.0.1:{serve.port}/"
    hosts = options.hosts.split(",")
    try:
        driver.set_window_size(1400, 900)
        driver.get(base)
        # The token: asked for once; a wrong one is named as wrong.
        wait(driver, "return document.getElementById('token-form') !== null", 15, "the token form appears")
        driver.find_element(By.ID, "token").send_keys("not-the-token-of-this-serve-at-all-0123456789")
        driver.find_element(By.CSS_SELECTOR, "#token-form button").click()
        wait(driver, "return document.querySelector('#token-form h1')?.textContent === 'Wrong token'", 15,
             "a wrong token gives the 'Wrong token' form")
        driver.save_screenshot(os.path.join(options.artifacts, "token-1400x900.png"))
        driver.find_element(By.ID, "token").send_keys(token)
        driver.find_element(By.CSS_SELECTOR, "#token-form button").click()
        check(token not in driver.current_url, "the token never appears in the URL")
        # The 401s of the wrong tokens above are the browser's own console lines: expected here, not later.
        driver.get_log("browser")

        if options.chat_base_url and options.tour != "files":
            chat_tour(driver, base, hosts[0], options.artifacts)
            driver.get(base + "#/")
        if options.tour == "chat":
            return finish(driver, serve, hostile, secrets_directory, options)
        if options.tour == "files":
            if options.files_root:
                files_tour(driver, base, hosts[0], options)
            return finish(driver, serve, hostile, secrets_directory, options)

        # The fleet: every host listed, a value changing live within two ticks.
        expected = hosts + [name for name in (options.hostile_host, options.down_host) if name]
        wait(driver, f"""return [...document.querySelectorAll('#fleet tbody tr')].map(r => r.dataset.host).sort()
                         .join(',') === {json.dumps(','.join(sorted(expected)))}""", 30, "the fleet lists every host")
        first = wait(driver, f"""const row = document.querySelector('#fleet tr[data-host={json.dumps(hosts[0])}]');
                                 return row && row.dataset.collectedAt && row.querySelector('.c-cpu').textContent
                                   .endsWith('%') ? row.dataset.collectedAt : null""", 30, "the first host has figures")
        wait(driver, f"""const row = document.querySelector('#fleet tr[data-host={json.dumps(hosts[0])}]');
                         return row.dataset.collectedAt !== {json.dumps(first)}""", 2 * every + 3,
             "the first host's row changes within two ticks")
        if options.hostile_host:
            shown = wait(driver, f"""const row = document.querySelector('#fleet tr[data-host={json.dumps(options.hostile_host)}]');
                                     return row && row.dataset.state === 'failing' && row.querySelector('.error-line')
                                       .textContent""", 30, "the hostile host shows as failing with its sentence")
            check(shown and "<img src=x onerror=window.hostscopeXSS=1>" in shown,
                  f"the hostile host's error is shown as text: {shown!r}")
        if options.rules:
            said = wait(driver, f"""return [...document.querySelectorAll('#alerts li[data-state=firing]')]
                                    .filter(li => li.textContent.includes('WebCheck'))
                                    .map(li => li.querySelector('.alert-summary').textContent)
                                    .find(text => text.includes({json.dumps(hosts[0])}))""", 30,
                        "the fleet lists the firing alerts")
            check(said and "<img src=x onerror=window.hostscopeXSS=1>" in said, f"an alert's summary is text: {said!r}")
            check(driver.execute_script("return document.querySelector('.alert-block h2').textContent.includes('firing')"),
                  "the alert block counts the firing alerts")
        driver.save_screenshot(os.path.join(options.artifacts, "fleet-1400x900.png"))
        driver.set_window_size(390, 844)
        driver.save_screenshot(os.path.join(options.artifacts, "fleet-390x844.png"))
        driver.set_window_size(1400, 900)

        # Filter and sort, kept in the URL.
        search = driver.find_element(By.CSS_SELECTOR, "[data-filter]")
        search.send_keys(hosts[0])
        wait(driver, "return document.querySelectorAll('#fleet tbody tr').length === 1", 5, "the filter narrows the fleet")
        check("q=" in driver.current_url, "the filter is in the URL")
        driver.execute_script("document.querySelector('[data-filter]').value = '';"
                              "document.querySelector('[data-filter]').dispatchEvent(new Event('input'))")
        driver.find_element(By.CSS_SELECTOR, "th[data-key=cpu] button").click()
        wait(driver, "return document.querySelector('th[data-key=cpu]').getAttribute('aria-sort') === 'descending'",
             5, "a click on CPU sorts by it")

        fleet_burst(driver, base)

        # A host page: charts from history, the range switch, the hostile process inert.
        driver.get(base + "#/host/" + hosts[0])
        wait(driver, "return Number(document.getElementById('chart-cpu')?.dataset.points) > 1", 30,
             "the host page draws its CPU chart from history")
        painted = driver.execute_script("""const c = document.getElementById('chart-cpu');
            const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0;
            for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n""")
        check(painted and painted > 500, f"the CPU chart has pixels drawn ({painted})")
        # Inodes per filesystem, rates and errors per interface; per core on demand, kept in the URL.
        for chart in ("inodes", "interfaces", "interface-errors"):
            wait(driver, f"""const c = document.getElementById('chart-{chart}');
                             return c && !c.closest('section').hidden && Number(c.dataset.points) > 1 &&
                               c.closest('section').querySelectorAll('.legend .key').length > 0""", 20,
                 f"the {chart} chart is drawn with a legend")
        check(driver.execute_script("return document.getElementById('chart-cores').closest('section').hidden"),
              "the per-core chart waits to be asked for")
        driver.find_element(By.ID, "show-cores").click()
        wait(driver, """const c = document.getElementById('chart-cores');
                        return !c.closest('section').hidden && Number(c.dataset.segments) >= 1 &&
                          c.closest('section').querySelector('.legend .key')?.textContent === 'cpu0'""", 10,
             "the Per core button shows a line per core")
        check("show=cores" in driver.current_url, "the per-core choice is in the URL")
        driver.find_element(By.CSS_SELECTOR, "button[data-range='12h']").click()
        wait(driver, "return document.body.dataset.hostRange === '12h' && "
                     "document.querySelector('button[data-range=\"12h\"]').getAttribute('aria-pressed') === 'true'",
             20, "the range switches to 12h")
        check("range=12h" in driver.current_url, "the range is in the URL")
        # A drag across a chart zooms every chart to that span; a double-click goes back.
        from selenium.webdriver.common.action_chains import ActionChains
        chart = driver.find_element(By.ID, "chart-cpu")
        ActionChains(driver).move_to_element_with_offset(chart, -120, 0).click_and_hold().move_by_offset(
            200, 0).release().perform()
        wait(driver, "return document.getElementById('zoom-note').textContent.startsWith('Zoomed to')", 10,
             "a drag across a chart zooms it")
        ActionChains(driver).double_click(chart).perform()
        wait(driver, "return document.getElementById('zoom-note').textContent === ''", 10,
             "a double-click zooms out")
        if options.rules:
            wait(driver, f"""const items = [...document.querySelectorAll('#alerts li')];
                             return items.length > 0 && items.every(li => li.querySelector('.alert-summary')
                               .textContent.includes({json.dumps(hosts[0])}))""", 20,
                 "a host's page lists that host's alerts only")
        command = wait(driver, """return [...document.querySelectorAll('#processes td.command')]
                                    .map(td => td.textContent).find(t => t.includes('<img src=x'))""", 30,
                       "the hostile process is listed")
        check(command and command.startswith("[<img src=x onerror="), f"the command line is text: {command!r}")
        driver.save_screenshot(os.path.join(options.artifacts, "host-1400x900.png"))
        driver.set_window_size(390, 844)
        driver.save_screenshot(os.path.join(options.artifacts, "host-390x844.png"))
        driver.set_window_size(1400, 900)

        # A host going down: failing in the fleet with its sentence, then back; its chart has the gap.
        if options.down_host:
            row = f"document.querySelector('#fleet tr[data-host={json.dumps(options.down_host)}]')"
            driver.get(base + "#/")
            wait(driver, f"const row = {row}; return row && row.dataset.state === 'ok'", 30, "the host to go down is up first")
            time.sleep(2 * every)
            os.unlink(options.down_flag)
            # The open session goes with its proxy; the next connection finds the flag gone.
            with open(options.down_flag + ".pid") as handle:
                os.kill(int(handle.read().strip()), signal.SIGKILL)
            said = wait(driver, f"""const row = {row}; return row && ['failing', 'waiting'].includes(row.dataset.state)
                                   && row.querySelector('.error-line').textContent""", 6 * every + 10,
                        "a host that goes down shows as failing with its error")
            check(said and "switched off" in said, f"the down host's error is its sentence: {said!r}")
            driver.save_screenshot(os.path.join(options.artifacts, "fleet-host-down-1400x900.png"))
            time.sleep(2 * every)
            open(options.down_flag, "w").close()
            wait(driver, f"const row = {row}; return row && row.dataset.state === 'ok'", 45, "the host comes back up")
            time.sleep(2 * every)
            driver.get(base + "#/host/" + options.down_host + "?range=live")
            pieces = wait(driver, "return Number(document.getElementById('chart-cpu')?.dataset.segments) >= 2 && "
                                  "document.getElementById('chart-cpu').dataset.segments", 30,
                          "the chart of a host that was down shows the gap")
            check(pieces, f"the CPU line is broken where the host was down ({pieces} pieces)")
            driver.save_screenshot(os.path.join(options.artifacts, "host-down-gap-1400x900.png"))

        # The failing host's page: its state line quotes the markup as text, its charts have only gaps.
        if options.hostile_host:
            driver.get(base + "#/host/" + options.hostile_host)
            line = wait(driver, "const s = document.querySelector('.state-line'); "
                                "return s && s.dataset.state === 'failing' && s.textContent", 30,
                        "the failing host's page says it is failing")
            check(line and "<img src=x onerror=window.hostscopeXSS=1>" in line, f"its error is text: {line!r}")
            wait(driver, "return Number(document.getElementById('chart-cpu')?.dataset.points) > 0", 30,
                 "the failing host's error records are read")

        # Tracing: the span list, then one trace's waterfall and a span's detail.
        driver.get(base + "#/tracing")
        wait(driver, "return document.querySelectorAll('#spans tbody tr a').length > 0", 30, "the tracing list has spans")
        driver.find_element(By.CSS_SELECTOR, "#spans tbody tr a").click()
        wait(driver, "return document.querySelectorAll('#waterfall .span-row').length > 0 && "
                     "document.querySelector('#span-detail h2') !== null", 20, "a trace shows its waterfall and detail")
        driver.save_screenshot(os.path.join(options.artifacts, "trace-1400x900.png"))
        driver.set_window_size(390, 844)
        driver.save_screenshot(os.path.join(options.artifacts, "trace-390x844.png"))
        driver.set_window_size(1400, 900)

        if options.files_root:
            files_tour(driver, base, hosts[0], options)

        # Nothing injected, nothing in the console.
        check(driver.execute_script("return window.hostscopeXSS === undefined"), "no hostile string ran as script")
        check(driver.execute_script("return document.querySelectorAll('img').length") == 0, "no element was injected")
        errors = severe_logs(driver)
        check(not errors, f"no errors in the browser console: {errors}")

        # serve restarts: the page reconnects by itself and goes on with new figures.
        driver.get(base + "#/")
        wait(driver, "return document.body.dataset.feed === 'live'", 20, "the event stream is live")
        serve.stop()
        wait(driver, "return document.body.dataset.feed === 'reconnecting'", 20, "the page notices serve stopped")
        restarted = time.time() * 1000
        serve.start()
        wait(driver, "return document.body.dataset.feed === 'live'", 40, "the page reconnects after the restart")
        wait(driver, f"""const row = document.querySelector('#fleet tr[data-host={json.dumps(hosts[0])}]');
                         return row && Number(row.dataset.collectedAt) > {restarted}""", 30,
             "the fleet shows figures collected after the restart")
        # Connection refusals while serve was down are the browser's own lines; anything after is an error.
        driver.get_log("browser")
        time.sleep(2 * every)
        errors = severe_logs(driver)
        check(not errors, f"no errors in the browser console after reconnecting: {errors}")
    finally:
        if driver.session_id is not None:
            cleanup(driver, serve, hostile, secrets_directory)
    return report(options)


def fleet_burst(driver, base):
    """A burst of live records for 1000 hosts arriving at once (a tick of a large fleet, or a reconnect) is
    rendered over several frames, none spending more script time than the fleet's frame budget allows (one row's
    render past it at most), rows on screen only: a row off screen keeps what it showed until it scrolls into
    view, and then shows its own figure. Records trickling in one by one (as a tick of 300 hosts arrives) are
    rendered together, a frame at most every FLUSH_MS, not a frame each. The fleet is mounted by itself here, fed
    by a stand-in event feed, on a page where no other screen renders."""
    driver.get(base + "#/tracing")
    driver.set_script_timeout(120)
    result = driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        Promise.all([import('/assets/fleet.js'), import('/assets/format.js')]).then(async ([fleet, f]) => {
          const handlers = new Map();
          const feed = {on(type, handler) { handlers.set(type, handler); return () => handlers.delete(type); }};
          const now = Date.now();
          const hosts = Array.from({length: 1000}, (_, i) => 'burst-' + String(i).padStart(4, '0'));
          const record = (host, i, cpu) => ({host, collected_at: new Date(now + i).toISOString(),
            cpu: {busy_percent: cpu, cores: 4}, memory: {used_percent: 40}, load: {'1m': 1}, uptime_seconds: 3600,
            network: [{interface: 'eth0', rx_bytes_per_second: 1000 + i, tx_bytes_per_second: 10}],
            disks: [{mount: '/', type: 'ext4', filesystem: '/dev/sda1', size_bytes: 1e9, used_percent: 50,
                     read_bytes_per_second: i, write_bytes_per_second: 1}]});
          const initial = {hosts: hosts.map((host, i) => ({host, state: 'ok', last_tick: new Date(now).toISOString(),
                                                            latest: record(host, 0, 1)}))};
          const root = document.createElement('div');
          document.getElementById('main').replaceChildren(root);
          const unmount = fleet.mount(root, {feed, params: new URLSearchParams(), setParams() {}, unauthorized() {},
                                             takeInitialHosts: () => initial});
          const frames = () => globalThis.hostscopeFleetRenderRows;
          // Quiet: no row rendered for 30 animation frames (longer than FLUSH_MS; the ages' frames render none).
          const idle = () => new Promise(resolve => {
            let quiet = 0, seen = -1;
            const step = () => { const rows = frames().reduce((sum, n) => sum + n, 0);
                                 quiet = rows === seen ? quiet + 1 : 0; seen = rows;
                                 if (quiet > 30) resolve(); else requestAnimationFrame(step); };
            requestAnimationFrame(step);
          });
          const cpu = (host) => document.querySelector(`#fleet tr[data-host="${host}"] .c-cpu`).textContent;
          await idle();
          frames().length = 0;
          globalThis.hostscopeFleetRenderScriptTimes.length = 0;
          const firstOnScreen = document.querySelector('#fleet tbody tr').dataset.host;
          const lastRow = document.querySelector('#fleet tbody tr:last-child').dataset.host;
          // The burst: every host's next record in one task, the last host first.
          hosts.slice().reverse().forEach((host, i) => handlers.get('record')(record(host, i + 1, 10 + (i % 80))));
          await new Promise(resolve => requestAnimationFrame(resolve));
          const firstFrameShowsScreen = cpu(firstOnScreen) !== f.percent(1);
          await idle();
          const burstRows = [...frames()];
          const burstScript = [...globalThis.hostscopeFleetRenderScriptTimes];
          const expected = new Map(hosts.slice().reverse().map((host, i) => [host, f.percent(10 + (i % 80))]));
          const offScreenUntouched = cpu(lastRow) !== expected.get(lastRow);
          const onScreenWrong = [...document.querySelectorAll('#fleet tbody tr')]
            .filter(tr => { const box = tr.getBoundingClientRect(); return box.bottom > 0 && box.top < innerHeight; })
            .filter(tr => tr.querySelector('.c-cpu').textContent !== expected.get(tr.dataset.host)).length;
          // Scrolled through a screen at a time, every row shows its own figure (a row coming into view is
          // rendered in the next frames, not after FLUSH_MS).
          const animationFrames = async (count) => {
            for (let i = 0; i < count; i++) await new Promise(resolve => requestAnimationFrame(resolve));
          };
          for (let y = 0; y < document.documentElement.scrollHeight; y += innerHeight) {
            scrollTo(0, y);
            await animationFrames(6);
          }
          scrollTo(0, 0);
          const wrong = [...document.querySelectorAll('#fleet tbody tr')]
            .filter(tr => tr.querySelector('.c-cpu').textContent !== expected.get(tr.dataset.host)).length;
          // A trickle: the rows on screen get a record each, one every 4 ms over about a second.
          await idle();
          const visible = [...document.querySelectorAll('#fleet tbody tr')]
            .filter(tr => { const box = tr.getBoundingClientRect(); return box.bottom > 0 && box.top < innerHeight; })
            .map(tr => tr.dataset.host);
          frames().length = 0;
          const trickleStart = performance.now();
          for (let i = 0; i < 250; i++) {
            const host = visible[i % visible.length];
            handlers.get('record')(record(host, 2000 + i, 99));
            await new Promise(resolve => setTimeout(resolve, 4));
          }
          await idle();
          const trickleMs = performance.now() - trickleStart;
          const trickleFrames = frames().filter(n => n > 0).length;
          const trickleShown = visible.every(host => cpu(host) === f.percent(99));
          const result = {rows: burstRows, script: burstScript, budget: fleet.FRAME_BUDGET_MS, flush: fleet.FLUSH_MS,
                          shown: document.querySelectorAll('#fleet tbody tr').length, wrong, onScreenWrong,
                          firstFrameShowsScreen, offScreenUntouched, trickleFrames, trickleMs, trickleShown,
                          visible: visible.length};
          unmount();
          done(result);
        }).catch(error => done({error: String(error)}));""")
    check("error" not in result, f"the fleet burst ran: {result.get('error')}")
    frames = [rows for rows in result["rows"] if rows]
    slowest = max(result["script"]) if result["script"] else None
    check(result["onScreenWrong"] == 0 and result["firstFrameShowsScreen"],
          f"a burst's first frame renders the rows on screen, and they all show their figure "
          f"({result['onScreenWrong']} wrong)")
    check(len(frames) >= 1 and sum(frames) < 1000 and result["offScreenUntouched"],
          f"a burst of 1000 records renders only the rows on screen (rows per frame: {frames})")
    check(slowest is not None and slowest < result["budget"] + 8,
          f"no frame of the burst spends more than its budget of {result['budget']} ms and one row (slowest {slowest} ms)")
    check(result["shown"] == 1000 and result["wrong"] == 0,
          f"scrolled through after a burst, every row shows its own figure ({result['wrong']} of {result['shown']} "
          f"rows wrong)")
    allowed = result["trickleMs"] / (result["flush"] or 250) + 2
    check(result["trickleShown"] and 0 < result["trickleFrames"] <= allowed,
          f"250 records trickling in over {result['trickleMs']:.0f} ms to {result['visible']} rows on screen are "
          f"rendered in at most {allowed:.0f} frames, each row with its last figure "
          f"({result['trickleFrames']} frames; shown: {result['trickleShown']})")
    driver.get(base + "#/")


def cleanup(driver, serve, hostile, secrets_directory):
    driver.quit()
    driver.session_id = None
    serve.stop()
    hostile.kill()
    hostile.wait()
    shutil.rmtree(secrets_directory, ignore_errors=True)


def finish(driver, serve, hostile, secrets_directory, options):
    check(driver.execute_script("return window.hostscopeXSS === undefined"), "no hostile string ran as script")
    errors = severe_logs(driver)
    check(not errors, f"no errors in the browser console: {errors}")
    cleanup(driver, serve, hostile, secrets_directory)
    return report(options)


def report(options):
    if failures:
        print(f"{len(failures)} check(s) failed; screenshots and serve.log in {options.artifacts}", file=sys.stderr)
        return 1
    print(f"every check holds; screenshots in {options.artifacts}")
    return 0


def chat_tour(driver, base, host, artifacts):
    """The Chat screen against the mock provider: streaming, tool rows, inert markup, span links, stop, 401."""
    from selenium.webdriver.common.by import By

    def ask(text):
        field = driver.find_element(By.ID, "chat-input")
        field.clear()
        field.send_keys(text)
        driver.find_element(By.ID, "chat-send").click()

    last_answer = "const all = document.querySelectorAll('#transcript .message.assistant'); const a = all[all.length - 1];"
    driver.get(base + "#/chat?host=" + host)
    wait(driver, f"return document.getElementById('chat-host')?.value === {json.dumps(host)} && "
                 "document.getElementById('chat-config').textContent.includes('openai')", 20,
         "the chat screen names the host and the provider")
    ask("mock:web-markup why is / filling up?")
    wait(driver, "return document.querySelectorAll('#timeline tbody tr[data-status=ok]').length === 1", 30,
         "the turn's tool call shows as a row that ends ok")
    wait(driver, last_answer + " return a && a.dataset.finish === 'stop'", 30, "the answer streams to its end")
    shown = driver.execute_script(last_answer + " return a.textContent")
    check(shown and "<img src=x onerror=window.hostscopeXSS=3>" in shown and "<script>window.hostscopeXSS=4</script>"
          in shown, f"the model's raw HTML is shown as text: {shown!r}")
    check(driver.execute_script("return document.querySelectorAll('#transcript img, #transcript script, "
                                "#transcript b, #transcript a[href^=javascript]').length") == 0,
          "nothing the model wrote became an element")
    check(driver.execute_script("return document.querySelectorAll('#transcript strong, #transcript em, "
                                "#transcript pre code, #transcript li').length") >= 5,
          "the Markdown subset is drawn as elements")
    link = driver.execute_script("const l = document.querySelector('#transcript a'); return l && [l.href, l.rel]")
    check(link and link[0].startswith("https://man7.org/") and "noopener" in link[1],
          f"an http(s) link is a link with rel=noopener: {link}")
    check(driver.execute_script("return /Tokens \\d+ in \\/ \\d+ out/.test("
                                "document.getElementById('chat-telemetry').textContent)"), "tokens are shown")
    check("#/chat/" in driver.current_url, "the conversation has its URL")
    driver.find_element(By.CSS_SELECTOR, "#timeline tbody tr").click()
    wait(driver, "return document.getElementById('tool-output')?.textContent.includes('FILESYSTEM')", 10,
         "the inspector shows the tool's output")
    driver.find_element(By.ID, "rerun").click()
    wait(driver, "return document.querySelector('#rerun-result pre')?.textContent.includes('FILESYSTEM')", 30,
         "a re-run of the tool call shows its new output")
    driver.save_screenshot(os.path.join(artifacts, "chat-1400x900.png"))
    driver.set_window_size(390, 844)
    driver.save_screenshot(os.path.join(artifacts, "chat-390x844.png"))
    driver.set_window_size(1400, 900)

    # Stop: a slow answer stops, keeping its words.
    ask("mock:slow count slowly")
    wait(driver, last_answer + " return a && a.textContent.includes('word2')", 20, "the slow answer starts streaming")
    driver.find_element(By.ID, "chat-stop").click()
    wait(driver, last_answer + " return a.dataset.finish === 'stopped' && document.body.dataset.chat === 'idle'", 20,
         "stop ends the running turn")
    words = driver.execute_script(last_answer + " return a.textContent")
    check(words and "word2" in words and "word39" not in words, f"the stopped answer keeps its words only: {words!r}")

    # A provider that refuses the key: the sentence inline, the conversation kept.
    ask("mock:error-401 and now?")
    line = wait(driver, last_answer + " const e = a && a.querySelector('.turn-error'); return e && e.textContent", 20,
                "a 401 of the provider is shown inline")
    check(line and "API key" in line and CHAT_KEY not in line, f"the 401 says what to check, without the key: {line!r}")
    check(driver.execute_script("return document.querySelectorAll('#transcript .message.user').length") == 3,
          "every question of the conversation is still shown")
    conversation = driver.current_url.split("#/chat/")[-1]
    driver.get(base + "#/tracing")
    driver.get(base + "#/chat/" + conversation)
    wait(driver, "return document.querySelectorAll('#transcript .message.user').length === 3 && "
                 "document.querySelectorAll('#timeline tbody tr').length === 1", 20,
         "the conversation resumes with its questions and tool rows")
    wait(driver, f"return [...document.querySelectorAll('#conversations a')].some(a => a.href.endsWith("
                 f"{json.dumps(conversation)}))", 10, "the conversation is listed")
    check(CHAT_KEY not in driver.page_source, "the API key is nowhere on the page")

    # A tool row opens its span in Tracing, with the SSH work it caused as children.
    time.sleep(1.5)
    driver.find_element(By.CSS_SELECTOR, "#timeline tbody tr a.span-link").click()
    wait(driver, "return document.querySelector('#span-detail h2')?.textContent === 'execute_tool disk_usage'", 20,
         "the row's link opens its execute_tool span")
    children = wait(driver, "return [...document.querySelectorAll('#span-detail li')].map(li => li.textContent)"
                            ".filter(t => t.startsWith('ssh')).join(',')", 20, "the tool span lists its SSH children")
    check(children and "ssh exec" in children, f"the SSH commands are the tool span's children: {children!r}")
    driver.save_screenshot(os.path.join(artifacts, "chat-span-1400x900.png"))


if __name__ == "__main__":
    sys.exit(main())
