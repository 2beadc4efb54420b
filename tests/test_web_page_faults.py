"""The consult page when a turn is slow or the server goes away, in Debian's headless Chromium.

A slow turn is a real one: the server runs in LLM mode against an endpoint that accepts and never answers
(the benchmark's ``hung_server``), so its first LLM call waits for the turn's deadline. On it: the Stop
button cancels the running follow-up and the consult keeps its earlier turn (and its lock is released); a
full server answers 429 with Retry-After, which the page shows and retries until the turn runs; a server
killed mid-turn and started again is found by the page, which shows the stored consult and says the turn
did not finish. Stop on a new consult's first turn leaves no consult and a clean page. A consult store that
goes down (Postgres refusing connections) is a 503 with Retry-After, which the page shows and retries — also
when the outage hits inside a streamed turn, where it arrives as the stream's ``error`` event.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By

from agent.llm import make_chat_model
from evals.bench_llm_deadline import hung_server
from evals.web_browser import (
    ask,
    ask_and_wait,
    blank_page,
    chromium,
    foreign_requests,
    turns,
    visible,
    wait_for,
)
from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings
from tests.http_client import FOLLOW_UP, GOUT, Api, Response, api_settings, running_api
from tests.postgres_fixture import postgres_database_url, postgres_url  # noqa: F401
from tests.server_scripts import port_answers
from tests.test_faults_store import set_outage

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    with chromium() as driver:
        yield driver


@pytest.fixture(autouse=True)
def network_log(browser: webdriver.Chrome) -> None:
    blank_page(browser)


@contextmanager
def slow_server(
    settings: Settings, kb: KnowledgeBase | None, deadline_s: float, **limits: object
) -> Iterator[Api]:
    """The API in LLM mode against a hung endpoint: each turn's LLM calls wait ``deadline_s``."""
    url, stop, held = hung_server()
    llm_settings = settings.model_copy(
        update={
            "llm_base_url": url,
            "llm_enabled": True,
            "llm_structured": "json_schema",
            "llm_turn_deadline_s": deadline_s,
        }
    )
    with running_api(llm_settings, kb, llm=make_chat_model(llm_settings), **limits) as api:
        try:
            yield api
        finally:  # end the hung calls first, so the server's worker threads finish and it stops at once
            stop.set()
            for conn in held:
                conn.close()


@contextmanager
def stored_and_slow(kb: KnowledgeBase, kb_root: Path, data_dir: Path) -> Iterator[tuple[Api, Api, str]]:
    """An offline server, a slow one over the same consult store, and a consult of one turn stored in it."""
    settings = api_settings(kb_root, data_dir)
    with running_api(settings, kb) as offline, slow_server(settings, kb, 60) as slow:
        yield offline, slow, offline.call("POST", "/v1/consults", {"question": GOUT}).body["consult_id"]


def test_stop_cancels_the_running_follow_up_and_keeps_the_consult(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path, browser: webdriver.Chrome
) -> None:
    with stored_and_slow(slice_kb, slice_kb_root, tmp_path) as (offline, slow, consult_id):
        browser.get(f"{slow.url}/c/{consult_id}")
        wait_for(lambda: len(turns(browser)) == 1, what="the stored turn")
        ask(browser, FOLLOW_UP)
        visible(browser, "#steps li")  # the turn runs (and waits on the hung LLM)
        assert slow.service.admitted == 1
        browser.find_element(By.ID, "stop").click()
        message = wait_for(lambda: "stopped" in (m := browser.find_element(By.ID, "message")).text and m, 30)
        assert "keeps its earlier turns" in message.text
        wait_for(lambda: slow.service.admitted == 0, 30, what="the cancelled turn to end")
        wait_for(lambda: not browser.find_element(By.ID, "running").is_displayed(), what="the steps to close")
        assert len(turns(browser)) == 1
        assert slow.stored_consults() == {consult_id: 1}
        follow_up = offline.call("POST", f"/v1/consults/{consult_id}/turns", {"question": FOLLOW_UP})
        assert follow_up.status == 200  # the consult's lock was released: the next turn runs
        assert slow.stored_consults() == {consult_id: 2}
        assert foreign_requests(browser, slow.url) == []


