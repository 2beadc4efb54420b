"""The Slack bot end to end, offline: a real bolt ``App`` behind its WSGI adapter on 127.0.0.1, events signed
with the signing secret and POSTed over HTTP, answers posted to a fake Slack Web API, and the real
consult service (``ServiceRunner``) over the slice KB with a SQLite checkpoint.

What must hold for a clinician in Slack: a mention gets a cited answer in its thread (offline label,
citations, sources, KB version, safety note); a follow-up in the thread continues the same consult, also
after the bot restarts; bad input gets a friendly message, a failure an apology and never a traceback; and
a request not signed with the app's secret is refused without anything being posted; and a thread whose turn
is held up does not hold up another thread's.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from slack_sdk import WebClient
from slack_sdk.signature import SignatureVerifier

from agent.frontends.slack_bot import (
    EMPTY_QUESTION_TEXT,
    EVENTS_PATH,
    make_slack_app,
    make_slack_server,
    slack_consult_id,
)
from agent.nodes.answer import OFFLINE_LABEL, SAFETY_NOTE
from agent.service_runner import ServiceRunner
from agent.serving import ServeSettings
from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings
from tests.fake_slack_api import BOT_USER_ID, TEAM_ID, Call, FakeSlackApi, fake_slack_api, message_text
from tests.openai_stub import HOLD_LIMIT_S, HeldRequest, openai_stub
from tests.test_agent_openai import consultant_for, router

TOKEN = "xoxb-test-token"
SECRET = "test-signing-secret"
CHANNEL = "C0CLINIC1"
GOUT = "What is the treatment for gout?"
URIC_ACID = "What medicines lower uric acid?"
CARBURETOR = "What is the best treatment for a broken carburetor in a 1972 Volkswagen?"


@dataclass
class SlackBot:
    """One running bot: its consult service, its HTTP server and the fake Slack API it talks to."""

    runner: ServiceRunner
    api: FakeSlackApi
    url: str
    stop: Any

    def post(self, body: dict[str, Any], secret: str = SECRET, timestamp: int | None = None) -> int:
        """POST an event as Slack does, signed with ``secret``; return the HTTP status."""
        raw = json.dumps(body)
        ts = str(int(time.time()) if timestamp is None else timestamp)
        signature = SignatureVerifier(secret).generate_signature(timestamp=ts, body=raw) or ""
        request = urllib.request.Request(
            self.url,
            data=raw.encode(),
            headers={
                "Content-Type": "application/json",
                "X-Slack-Request-Timestamp": ts,
                "X-Slack-Signature": signature,
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)

    def answer_to(self, channel: str, thread_ts: str, turn: int = 1) -> Call:
        """The final edit of the bot's ``turn``-th reply in a thread: the message the person reads."""

        def replies() -> list[Call]:
            return [
                c
                for c in self.api.calls_to("chat.postMessage")
                if c["args"].get("channel") == channel and c["args"].get("thread_ts") == thread_ts
            ]

        self.api.wait_for(lambda c: len(replies()) >= turn, f"reply {turn} in thread {thread_ts}")
        working = replies()[turn - 1]
        return self.api.wait_for(
            lambda c: (
                c["method"] == "chat.update"
                and not c.get("refused")  # rate-limited edits (tests/test_slack_reliability.py) never showed
                and c["args"].get("ts") == working["ts"]
                and not str(c["args"].get("text", "")).startswith(":hourglass")
            ),
            f"the answer edited into reply {turn} of thread {thread_ts}",
        )


