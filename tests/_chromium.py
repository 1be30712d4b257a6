"""Headless Chromium driven through chromedriver's W3C WebDriver HTTP API (urllib only, no selenium).

``open_page(path)`` loads a local file and returns what a test needs: the browser console log, a PNG
screenshot, and a way to evaluate JavaScript in the page.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

from _tensorboard import free_port

CHROME_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--no-first-run", "--disable-dev-shm-usage",
                "--window-size=1280,1600"]


def find_tools():
    """(chromium binary, chromedriver binary) or None."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        return None
    # Debian's /usr/bin/chromium is a shell wrapper; chromedriver wants the real binary
    real = "/usr/lib/chromium/chromium"
    return (real if os.path.exists(real) else browser), driver


class Page:
    def __init__(self, base: str, session: str):
        self.base, self.session = base, session

    def _call(self, method: str, path: str, body=None):
        return _request(method, "%s/session/%s%s" % (self.base, self.session, path), body)

    def console(self) -> list[dict]:
        """Browser log entries (console messages, uncaught errors, failed loads) since the last call."""
        return self._call("POST", "/se/log", {"type": "browser"})

    def screenshot(self) -> bytes:
        import base64
        return base64.b64decode(self._call("GET", "/screenshot"))

    def js(self, script: str, *args):
        return self._call("POST", "/execute/sync", {"script": script, "args": list(args)})


def _request(method: str, url: str, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            payload = json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as e:
        raise RuntimeError("webdriver %s %s: %s" % (method, url, e.read()[:500])) from None
    return payload.get("value")


@contextlib.contextmanager
def open_page(path: str, tools):
    browser, driver = tools
    port = free_port()
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    proc = subprocess.Popen([driver, "--port=%d" % port], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = "http://127.0.0.1:%d" % port
    session = None
    try:
        deadline = time.time() + 20
        while True:
            try:
                _request("GET", base + "/status")
                break
            except (urllib.error.URLError, ConnectionError, RuntimeError):
                if time.time() > deadline:
                    raise RuntimeError("chromedriver did not start")
                time.sleep(0.1)
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": browser, "args": CHROME_FLAGS + ["--user-data-dir=" + profile]},
            "goog:loggingPrefs": {"browser": "ALL"},
        }}}
        session = _request("POST", base + "/session", caps)["sessionId"]
        page = Page(base, session)
        page._call("POST", "/url", {"url": "file://" + os.path.abspath(path)})
        yield page
    finally:
        if session:
            with contextlib.suppress(Exception):
                _request("DELETE", "%s/session/%s" % (base, session))
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
        if proc.poll() is None:
            proc.kill()
        shutil.rmtree(profile, ignore_errors=True)