def test_a_busy_server_shows_retry_after_and_the_page_retries(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path, browser: webdriver.Chrome
) -> None:
    settings = api_settings(slice_kb_root, tmp_path)
    with slow_server(settings, slice_kb, 6, max_parallel_turns=1, max_queued_turns=0) as slow:
        occupied: list[Response] = []
        blocker = threading.Thread(
            target=lambda: occupied.append(slow.call("POST", "/v1/consults", {"question": GOUT})), daemon=True
        )
        blocker.start()
        wait_for(lambda: slow.service.admitted == 1, 30, what="the first turn to take the only slot")
        browser.get(slow.url + "/")
        ask(browser, FOLLOW_UP)
        busy = wait_for(lambda: "Retry-After" in (m := browser.find_element(By.ID, "message")).text and m, 30)
        assert "HTTP 429" in busy.text and "retrying in" in busy.text
        wait_for(lambda: len(turns(browser)) == 1, 90, what="the retried turn's answer")
        blocker.join(30)
        assert occupied and occupied[0].status == 201
        assert len(slow.stored_consults()) == 2
        assert foreign_requests(browser, slow.url) == []


def test_stop_on_a_new_consults_first_turn_leaves_a_clean_page_and_no_consult(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path, browser: webdriver.Chrome
) -> None:
    with stored_and_slow(slice_kb, slice_kb_root, tmp_path) as (_, slow, kept):
        browser.get(slow.url + "/")
        visible(browser, "#consult-list a")
        browser.execute_script(
            "document.querySelectorAll('#consult-list li').forEach(li => li.dataset.old = 1)"
        )
        ask(browser, FOLLOW_UP)
        visible(browser, "#steps li")  # the new consult's first turn runs (and waits on the hung LLM)
        new = browser.current_url.rsplit("/c/", 1)[1]
        assert new != kept and slow.service.admitted == 1
        browser.find_element(By.ID, "stop").click()
        message = wait_for(lambda: "Stopped" in (m := browser.find_element(By.ID, "message")).text and m, 30)
        assert "nothing was kept" in message.text and "earlier turns" not in message.text
        wait_for(lambda: slow.service.admitted == 0, 30, what="the cancelled turn to end")
        wait_for(lambda: not browser.find_elements(By.CSS_SELECTOR, "#consult-list li[data-old]"), 30)
        listed = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "#consult-list a")]
        assert listed == [f"{slow.url}/c/{kept}"]  # the stopped consult is not listed, the other one is
        assert browser.current_url == slow.url + "/" and turns(browser) == []
        assert not browser.find_element(By.ID, "consult-head").is_displayed()
        assert not browser.find_element(By.ID, "running").is_displayed()
        assert slow.stored_consults() == {kept: 1}
        assert slow.call("GET", f"/web/consults/{new}").status == 404
        assert browser.find_element(By.ID, "send").is_enabled()
        assert foreign_requests(browser, slow.url) == []


@pytest.fixture()
def outage(postgres_url: str, postgres_database_url: str) -> Callable[[bool], None]:  # noqa: F811
    """Take the test's Postgres database down (True) or let it up again (False)."""
    database = postgres_database_url.rsplit("/", 1)[1]
    return lambda down: set_outage(postgres_url, database, down)


