"""The consult page in a real browser: Debian's headless Chromium (Selenium) against a real offline server on
the slice KB — the same app ``evigraph serve --offline`` runs, on a free port of 127.0.0.1.

What a clinician relies on: a question shows its steps as they arrive and then the answer; each ``[n]``
opens its passage in place with the cited sentence highlighted, each chain citation draws the chain; a
follow-up continues the consult, a reload of its permalink resumes it; "Show all" lists every retrieved
passage and chain; the exports download; bad input is a message, an unknown consult a 404 page; KB text
carrying markup or escape codes stays inert text; the page asks nothing of any other host (the browser's
network log, page loads included); with a token, the page asks for it once and again when it goes stale, and
a logout ends the session on the server, so the old cookie no longer opens anything.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr
from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from agent.frontends.web_auth import SESSION_COOKIE, SESSION_MAX_AGE_S, session_mac
from evals.web_a11y import unnamed_controls
from evals.web_browser import (
    ask,
    ask_and_wait,
    blank_page,
    chromium,
    dom_order,
    foreign_requests,
    record_dom_order,
    turns,
    visible,
    wait_for,
)
from graphs.kb import KnowledgeBase
from tests.http_client import FOLLOW_UP, GOUT, Api, api_settings, running_api
from tests.test_sanitize import add_hostile_document

HOSTILE_TEXT = (
    "Allopurinol is taken daily to prevent gout flares. <script>document.title='pwned-script'</script> "
    "<img src=x onerror=\"document.title='pwned-img'\"> \x1b[2J\x1b[31mred alert\x1b[0m "
    "Colchicine and allopurinol lower uric acid and treat gout attacks in adults."
)
HOSTILE_QUESTION = "Is allopurinol taken daily to prevent gout flares?"


@pytest.fixture(scope="module")
def downloads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def browser(downloads: Path) -> Iterator[webdriver.Chrome]:
    with chromium(downloads) as driver:
        yield driver


@pytest.fixture(scope="module")
def web(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Api]:
    with running_api(api_settings(slice_kb_root, tmp_path_factory.mktemp("web")), slice_kb) as api:
        yield api


@pytest.fixture(autouse=True)
def network_log(browser: webdriver.Chrome) -> None:
    blank_page(browser)  # each test's network log starts empty, and its pages' own loads are in it


def open_page(browser: webdriver.Chrome, web: Api, path: str = "/") -> None:
    browser.get(web.url + path)
    visible(browser, "#question")


def assert_only_local_requests(browser: webdriver.Chrome, web: Api) -> None:
    assert foreign_requests(browser, web.url) == []


def test_a_question_shows_its_steps_then_the_answer_and_its_citations_open(
    web: Api, browser: webdriver.Chrome
) -> None:
    open_page(browser, web)
    record_dom_order(browser)
    turn = ask_and_wait(browser, GOUT)
    order = dom_order(browser)
    assert order.count("step") >= 7 and order.index("step") < order.index("turn"), order  # streamed first
    steps = [li.get_attribute("textContent") for li in browser.find_elements(By.CSS_SELECTOR, "#steps li")]
    assert "linked: gout (Disease)" in steps and any(s.startswith("round 1: sufficient") for s in steps)
    assert turn.find_element(By.CSS_SELECTOR, ".status .badge").text == "answered"
    assert f"KB {web.service.kb.version} · offline mode" in turn.find_element(By.CSS_SELECTOR, ".footer").text
    assert "Decision support only" in browser.find_element(By.ID, "safety").text
    consult_id = browser.current_url.rsplit("/c/", 1)[1]
    assert web.stored_consults() == {consult_id: 1}

    # [n] of a key sentence: the passage opens under it, the sentence highlighted, its document named.
    sentence = next(
        li
        for li in turn.find_elements(By.CSS_SELECTOR, ".answer li")
        if li.find_elements(By.CSS_SELECTOR, ".cite.passage")
    )
    said = sentence.text.split(" [")[0]
    sentence.find_element(By.CSS_SELECTOR, ".cite.passage").click()
    panel = visible(browser, ".citation.passage")
    marked = panel.find_element(By.TAG_NAME, "mark").text
    assert marked and marked in said and len(marked) > 40
    assert "medquad:" in panel.text and "MedQuAD" in panel.text
    assert panel.find_element(By.CSS_SELECTOR, ".cite-title").text.strip() != ""

    # [n] of a KG fact, from the keyboard: the chain drawn as typed nodes and a labelled edge, with its
    # source dataset; Escape closes it again.
    cite = turn.find_element(By.CSS_SELECTOR, ".cite.chain")
    cite.send_keys(Keys.ENTER)
    chain = visible(browser, ".citation.chain")
    assert cite.get_attribute("aria-expanded") == "true"
    graph = chain.find_element(By.CSS_SELECTOR, "svg.chain-graph")
    nodes = graph.find_elements(By.CSS_SELECTOR, "g.node")
    assert len(nodes) == 2 and {"Compound", "Disease"} <= {
        n.find_element(By.CSS_SELECTOR, ".type").text for n in nodes
    }
    assert graph.find_element(By.CSS_SELECTOR, ".relation").text in {"indicated_for", "treats", "palliates"}
    assert "Source datasets:" in chain.text and "not recorded" not in chain.text
    browser.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait_for(lambda: not browser.find_elements(By.CSS_SELECTOR, ".citation.chain"), 10, what="Escape")
    assert_only_local_requests(browser, web)


def test_a_follow_up_continues_and_the_permalink_resumes_after_a_reload(
    web: Api, browser: webdriver.Chrome
) -> None:
    open_page(browser, web)
    ask_and_wait(browser, GOUT)
    consult_id = browser.current_url.rsplit("/c/", 1)[1]
    ask_and_wait(browser, FOLLOW_UP)
    assert browser.current_url == f"{web.url}/c/{consult_id}"
    browser.refresh()
    wait_for(lambda: len(turns(browser)) == 2, what="the stored turns after a reload")
    questions = [t.find_element(By.CSS_SELECTOR, ".question").text for t in turns(browser)]
    assert questions == [GOUT, FOLLOW_UP]
    current = visible(browser, "#consult-list a[aria-current]")
    assert current.text == GOUT and current.get_attribute("href").endswith(f"/c/{consult_id}")
    ask_and_wait(browser, "what about children?")
    assert web.stored_consults()[consult_id] == 3
    assert_only_local_requests(browser, web)


def test_the_consult_exports_as_markdown_and_json(
    web: Api, browser: webdriver.Chrome, downloads: Path
) -> None:
    consult_id = web.call("POST", "/v1/consults", {"question": GOUT}).body["consult_id"]
    open_page(browser, web, f"/c/{consult_id}")
    wait_for(lambda: len(turns(browser)) == 1, what="the consult")
    for link, name in (("export-md", "md"), ("export-json", "json")):
        visible(browser, f"#{link}").click()
        path = downloads / f"evigraph-consult-{consult_id}.{name}"
        wait_for(lambda p=path: p.exists() and p.stat().st_size > 0, 30, f"the {name} download")
    markdown = (downloads / f"evigraph-consult-{consult_id}.md").read_text(encoding="utf-8")
    assert markdown.startswith(f"# EviGraph consult {consult_id}") and "### Citations" in markdown
    exported = json.loads((downloads / f"evigraph-consult-{consult_id}.json").read_text(encoding="utf-8"))
    assert exported["consult_id"] == consult_id and exported["turns"][0]["question"] == GOUT
    assert_only_local_requests(browser, web)


def test_show_all_lists_every_retrieved_passage_and_chain(web: Api, browser: webdriver.Chrome) -> None:
    consult_id = web.call("POST", "/v1/consults", {"question": GOUT}).body["consult_id"]
    answer = web.call("GET", f"/v1/consults/{consult_id}").body["turns"][0]["answer"]
    open_page(browser, web, f"/c/{consult_id}")
    turn = wait_for(lambda: turns(browser), what="the consult")[0]

    def cited(kind: str) -> set[str]:
        return {b.get_attribute("data-id") for b in turn.find_elements(By.CSS_SELECTOR, f".cite.{kind}")}

    compact = cited("passage")
    assert compact < set(answer["evidence_ids"])  # the compact view shows some passages
    more = turn.find_element(By.CSS_SELECTOR, "button.link")
    assert more.text == f"Show all {len(answer['evidence_ids'])} retrieved passages"
    more.send_keys(Keys.ENTER)
    wait_for(lambda: not (t := turns(browser)[0]).find_elements(By.CSS_SELECTOR, "button.link") and t)
    turn = turns(browser)[0]
    assert cited("passage") == set(answer["evidence_ids"]) and cited("chain") == set(answer["chain_texts"])
    assert "All other retrieved passages" in [h.text for h in turn.find_elements(By.TAG_NAME, "h4")]
    assert browser.switch_to.active_element == turn.find_element(By.TAG_NAME, "h3")  # focus not lost
    extra = next(
        b
        for b in turn.find_elements(By.CSS_SELECTOR, ".cite.passage")
        if b.get_attribute("data-id") not in compact
    )
    extra.send_keys(Keys.ENTER)
    panel = visible(browser, ".citation.passage")
    assert (
        extra.get_attribute("data-id") in panel.text
        and panel.find_element(By.CSS_SELECTOR, ".passage-text").text
    )
    browser.refresh()  # the full view is a choice of this page view, not of the consult
    wait_for(lambda: turns(browser)[0].find_elements(By.CSS_SELECTOR, "button.link"), what="the compact view")
    assert_only_local_requests(browser, web)


def test_an_empty_or_huge_question_is_a_message_not_a_blank_page(web: Api, browser: webdriver.Chrome) -> None:
    open_page(browser, web)
    ask(browser, "   ")
    assert "question is empty" in visible(browser, "#message").text
    browser.execute_script("document.getElementById('question').value = 'gout '.repeat(50000);")
    browser.find_element(By.ID, "send").click()
    message = wait_for(
        lambda: "limit" in (m := browser.find_element(By.ID, "message")).text and m, what="413"
    )
    assert "200000 bytes" in message.text
    assert turns(browser) == [] and browser.current_url == web.url + "/"
    assert visible(browser, "#question").is_enabled() and browser.find_element(By.ID, "send").is_enabled()
    assert_only_local_requests(browser, web)


def test_an_unknown_consult_is_a_404_page(web: Api, browser: webdriver.Chrome) -> None:
    browser.get(web.url + "/c/nosuchconsult")
    assert "nosuchconsult" in visible(browser, "#not-found").text
    assert browser.find_element(By.TAG_NAME, "h1").text == "No such consult"
    assert_only_local_requests(browser, web)
    response = web.call("GET", "/c/nosuchconsult")
    assert response.status == 404 and "text/html" in response.headers["content-type"]


def test_the_page_is_served_with_security_headers(web: Api) -> None:
    page = web.call("GET", "/")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
    assert page.headers["x-frame-options"] == "DENY" and page.headers["x-content-type-options"] == "nosniff"
    assert '<script src="/web/static/app.js" defer></script>' in page.text
    assert not re.search(r"<script>|\son\w+=", page.text)  # no inline script or handler
    refused = web.call("POST", "/v1/consults", {"question": GOUT}, headers={"Origin": "http://evil.example"})
    assert refused.status == 403 and "another web origin" in refused.body["error"]


@pytest.fixture()
def hostile_web(kb_copy: Path, tmp_path: Path) -> Iterator[Api]:
    doc = {
        "id": "hostile-web",
        "title": "Gout <b onmouseover=alert(1)>guide</b>\x1b]0;owned\x07",
        "text": HOSTILE_TEXT,
        "source": "Injected\x1b[5m",
        "url": "javascript:alert(1)",
        "date": "2026-01-01",
        "label": "treatment",
        "focus": "gout",
    }
    with running_api(api_settings(add_hostile_document(kb_copy, tmp_path, doc), tmp_path / "data")) as api:
        yield api


def test_a_hostile_passage_is_shown_as_inert_text(hostile_web: Api, browser: webdriver.Chrome) -> None:
    open_page(browser, hostile_web)
    title = browser.title
    turn = ask_and_wait(browser, HOSTILE_QUESTION)
    button = wait_for(
        lambda: next(
            b
            for b in turn.find_elements(By.CSS_SELECTOR, ".cite.passage")
            if b.find_element(By.XPATH, "..").text.find("Allopurinol is taken daily") >= 0
        ),
        what="the hostile passage's citation",
    )
    button.click()
    panel = visible(browser, ".citation.passage")
    text = panel.find_element(By.CSS_SELECTOR, ".passage-text").get_attribute("textContent")
    assert "<script>document.title='pwned-script'</script>" in text and "<img src=x onerror=" in text
    assert "\x1b" not in browser.page_source and "red alert" in text and "[2J" not in text
    assert "<b onmouseover" in panel.text and "javascript:" in panel.text
    assert panel.find_elements(By.TAG_NAME, "a") == []  # a javascript: URL is shown, never linked
    assert browser.find_elements(By.CSS_SELECTOR, "main img, main b, main script") == []
    assert len(browser.find_elements(By.TAG_NAME, "script")) == 1  # app.js only
    assert browser.title == title
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018
    assert_only_local_requests(browser, hostile_web)


def test_the_token_is_asked_once_and_again_when_it_goes_stale(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path, browser: webdriver.Chrome
) -> None:
    with running_api(
        api_settings(slice_kb_root, tmp_path), slice_kb, api_token=SecretStr("s3cret-token")
    ) as api:
        browser.get(api.url + "/")
        visible(browser, "#token").send_keys("wrong-token\n")
        assert "not this server's token" in visible(browser, "#login-message").text
        visible(browser, "#token").send_keys("s3cret-token\n")
        visible(browser, "#question")
        cookie = browser.get_cookie(SESSION_COOKIE)
        assert cookie and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert "s3cret-token" not in cookie["value"]  # an HMAC of the token, not the token
        ask_and_wait(browser, GOUT)  # the stream POST: cookie + CSRF header
        consult_id = browser.current_url.rsplit("/c/", 1)[1]
        status = browser.execute_async_script(
            "const done = arguments[0];"
            "fetch('/v1/consults', {method: 'POST', body: JSON.stringify({question: 'gout?'}),"
            " headers: {'Content-Type': 'application/json'}}).then(r => done(r.status));"
        )
        assert status == 403  # the cookie alone does not authorise a POST: the CSRF header is missing
        assert api.call("GET", f"/web/consults/{consult_id}").status == 401  # nor does anything without it

        api.server.limits.api_token = SecretStr("rotated-token")
        ask(browser, FOLLOW_UP)  # 401 → the page asks for the token again
        visible(browser, "#token").send_keys("rotated-token\n")
        wait_for(lambda: len(turns(browser)) == 1, what="the consult after logging in again")
        assert browser.current_url == f"{api.url}/c/{consult_id}"
        assert api.stored_consults() == {consult_id: 1}
        assert_only_local_requests(browser, api)


def test_logout_forgets_the_session_and_the_old_cookie_stops_working(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path, browser: webdriver.Chrome
) -> None:
    with running_api(api_settings(slice_kb_root, tmp_path), slice_kb, api_token=SecretStr("s3cret")) as api:
        bearer = {"Authorization": "Bearer s3cret"}
        consult_id = api.call("POST", "/v1/consults", {"question": GOUT}, headers=bearer).body["consult_id"]
        browser.get(f"{api.url}/c/{consult_id}")
        visible(browser, "#token").send_keys("s3cret\n")
        wait_for(lambda: len(turns(browser)) == 1, what="the consult after logging in")
        old = {"Cookie": f"{SESSION_COOKIE}={browser.get_cookie(SESSION_COOKIE)['value']}"}
        assert api.call("GET", "/web/consults", headers=old).status == 200

        visible(browser, ".logout button").click()
        visible(browser, "#token")  # the page asks for the token again
        assert unnamed_controls(browser) == []  # the token form's field and button are labelled
        assert browser.get_cookie(SESSION_COOKIE) is None
        status = browser.execute_async_script(
            "const done = arguments[0]; fetch('/web/consults').then(r => done(r.status));"
        )
        assert status == 401
        for path in ("/web/consults", f"/web/consults/{consult_id}", f"/v1/consults/{consult_id}"):
            assert api.call("GET", path, headers=old).status == 401, path  # the old cookie, replayed
        page = api.call("GET", f"/c/{consult_id}", headers=old)
        assert page.status == 401 and 'id="token"' in page.text
        assert api.call("GET", "/web/consults", headers=bearer).status == 200  # the token itself still works

        visible(browser, "#token").send_keys("s3cret\n")  # and logging in again opens a new session
        visible(browser, "#question")
        assert browser.get_cookie(SESSION_COOKIE)["value"] != old["Cookie"].split("=", 1)[1]
        for age, status in ((0, 200), (SESSION_MAX_AGE_S + 5, 401)):  # a session lasts a shift at most
            issued, session = int(time.time()) - age, "ab" * 16
            cookie = f"{SESSION_COOKIE}={issued}.{session}.{session_mac('s3cret', issued, session)}"
            assert api.call("GET", "/web/consults", headers={"Cookie": cookie}).status == status
        assert_only_local_requests(browser, api)
