"""Headless Chromium driven with selenium: the one browser helper of the tests (and benchmarks/report_bench.py).

``start_browser()`` starts Debian's chromium through its chromedriver with the flags that work on this machine,
with the browser console log and the DevTools performance (Network) log on; ``stop_browser()`` quits it and
removes its profile. It raises BrowserMissing (a RuntimeError) when chromium or chromedriver is not installed.

Fixtures (import both names into a test module: ``from _browser import browser, browser_session``):
``browser_session`` is one browser for the whole test session (start-up costs about a second); ``browser`` hands
it to a test reset: on about:blank, the window at ``WINDOW``, its console and network logs read and dropped.
Both skip the test, with ``MISSING`` as the reason, when the tools are missing; ``required_browser(request)``
fails it instead (where a browser is a requirement, not an option).

Page helpers: ``load(driver, url)`` (the url's origin starts with no stored data and an empty cache, as in a
fresh browser), ``open_file(driver, path)`` (a local report, waiting for ``window.__reportReady``),
``console_messages(driver)`` and ``network_requests(driver)`` (what was logged since the last call). The rest is
selenium's WebDriver: ``execute_script``, ``get_screenshot_as_png``, ``set_window_size``, ``find_element``.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import urllib.parse

import pytest

CHROME_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--no-first-run", "--disable-dev-shm-usage"]
WINDOW = (1400, 1000)
MISSING = "chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"


class BrowserMissing(RuntimeError):
    """chromium or chromedriver is not installed."""


def find_tools():
    """(chromium binary, chromedriver binary) or None."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        return None
    # Debian's /usr/bin/chromium is a shell wrapper; chromedriver wants the real binary
    real = "/usr/lib/chromium/chromium"
    return (real if os.path.exists(real) else browser), driver


def start_browser(width: int = WINDOW[0], height: int = WINDOW[1]):
    """A selenium Chrome WebDriver on headless Chromium; raises BrowserMissing when the tools are missing."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    tools = find_tools()
    if tools is None:
        raise BrowserMissing(MISSING)
    binary, driver_path = tools
    profile = tempfile.mkdtemp(prefix="chromium-selenium-")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in CHROME_FLAGS:
        options.add_argument(flag)
    options.add_argument("--window-size=%d,%d" % (width, height))
    options.add_argument("--user-data-dir=" + profile)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    try:
        driver = webdriver.Chrome(service=Service(driver_path), options=options)
    except BaseException:
        shutil.rmtree(profile, ignore_errors=True)
        raise
    driver._tfevents_profile = profile
    driver.execute_cdp_cmd("Network.enable", {})
    return driver


def stop_browser(driver) -> None:
    profile = getattr(driver, "_tfevents_profile", None)
    with contextlib.suppress(Exception):
        driver.quit()
    if profile:
        shutil.rmtree(profile, ignore_errors=True)


def reset(driver, width: int = WINDOW[0], height: int = WINDOW[1]) -> None:
    """Back to a blank page with the window at ``width`` x ``height``, the console and network logs emptied."""
    driver.get("about:blank")
    driver.set_window_size(width, height)
    console_messages(driver)
    network_requests(driver)


def load(driver, url: str) -> None:
    """Navigate to ``url`` with its origin's stored data (localStorage, cookies, ...) and the HTTP cache cleared
    first, so a page served from a port an earlier test used starts as in a fresh browser."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme in ("http", "https"):
        origin = "%s://%s" % (parts.scheme, parts.netloc)
        driver.execute_cdp_cmd("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})
        driver.execute_cdp_cmd("Network.clearBrowserCache", {})
    driver.get(url)


def open_file(driver, path: str, ready_timeout: float = 30.0) -> None:
    """Load a local file and wait until the page sets ``window.__reportReady``."""
    from selenium.webdriver.support.ui import WebDriverWait
    driver.get("file://" + os.path.abspath(path))
    WebDriverWait(driver, ready_timeout).until(
        lambda d: d.execute_script("return window.__reportReady !== undefined"))


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


@pytest.fixture(scope="session")
def browser_session():
    """One headless Chromium for the whole test session; skips when chromium or chromedriver is missing."""
    try:
        driver = start_browser()
    except BrowserMissing as e:
        pytest.skip(str(e))
    yield driver
    stop_browser(driver)


@pytest.fixture
def browser(browser_session):
    """The session's browser, reset for this test (``reset``: about:blank, ``WINDOW`` size, logs emptied)."""
    reset(browser_session)
    return browser_session


def required_browser(request, why: str = "this test needs a browser"):
    """The ``browser`` fixture's browser for a test that must not be skipped: a missing chromium or chromedriver
    fails the test (with ``why`` and ``MISSING``) instead."""
    if find_tools() is None:
        pytest.fail("%s: %s" % (why, MISSING))
    return request.getfixturevalue("browser")