def test_a_store_outage_shows_the_503_and_retry_after_and_the_page_retries(
    slice_kb: KnowledgeBase,
    slice_kb_root: Path,
    tmp_path: Path,
    postgres_database_url: str,  # noqa: F811
    outage: Callable[[bool], None],
    browser: webdriver.Chrome,
) -> None:
    settings = api_settings(slice_kb_root, tmp_path).model_copy(
        update={"checkpoint_url": postgres_database_url}
    )
    with running_api(settings, slice_kb) as api:
        browser.get(api.url + "/")
        visible(browser, "#consult-list li.muted")  # "No consults yet.": the list was read before the outage
        outage(True)
        try:
            ask(browser, GOUT)  # a new consult: the store fails inside the streamed turn
            busy = wait_for(
                lambda: "Retry-After" in (m := browser.find_element(By.ID, "message")).text and m, 60
            )
            assert "HTTP 503" in busy.text and "retrying in" in busy.text and "Postgres" in busy.text
        finally:
            outage(False)
        turn = wait_for(lambda: turns(browser), 90, what="the retried turn's answer")[0]
        assert turn.find_element(By.CSS_SELECTOR, ".question").text == GOUT
        consult_id = browser.current_url.rsplit("/c/", 1)[1]
        assert [t["question"] for t in api.call("GET", f"/v1/consults/{consult_id}").body["turns"]] == [GOUT]
        listed = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#consult-list a"), 30)
        assert [a.get_attribute("href") for a in listed] == [browser.current_url]  # the failed try left none

        outage(True)  # a follow-up: the store fails before the stream
        try:
            ask(browser, FOLLOW_UP)
            busy = wait_for(
                lambda: "HTTP 503" in (m := browser.find_element(By.ID, "message")).text and m, 60
            )
            assert "Retry-After 10 s" in busy.text
        finally:
            outage(False)
        wait_for(lambda: len(turns(browser)) == 2, 90, what="the retried follow-up")
        assert browser.current_url == f"{api.url}/c/{consult_id}"
        assert foreign_requests(browser, api.url) == []


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serve_process(
    kb_root: Path, data_dir: Path, port: int, llm_url: str | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """``evigraph serve`` in its own process (offline, or in LLM mode against ``llm_url``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVIGRAPH_", "OPENAI_"))}
    env.update(EVIGRAPH_DATA_DIR=str(data_dir), PYTHONPATH=str(REPO))
    command = [
        sys.executable,
        "-m",
        "agent.frontends.cli",
        "serve",
        "--port",
        str(port),
        "--kb-dir",
        str(kb_root),
    ]
    if llm_url is None:
        command.append("--offline")
    else:
        env.update(
            EVIGRAPH_LLM_BASE_URL=llm_url,
            EVIGRAPH_LLM_STRUCTURED="json_schema",
            EVIGRAPH_LLM_TURN_DEADLINE_S="120",
        )
    log_path = data_dir / f"serve-{port}-{'llm' if llm_url else 'offline'}.log"
    log = log_path.open("wb")
    process = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for(
            lambda: port_answers(port) or process.poll() is not None, 90, what="evigraph serve to listen"
        )
        assert process.poll() is None, log_path.read_text(errors="replace")
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
        process.wait(30)
        log.close()


def test_a_server_killed_mid_turn_is_reconnected_and_the_stored_consult_shown(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path, browser: webdriver.Chrome
) -> None:
    settings = api_settings(slice_kb_root, tmp_path)
    with running_api(settings, slice_kb) as offline:
        consult_id = offline.call("POST", "/v1/consults", {"question": GOUT}).body["consult_id"]
    port = free_port()
    url, stop, held = hung_server()
    try:
        with serve_process(slice_kb_root, tmp_path, port, llm_url=url) as first:
            browser.get(f"http://127.0.0.1:{port}/c/{consult_id}")
            wait_for(lambda: len(turns(browser)) == 1, what="the stored turn")
            ask(browser, FOLLOW_UP)
            visible(browser, "#steps li")
            first.send_signal(signal.SIGKILL)  # the server dies mid-turn
            first.wait(30)
            wait_for(lambda: "reconnecting" in browser.find_element(By.ID, "message").text, 30)
            with serve_process(slice_kb_root, tmp_path, port):
                message = wait_for(
                    lambda: "Reconnected" in (m := browser.find_element(By.ID, "message")).text and m, 90
                )
                assert "did not finish" in message.text
                assert len(turns(browser)) == 1
                ask_and_wait(browser, FOLLOW_UP)  # and the consult goes on on the new server
                assert len(turns(browser)) == 2
                assert foreign_requests(browser, f"http://127.0.0.1:{port}") == []
    finally:
        stop.set()
        for conn in held:
            conn.close()