def event_body(text: str, ts: str, thread_ts: str | None = None, **event: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "type": "app_mention",
        "user": "UCLINICIAN",
        "text": text,
        "ts": ts,
        "channel": CHANNEL,
        "event_ts": ts,
        **event,
    }
    if thread_ts:
        payload["thread_ts"] = thread_ts
    return {
        "token": "legacy-verification-token",
        "team_id": TEAM_ID,
        "api_app_id": "A0EVIGRAPH",
        "event": payload,
        "type": "event_callback",
        "event_id": f"Ev{ts.replace('.', '')}",
        "event_time": int(float(ts)),
        "authorizations": [{"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}],
    }


def start_bot(
    api: FakeSlackApi, runner: ServiceRunner, task: str = "auto", streaming: str | None = None
) -> SlackBot:
    """The bot on a free port, answering with ``runner`` (closed by ``stop``, as when the process ends)."""
    web = WebClient(token=TOKEN, base_url=api.base_url)
    app = make_slack_app(runner, TOKEN, SECRET, client=web, task=task, streaming=streaming)
    server = make_slack_server(app, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()
        runner.close()

    return SlackBot(runner, api, f"http://127.0.0.1:{server.server_address[1]}{EVENTS_PATH}", stop)


def service_runner(settings: Settings, kb: KnowledgeBase, llm: BaseChatModel | None = None) -> ServiceRunner:
    """The consult service the Slack bot runs on (limits from their defaults, not from a ``.env``)."""
    return ServiceRunner(settings, ServeSettings(_env_file=None), kb=kb, llm=llm)


def offline_runner(kb: KnowledgeBase, kb_root: Path, data_dir: Path) -> ServiceRunner:
    """A fresh consult service (as after a restart) keeping consults in ``data_dir/consults.sqlite``."""
    return service_runner(Settings(kb_dir=kb_root, data_dir=data_dir, llm_enabled=False), kb)


@pytest.fixture()
def api() -> Iterator[FakeSlackApi]:
    with fake_slack_api(TOKEN) as fake:
        yield fake


@pytest.fixture()
def bot(
    api: FakeSlackApi, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> Iterator[SlackBot]:
    running = start_bot(api, offline_runner(slice_kb, slice_kb_root, tmp_path))
    yield running
    running.stop()


def test_a_mention_gets_a_cited_answer_in_its_thread(bot: SlackBot) -> None:
    assert bot.post(event_body(f"<@{BOT_USER_ID}> {GOUT}", ts="1700001000.000100")) == 200

    answer = bot.answer_to(CHANNEL, "1700001000.000100")
    shown = message_text(answer)
    kb_version = bot.runner.kb.version
    assert f"*{OFFLINE_LABEL}*" in shown
    assert "[1]" in shown and "*Citations*" in shown and "] `E:" in shown
    assert "*Sources (" in shown and f"KB {kb_version}" in shown and "offline mode" in shown
    assert SAFETY_NOTE in shown
    assert answer["args"]["text"]  # the plain-text fallback for notifications is never empty
    consult_id = slack_consult_id(TEAM_ID, CHANNEL, "1700001000.000100")
    assert f"consult `{consult_id}`" in shown
    turns = bot.runner.history(consult_id)
    assert [t["question"] for t in turns] == [GOUT]  # the mention is not part of the question
    assert turns[0]["answer"]["status"] == "answered"


def test_a_thread_is_one_consult_across_follow_ups_and_a_restart(
    api: FakeSlackApi, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    thread = "1700002000.000100"
    consult_id = slack_consult_id(TEAM_ID, CHANNEL, thread)
    follow_up = URIC_ACID
    first = start_bot(api, offline_runner(slice_kb, slice_kb_root, tmp_path))
    try:
        first.post(event_body(f"<@{BOT_USER_ID}> {GOUT}", ts=thread))
        first.answer_to(CHANNEL, thread)
        first.post(event_body(f"<@{BOT_USER_ID}> {follow_up}", ts="1700002001.000100", thread_ts=thread))
        first.answer_to(CHANNEL, thread, turn=2)
        assert [t["question"] for t in first.runner.history(consult_id)] == [GOUT, follow_up]
    finally:
        first.stop()

    restarted = start_bot(api, offline_runner(slice_kb, slice_kb_root, tmp_path))
    try:
        restarted.post(event_body(f"<@{BOT_USER_ID}> {CARBURETOR}", ts="1700002002.000100", thread_ts=thread))
        shown = message_text(restarted.answer_to(CHANNEL, thread, turn=3))
        assert f"consult `{consult_id}`" in shown and "*Insufficient evidence*" in shown
        turns = restarted.runner.history(consult_id)
        assert [t["question"] for t in turns] == [GOUT, follow_up, CARBURETOR]
    finally:
        restarted.stop()


def test_a_question_the_kb_does_not_cover_says_insufficient_evidence(bot: SlackBot) -> None:
    bot.post(event_body(f"<@{BOT_USER_ID}> {CARBURETOR}", ts="1700003000.000100"))

    shown = message_text(bot.answer_to(CHANNEL, "1700003000.000100"))
    assert "*Insufficient evidence*" in shown and "· insufficient ·" in shown
    assert SAFETY_NOTE in shown and f"KB {bot.runner.kb.version}" in shown


def test_an_empty_mention_gets_a_friendly_prompt_and_starts_no_consult(bot: SlackBot) -> None:
    bot.post(event_body(f"<@{BOT_USER_ID}>  ", ts="1700004000.000100"))

    reply = bot.api.wait_for(lambda c: c["method"] == "chat.postMessage", "answering the empty mention")
    assert reply["args"]["text"] == EMPTY_QUESTION_TEXT
    assert reply["args"]["thread_ts"] == "1700004000.000100"
    assert bot.api.calls_to("chat.update") == []
    consult_id = slack_consult_id(TEAM_ID, CHANNEL, "1700004000.000100")
    assert not bot.runner.exists(consult_id)


def test_a_direct_message_is_answered_and_message_edits_are_not(bot: SlackBot) -> None:
    dm = {"type": "message", "channel": "D0DIRECT1", "channel_type": "im"}
    edited = {**dm, "subtype": "message_changed"}
    bot.post(event_body("Some edited text", ts="1700005000.000100", **edited))
    bot.post(event_body(GOUT, ts="1700005001.000100", **dm))

    shown = message_text(bot.answer_to("D0DIRECT1", "1700005001.000100"))
    assert f"*{OFFLINE_LABEL}*" in shown
    replied = {c["args"].get("thread_ts") for c in bot.api.calls_to("chat.postMessage")}
    assert replied == {"1700005001.000100"}  # the edit event got no reply


def test_a_bad_signature_or_a_replayed_request_is_refused_and_nothing_is_posted(bot: SlackBot) -> None:
    forged = event_body(f"<@{BOT_USER_ID}> {GOUT}", ts="1700006000.000100", channel="C0FORGED1")
    assert bot.post(forged, secret="not-the-signing-secret") == 401
    assert bot.post(forged, timestamp=int(time.time()) - 600) == 401  # correctly signed, 10 minutes old

    # A valid request afterwards is answered: the refused ones left nothing behind in Slack.
    bot.post(event_body(f"<@{BOT_USER_ID}>", ts="1700006001.000100"))
    bot.api.wait_for(lambda c: c["method"] == "chat.postMessage", "answering the valid request")
    assert [c["args"]["channel"] for c in bot.api.calls if c["method"] != "auth.test"] == [CHANNEL]


def test_input_errors_are_shown_as_written_and_failures_as_an_apology(
    api: FakeSlackApi, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    misconfigured = start_bot(api, offline_runner(slice_kb, slice_kb_root, tmp_path), task="radiology")
    try:
        misconfigured.post(event_body(f"<@{BOT_USER_ID}> {GOUT}", ts="1700007000.000100"))
        shown = message_text(misconfigured.answer_to(CHANNEL, "1700007000.000100"))
        assert shown.startswith(":warning: Unknown task 'radiology'. Choose one of: auto, clinical")
    finally:
        misconfigured.stop()

    broken = offline_runner(slice_kb, slice_kb_root, tmp_path / "broken")
    broken.call(broken.service.checkpointer.conn.close())  # type: ignore[attr-defined]  # the store goes away
    failing = start_bot(api, broken)
    try:
        failing.post(event_body(f"<@{BOT_USER_ID}> {GOUT}", ts="1700007001.000100"))
        shown = message_text(failing.answer_to(CHANNEL, "1700007001.000100"))
        assert shown == (
            ":x: Sorry — something went wrong while answering (ValueError). "
            "The consult was kept: ask again in this thread to continue."
        )
    finally:
        failing.stop()


def test_a_held_up_turn_does_not_hold_up_another_threads_turn(
    api: FakeSlackApi, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    """Two threads, two consults: while the first thread's turn is held in the middle of its graph (its LLM
    request unanswered), the second thread's whole turn runs and is answered; then the first one is."""
    held, other = "1700008000.000100", "1700008001.000100"
    with openai_stub() as stub:
        hold = HeldRequest(router(), marker=GOUT)
        stub.responder = hold
        consultant = consultant_for(stub, slice_kb, slice_kb_root, tmp_path, timeout_s=HOLD_LIMIT_S)
        bot = start_bot(api, service_runner(consultant.settings, slice_kb, consultant.llm))
        try:
            bot.post(event_body(f"<@{BOT_USER_ID}> {GOUT}", ts=held))
            assert hold.reached.wait(HOLD_LIMIT_S), "the first turn never reached its LLM call"
            bot.post(event_body(f"<@{BOT_USER_ID}> {URIC_ACID}", ts=other))
            assert "llm mode" in message_text(bot.answer_to(CHANNEL, other))
            [working] = [c for c in api.calls_to("chat.postMessage") if c["args"]["thread_ts"] == held]
            edits = [
                c["args"]["text"] for c in api.calls_to("chat.update") if c["args"]["ts"] == working["ts"]
            ]
            assert all(text.startswith(":hourglass") for text in edits)  # still working, not answered
            assert not hold.released.is_set()
            hold.release()
            assert "llm mode" in message_text(bot.answer_to(CHANNEL, held))
            asked = {ts: bot.runner.history(slack_consult_id(TEAM_ID, CHANNEL, ts)) for ts in (held, other)}
        finally:
            hold.release()
            bot.stop()
    assert {ts: [t["question"] for t in turns or []] for ts, turns in asked.items()} == {
        held: [GOUT],
        other: [URIC_ACID],
    }
