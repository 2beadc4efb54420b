"""The consult page's accessibility (issue 19, item 6) in Debian's headless Chromium against a real offline
server on the slice KB: keyboard alone, visible focus, accessible names, a narrow screen and 200 % zoom,
light and dark.

How zoom is modelled: browser zoom at 200 % in a 1280-px-wide window lays the page out in a 640-CSS-px
viewport at 2 device pixels per CSS pixel (media queries see 640 px). CDP ``setDeviceMetricsOverride`` with
width 640 and ``deviceScaleFactor`` 2 reproduces exactly that. ``deviceScaleFactor`` 2 at width 1280 would
be a high-density screen (same layout, sharper), and CSS ``zoom: 2`` on the root scales the content while
media queries still see 1280 px, so neither is what a reader who zooms gets.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from selenium import webdriver
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement

from evals.web_a11y import (
    emulate_color_scheme,
    emulate_screen,
    focus_ring,
    low_contrast,
    overflow,
    reset_emulation,
    unnamed_controls,
    unnamed_in_accessibility_tree,
)
from evals.web_browser import (
    foreign_requests,
    requested_urls,
    turns,
    visible,
    wait_for,
)
from tests import test_web_page
from tests.http_client import GOUT, Api

browser, downloads, web = test_web_page.browser, test_web_page.downloads, test_web_page.web  # its fixtures
network_log = test_web_page.network_log  # each test's network log starts empty

LONG_QUESTION = "Does https://example.org/" + "hyperuricaemia" * 12 + " matter for gout in xyzzy patients?"
"""A follow-up with a 170-character word, which a narrow screen must wrap, not scroll sideways."""


@pytest.fixture(scope="module")
def consult(web: Api) -> str:
    """A consult of two turns: an answer with passages and chains, then an insufficient long follow-up."""
    consult_id = str(web.call("POST", "/v1/consults", {"question": GOUT}).body["consult_id"])
    assert web.call("POST", f"/v1/consults/{consult_id}/turns", {"question": LONG_QUESTION}).status == 200
    return consult_id


@pytest.fixture(autouse=True)
def plain_screen(browser: webdriver.Chrome) -> Iterator[None]:
    yield
    reset_emulation(browser)


def press(browser: webdriver.Chrome, *keys: str) -> WebElement:
    """Press keys on whatever has the focus (no element is clicked or targeted) and return the focus."""
    ActionChains(browser).send_keys(*keys).perform()
    return browser.switch_to.active_element


def tab_to(browser: webdriver.Chrome, css: str, limit: int = 60) -> WebElement:
    """Press Tab until the focused element matches ``css``."""
    for _ in range(limit):
        focused = press(browser, Keys.TAB)
        if browser.execute_script("return document.activeElement.matches(arguments[0]);", css):
            return focused
    raise AssertionError(f"Tab never reached {css}")


def open_consult(browser: webdriver.Chrome, web: Api, consult_id: str) -> WebElement:
    """The consult's page with a passage and a chain citation open under its first answer."""
    browser.get(f"{web.url}/c/{consult_id}")
    wait_for(lambda: len(turns(browser)) == 2, what="the consult's turns")
    first = turns(browser)[0]
    first.find_element(By.CSS_SELECTOR, ".answer li .cite.passage").click()
    first.find_element(By.CSS_SELECTOR, ".cite.chain").click()
    assert len(browser.find_elements(By.CSS_SELECTOR, ".citation")) == 2
    return first


def test_keyboard_alone_asks_and_opens_and_closes_citations(web: Api, browser: webdriver.Chrome) -> None:
    browser.get(web.url + "/")
    visible(browser, "#question")
    skip = press(browser, Keys.TAB)  # the first Tab stop leads past the header and the consult list
    assert skip.text == "Skip to the question" and skip.location["x"] >= 0  # shown when focused
    assert press(browser, Keys.ENTER).get_attribute("id") == "question"

    ActionChains(browser).send_keys("Gout:").key_down(Keys.SHIFT).send_keys(Keys.ENTER).key_up(
        Keys.SHIFT
    ).send_keys("treatment?").perform()
    assert browser.find_element(By.ID, "question").get_attribute("value") == "Gout:\ntreatment?"
    assert not browser.find_element(By.ID, "running").is_displayed()  # Shift+Enter did not send
    assert not [u for u in requested_urls(browser) if "/v1/" in u]
    ActionChains(browser).key_down(Keys.CONTROL).send_keys("a").key_up(Keys.CONTROL).send_keys(
        Keys.BACKSPACE, GOUT, Keys.ENTER
    ).perform()
    turn = wait_for(lambda: turns(browser), 120, what="the answer")[0]
    heading = turn.find_element(By.TAG_NAME, "h3")
    wait_for(lambda: browser.switch_to.active_element == heading, 10, what="the answer to take the focus")

    cite = tab_to(browser, ".cite.passage")
    assert press(browser, Keys.ENTER) == cite and cite.get_attribute("aria-expanded") == "true"
    assert visible(browser, ".citation.passage").find_element(By.TAG_NAME, "mark").text
    assert press(browser, Keys.ESCAPE) == cite  # Escape closes it and leaves the focus on the citation
    assert cite.get_attribute("aria-expanded") == "false"
    assert not browser.find_elements(By.CSS_SELECTOR, ".citation")

    chain = tab_to(browser, ".cite.chain")
    press(browser, Keys.ENTER)
    assert visible(browser, ".citation.chain svg g.node")
    close = tab_to(browser, ".citation .close")  # into the open panel, then its close button
    assert close.get_attribute("aria-label") == "Close the citation"
    assert press(browser, Keys.ENTER) == chain and not browser.find_elements(By.CSS_SELECTOR, ".citation")
    assert foreign_requests(browser, web.url) == []


