#!/usr/bin/env python3
"""Drives the Alerts list of serve's Fleet screen in headless Chromium (Debian `chromium` and `chromium-driver`,
PyPI `selenium`) against a `hostscope serve local --rules RULES` it starts. Run by
Tests/CLITests/WebAlertsTests.swift; exits 0 when every check holds, else prints what failed on stderr and
exits 1; exits 77 (and says why) when Chromium or Selenium is missing.

    web_alerts_check.py --binary .build/debug/hostscope --rules RULES --db FILE

The rule fires on `local` at once with a summary holding markup: the list shows the alert firing (from
/api/v1/alerts or the `alert` events) with its summary as text, and the markup never runs.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import time

from web_dashboard_check import check, failures, free_port, severe_logs, wait


def main():
    parser = argparse.ArgumentParser()
    for name in ("--binary", "--rules", "--db"):
        parser.add_argument(name, required=True)
    options = parser.parse_args()
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        print("selenium is not installed (pip install selenium); the browser test is skipped", file=sys.stderr)
        return 77
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    chromedriver = shutil.which("chromedriver")
    if not chromium or not chromedriver:
        print("chromium and chromium-driver are not installed; the browser test is skipped", file=sys.stderr)
        return 77
    port = free_port()
    serve = subprocess.Popen(
        [options.binary, "serve", "local", "--every", "500ms", "--listen", f"127.0.0.1:{port}", "--db", options.db,
         "--rules", options.rules], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    chrome = webdriver.ChromeOptions()
    chrome.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1400,900", "--no-first-run", "--disable-extensions"):
        chrome.add_argument(argument)
    chrome.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(chromedriver), options=chrome)
    try:
        time.sleep(1)
        driver.get(f"http://127.0.0.1:{port}/")
        shown = wait(driver, """const item = document.querySelector('#alerts li[data-alertname="MemoryInUse"]');
                                return item && item.dataset.state === 'firing' ? item.textContent : null""", 30,
                     "the Alerts list shows MemoryInUse firing")
        check(shown and "firing MemoryInUse" in shown and "local" in shown and "(warning)" in shown,
              f"the alert's line: {shown!r}")
        check(shown and "<img src=x onerror=window.hostscopeXSS=1>" in shown and "memory at" in shown,
              f"the summary is shown as text: {shown!r}")
        check(driver.execute_script("return window.hostscopeXSS === undefined"), "markup of a summary ran")
        check(driver.execute_script("return document.querySelectorAll('#alerts img').length === 0"),
              "markup of a summary became an element")
        check(not severe_logs(driver), f"errors in the browser console: {severe_logs(driver)}")
    finally:
        driver.quit()
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(timeout=20)
        except subprocess.TimeoutExpired:
            serve.kill()
    if failures:
        return 1
    print("web alerts: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
