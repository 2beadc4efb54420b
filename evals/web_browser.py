"""Debian's headless Chromium driven by Selenium: the consult page's tests (tests/test_web_page*.py) and
screenshots (evals/web_screenshots.py).

Why these settings: the browser and its driver are the system's (``apt-get install chromium
chromium-driver``, done by .ci/run), given by path so Selenium Manager never downloads anything; the flags
turn off every background request Chromium makes by itself (updates, sync, field trials), so the network
log a test reads holds only what the page asked for. The performance log is that network log.

The network is unplugged for the page: every request goes through a proxy that does not exist
(``--proxy-server`` on a closed port), and Chromium sends only loopback requests direct, so only the test
server on 127.0.0.1 can answer; anything else the page asked for would fail, and :func:`foreign_requests`
finds it in the log.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
UNPLUGGED_PORT = 9
"""The discard port: nothing listens on it here, so a proxied request fails at once."""
NETWORK_SCHEMES = ("http:", "https:", "ws:", "wss:", "ftp:")
"""URLs that reach a host (the browser's own ``chrome://`` pages and ``data:`` URLs do not)."""
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--disable-features=Translate,OptimizationHints,MediaRouter",
    "--metrics-recording-only",
    "--no-default-browser-check",
    "--window-size=1280,900",
    f"--proxy-server=http://127.0.0.1:{UNPLUGGED_PORT}",  # no host but loopback is reachable
)
T = TypeVar("T")


@contextmanager
def chromium(downloads: Path | None = None) -> Iterator[webdriver.Chrome]:
    """A fresh headless Chromium (its own profile directory) with the performance log on."""
    with tempfile.TemporaryDirectory(prefix="evigraph-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in (*FLAGS, f"--user-data-dir={profile}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
        if downloads is not None:
            options.add_experimental_option(
                "prefs", {"download.default_directory": str(downloads), "download.prompt_for_download": False}
            )
        driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
        driver.set_page_load_timeout(60)
        try:
            yield driver
        finally:
            driver.quit()


def wait_for(check: Callable[[], T | None], timeout: float = 60.0, what: str = "the page") -> T:
    """Poll ``check`` until it returns something truthy (exceptions count as not yet)."""
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while time.monotonic() < deadline:
        try:
            found = check()
            if found:
                return found
        except Exception as exc:  # an element not there yet, a stale reference while the page re-renders
            last = exc
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what} (last error: {last!r})")


def visible(driver: webdriver.Chrome, css: str, timeout: float = 60.0) -> WebElement:
    return wait_for(
        lambda: next((e for e in driver.find_elements(By.CSS_SELECTOR, css) if e.is_displayed()), None),
        timeout,
        css,
    )


def turns(driver: webdriver.Chrome) -> list[WebElement]:
    return driver.find_elements(By.CSS_SELECTOR, "#turns article.turn")


def ask(driver: webdriver.Chrome, question: str) -> None:
    """Type the question and press Enter (Shift+Enter would start a new line)."""
    box = visible(driver, "#question")
    box.clear()
    box.send_keys(question)
    box.send_keys("\n")


def ask_and_wait(driver: webdriver.Chrome, question: str, timeout: float = 120.0) -> WebElement:
    """Ask and return the new turn once the page has rendered it."""
    before = len(turns(driver))
    ask(driver, question)
    wait_for(lambda: len(turns(driver)) > before, timeout, f"the answer to {question!r}")
    return turns(driver)[-1]


def requested_urls(driver: webdriver.Chrome) -> list[str]:
    """Every URL the browser requested since the last call (from the performance log)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(str(message["params"]["request"]["url"]))
    return urls


def blank_page(driver: webdriver.Chrome) -> None:
    """Leave the page (its scripts stop asking anything) and empty the network log: a test's log then holds
    only what its own pages requested."""
    driver.get("about:blank")
    requested_urls(driver)


def foreign_requests(driver: webdriver.Chrome, origin: str) -> list[str]:
    """The URLs the browser requested from any host but ``origin`` since the log was last read (which must
    hold at least one request to ``origin``, so a log that records nothing cannot pass)."""
    urls = requested_urls(driver)
    assert any(u.startswith(origin + "/") for u in urls), f"no request to {origin} in the log: {urls[:5]}"
    return [u for u in urls if u.startswith(NETWORK_SCHEMES) and not u.startswith(origin + "/")]


def record_dom_order(driver: webdriver.Chrome) -> None:
    """Record, in order, each step line and each answer the page adds (read with :func:`dom_order`)."""
    driver.execute_script(
        """
        window.__order = [];
        const watch = (id, kind) => new MutationObserver((records) => {
          for (const r of records) {
            for (const n of r.addedNodes) if (n.nodeType === 1) window.__order.push(kind);
          }
        }).observe(document.getElementById(id), {childList: true});
        watch('steps', 'step');
        watch('turns', 'turn');
        """
    )


def dom_order(driver: webdriver.Chrome) -> list[str]:
    order: Any = driver.execute_script("return window.__order || [];")
    return [str(x) for x in order]
