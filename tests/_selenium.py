"""Headless Chromium driven with selenium, shared by the browser tests (and benchmarks/report_bench.py).

``start_browser()`` starts Debian's chromium through its chromedriver with the flags that work on this
machine (tests/_chromium.py), with browser console and performance (DevTools Network) logs on;
``network_requests(driver)`` lists every request the page made since the last call, read from the
DevTools performance log. ``browser`` is a session-scoped pytest fixture around it.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile

import pytest

from _chromium import CHROME_FLAGS, find_tools


def start_browser(width: int = 1400, height: int = 1000):
    """A selenium Chrome WebDriver on headless Chromium; raises RuntimeError when the tools are missing."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    tools = find_tools()
    if tools is None:
        raise RuntimeError("chromium and chromedriver are not installed (apt-get install chromium chromium-driver)")
    binary, driver_path = tools
    profile = tempfile.mkdtemp(prefix="chromium-selenium-")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in CHROME_FLAGS:
        if not flag.startswith("--window-size"):
            options.add_argument(flag)
    options.add_argument("--window-size=%d,%d" % (width, height))
    options.add_argument("--user-data-dir=" + profile)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver._tfevents_profile = profile
    driver.execute_cdp_cmd("Network.enable", {})
    return driver


def stop_browser(driver) -> None:
    profile = getattr(driver, "_tfevents_profile", None)
    with contextlib.suppress(Exception):
        driver.quit()
    if profile:
        shutil.rmtree(profile, ignore_errors=True)


def network_requests(driver) -> list:
    """URLs of every request (Network.requestWillBeSent) logged since the last call, in order."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def console_messages(driver) -> list:
    """Browser console entries (errors, warnings, CSP violations, failed loads) since the last call."""
    return driver.get_log("browser")


def open_file(driver, path: str, ready_timeout: float = 30.0) -> None:
    """Load a local file and wait until the page sets ``window.__reportReady``."""
    from selenium.webdriver.support.ui import WebDriverWait
    driver.get("file://" + os.path.abspath(path))
    WebDriverWait(driver, ready_timeout).until(
        lambda d: d.execute_script("return window.__reportReady !== undefined"))


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the whole test session (start-up costs about a second)."""
    try:
        driver = start_browser()
    except RuntimeError as e:
        pytest.skip(str(e))
    yield driver
    stop_browser(driver)