def test_every_tab_stop_shows_a_visible_focus_ring(web: Api, browser: webdriver.Chrome, consult: str) -> None:
    open_consult(browser, web, consult)
    browser.execute_script("document.activeElement.blur(); window.scrollTo(0, 0);")
    rings = []
    for _ in range(120):
        press(browser, Keys.TAB)
        ring = focus_ring(browser)
        if rings and ring == rings[0]:
            break  # once round the page
        if ring["element"] != "body":  # past the last stop the focus leaves the page, then starts again
            rings.append(ring)
    seen = {r["element"] for r in rings}
    for kind in ("a.skip", "textarea#question", "select#task", "button#send", "button.cite.passage",
                 "button.cite.chain", "button.close", "button.link", "a#export-md"):  # fmt: skip
        assert kind in seen, (kind, seen)
    unmarked = [r for r in rings if not (r["outline"] or r["shadow"])]
    assert unmarked == []
    faint = [r for r in rings if r["outline"] and r["contrast"] < 3]  # WCAG 1.4.11: 3:1 for a focus ring
    assert faint == []


def test_every_control_link_and_image_has_an_accessible_name(
    web: Api, browser: webdriver.Chrome, consult: str
) -> None:
    open_consult(browser, web, consult)
    assert browser.find_elements(By.CSS_SELECTOR, "svg[role=img]")  # the chain drawing is an image
    assert unnamed_controls(browser) == []  # hidden ones too (the Stop button)
    assert unnamed_in_accessibility_tree(browser) == []
    names = {
        (n["role"]["value"], n.get("name", {}).get("value"))
        for n in browser.execute_cdp_cmd("Accessibility.getFullAXTree", {})["nodes"]
        if not n.get("ignored") and "role" in n
    }
    assert {("textbox", "Question"), ("combobox", "Task"), ("button", "Ask")} <= names
    assert any(role == "button" and str(name).startswith("Citation 1: ") for role, name in names)


@pytest.mark.parametrize(
    ("width", "height", "scale"),
    [(400, 800, 1), (640, 450, 2)],  # a phone-narrow window; a 1280 × 900 window zoomed to 200 %
    ids=["400px", "1280px-at-200pc"],
)
def test_narrow_screen_and_200_percent_zoom_need_no_sideways_scrolling(
    web: Api, browser: webdriver.Chrome, consult: str, width: int, height: int, scale: int
) -> None:
    emulate_screen(browser, width, height, scale)
    open_consult(browser, web, consult)
    assert browser.execute_script("return [window.innerWidth, window.devicePixelRatio];") == [width, scale]
    assert LONG_QUESTION in turns(browser)[1].text.replace("\n", "")
    measured = overflow(browser)
    assert measured["scrollWidth"] <= measured["innerWidth"] and measured["sticking_out"] == [], measured
    box = browser.find_element(By.ID, "question")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", box)
    left, right = browser.execute_script(
        "const r = arguments[0].getBoundingClientRect(); return [r.left, r.right];", box
    )
    assert box.is_displayed() and left >= 0 and right <= width and right - left >= 0.75 * width
    consults = browser.find_element(By.ID, "consult-list")
    assert consults.location["y"] > box.location["y"]  # one column: the consult list below the question


def test_light_and_dark_follow_the_system_and_keep_text_readable(
    web: Api, browser: webdriver.Chrome, consult: str
) -> None:
    open_consult(browser, web, consult)
    browser.find_element(By.ID, "question").click()
    press(browser, Keys.ENTER)  # an empty question: the message box shows too
    assert visible(browser, "#message").text
    backgrounds = {}
    for scheme in ("light", "dark"):
        emulate_color_scheme(browser, scheme)
        query = f"return matchMedia('(prefers-color-scheme: {scheme})').matches;"
        assert browser.execute_script(query)
        backgrounds[scheme] = browser.execute_script(
            "return getComputedStyle(document.body).backgroundColor;"
        )
        assert low_contrast(browser) == [], scheme  # every text ≥ 4.5:1 (WCAG 1.4.3 AA)
        browser.find_element(By.ID, "question").click()
        assert focus_ring(browser)["contrast"] >= 3, scheme
    assert backgrounds == {"light": "rgb(255, 255, 255)", "dark": "rgb(15, 19, 23)"}
