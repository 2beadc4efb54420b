"""The Slack transport when Slack misbehaves: redeliveries across a restart, rate-limited edits, other bots,
and an LLM error that quotes the API key.

Same set-up as tests/test_slack_bot.py: a real bolt ``App`` behind its WSGI adapter on 127.0.0.1, signed
events POSTed over HTTP, a fake Slack Web API that can rate-limit a method as Slack does (HTTP 429 with
``Retry-After``), and the real consult service over the slice KB with consults in a SQLite file.
"""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
from langchain_openai import ChatOpenAI
from slack_sdk import WebClient

from agent.frontends.slack_bot import (
    ASSISTANT_STATUS,
    SUGGESTED_PROMPTS,
    make_slack_app,
    make_socket_mode_handler,
    slack_consult_id,
)
from agent.frontends.slack_deliveries import DeliveryLog, message_key
from agent.llm import make_chat_model
from agent.nodes.answer import OFFLINE_LABEL
from agent.sessions import open_checkpointer
from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings
from tests import test_slack_bot
from tests.fake_slack_api import (
    BOT_ID,
    BOT_USER_ID,
    TEAM_ID,
    FakeSlackApi,
    FakeSocketModeServer,
    message_text,
)
from tests.openai_stub import error_reply, openai_stub
from tests.postgres_fixture import postgres_database_url, postgres_url  # noqa: F401
from tests.test_redact import llm_settings
from tests.test_slack_bot import (
    CHANNEL,
    GOUT,
    TOKEN,
    SlackBot,
    event_body,
    offline_runner,
    service_runner,
    start_bot,
)

APP_TOKEN = "xapp-1-A0EVIGRAPH-1700000000-socketmodetest"
SYNC_TS = "1700099000.000100"
"""A last, valid question: once it is answered, every event posted before it has been handled."""


api = test_slack_bot.api  # the same fixtures: a fake Slack API, a bot over the slice KB answering into it
bot = test_slack_bot.bot


def replies_in(api: FakeSlackApi, channel: str, thread_ts: str) -> list[str]:
    """The ts of every message the bot posted in a thread."""
    posted = api.calls_to("chat.postMessage")
    return [c["ts"] for c in posted if (c["args"]["channel"], c["args"]["thread_ts"]) == (channel, thread_ts)]


def sync(bot: SlackBot) -> None:
    """Ask one more question and wait for its answer (events are handled in arrival order per bot)."""
    bot.post(event_body(f"<@{BOT_USER_ID}> {GOUT}", ts=SYNC_TS))
    bot.answer_to(CHANNEL, SYNC_TS)


def test_a_redelivery_after_a_restart_is_not_answered_twice(
    api: FakeSlackApi, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    thread = "1700010000.000100"
    event = event_body(f"<@{BOT_USER_ID}> {GOUT}", ts=thread)
    first = start_bot(api, offline_runner(slice_kb, slice_kb_root, tmp_path))
    try:
        first.post(event)
        first.answer_to(CHANNEL, thread)
    finally:
        first.stop()

    restarted = start_bot(api, offline_runner(slice_kb, slice_kb_root, tmp_path))
    try:
        assert restarted.post(event) == 200  # Slack's retry of the same event_id, after the restart
        sync(restarted)
        assert len(replies_in(api, CHANNEL, thread)) == 1
        consult_id = slack_consult_id(TEAM_ID, CHANNEL, thread)
        assert [t["question"] for t in restarted.runner.history(consult_id)] == [GOUT]
    finally:
        restarted.stop()


def test_a_dm_mention_delivered_as_two_events_is_answered_once(bot: SlackBot) -> None:
    ts = "1700011000.000100"
    dm = {"channel": "D0DIRECT1", "channel_type": "im"}
    as_message = event_body(f"<@{BOT_USER_ID}> {GOUT}", ts=ts, **dm, type="message")
    as_mention = {**event_body(f"<@{BOT_USER_ID}> {GOUT}", ts=ts, **dm), "event_id": "EvOtherId"}
    bot.post(as_message)
    bot.post(as_mention)
    bot.answer_to("D0DIRECT1", ts)
    sync(bot)
    assert len(replies_in(bot.api, "D0DIRECT1", ts)) == 1


def test_mentions_by_other_bots_and_bot_messages_are_ignored(bot: SlackBot) -> None:
    mention = f"<@{BOT_USER_ID}> {GOUT}"
    bot.post(event_body(mention, ts="1700012000.000100", bot_id="B0OTHERBOT", user="U0BOT2"))
    bot.post(event_body(mention, ts="1700012001.000100", bot_id=BOT_ID, user=BOT_USER_ID))  # its own echo
    dm = {"type": "message", "channel": "D0DIRECT1", "channel_type": "im"}
    bot.post(event_body(GOUT, ts="1700012002.000100", subtype="bot_message", **dm))
    bot.post(event_body(GOUT, ts="1700012003.000100", **dm, bot_profile={"id": "B0OTHERBOT"}))
    sync(bot)
    threads = {c["args"]["thread_ts"] for c in bot.api.calls_to("chat.postMessage")}
    assert threads == {SYNC_TS}


def test_a_rate_limited_final_edit_is_retried_after_retry_after(bot: SlackBot) -> None:
    bot.api.rate_limit("chat.update", times=2)  # two refusals, then Slack accepts (3 retries allowed)
    bot.post(event_body(f"<@{BOT_USER_ID}> {GOUT}", ts="1700013000.000100"))

    shown = message_text(bot.answer_to(CHANNEL, "1700013000.000100"))
    assert f"*{OFFLINE_LABEL}*" in shown
    assert len(bot.api.calls_to("chat.update", refused=True)) == 2
    assert bot.api.calls_to("chat.delete") == []  # edited in place: nothing to clean up


def test_an_edit_refused_for_good_is_posted_as_a_new_message_and_the_placeholder_removed(
    bot: SlackBot,
) -> None:
    thread = "1700014000.000100"
    bot.api.rate_limit("chat.update", times=1000)
    bot.post(event_body(f"<@{BOT_USER_ID}> {GOUT}", ts=thread))

    deleted = bot.api.wait_for(lambda c: c["method"] == "chat.delete", "the placeholder deleted")
    placeholder, answer = replies_in(bot.api, CHANNEL, thread)
    assert deleted["args"]["ts"] == placeholder
    posted = next(c for c in bot.api.calls_to("chat.postMessage") if c["ts"] == answer)
    shown = message_text(posted)
    assert f"*{OFFLINE_LABEL}*" in shown and "Sorry" not in shown  # the answer, not an apology
    assert len(bot.api.calls_to("chat.update", refused=True)) >= 4  # the first try + 3 retries
    consult_id = slack_consult_id(TEAM_ID, CHANNEL, thread)
    assert bot.runner.history(consult_id)[0]["answer"]["status"] == "answered"


def test_an_llm_error_quoting_the_api_key_never_reaches_slack(
    api: FakeSlackApi, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    key = "sk-proj-Slack0Test0Key0123456789"
    with openai_stub() as stub:
        stub.responder = lambda body: error_reply(401, f"Invalid header 'Authorization: Bearer {key}'")
        settings = llm_settings(stub, key, slice_kb_root, tmp_path)
        llm = make_chat_model(settings)
        assert isinstance(llm, ChatOpenAI)
        running = start_bot(api, service_runner(settings, slice_kb, llm))
        try:
            running.post(event_body(f"<@{BOT_USER_ID}> {GOUT}", ts="1700015000.000100"))
            running.answer_to(CHANNEL, "1700015000.000100")
            turns = running.runner.history(slack_consult_id(TEAM_ID, CHANNEL, "1700015000.000100"))
        finally:
            running.stop()
        assert stub.requests
    sent = json.dumps(api.calls, ensure_ascii=False)  # every placeholder, progress edit and answer sent
    assert key not in sent and f"*{OFFLINE_LABEL}*" in sent  # the offline fallback answer was shown
    assert turns is not None
    turn = turns[0]
    assert "Bearer ***" in turn["answer"]["fallback"]  # the reason is kept for the trace, masked


def test_socket_mode_takes_events_over_a_websocket_acks_them_and_answers(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    socket_end = FakeSocketModeServer()
    api = FakeSlackApi(TOKEN, app_token=APP_TOKEN, socket_url=socket_end.url)
    api.start()
    runner = offline_runner(slice_kb, slice_kb_root, tmp_path)
    web = WebClient(token=TOKEN, base_url=api.base_url)
    handler = make_socket_mode_handler(make_slack_app(runner, TOKEN, "", client=web), APP_TOKEN)
    try:
        handler.connect()  # apps.connections.open with the app token, then the WebSocket
        socket_end.wait_connected()
        ts = "1700016000.000100"
        socket_end.push(event_body(f"<@{BOT_USER_ID}> {GOUT}", ts=ts), envelope_id="env-0001")
        socket_end.wait_ack("env-0001")
        answer = SlackBot(runner, api, "", lambda: None).answer_to(CHANNEL, ts)
        assert f"*{OFFLINE_LABEL}*" in message_text(answer)
        assert len(api.calls_to("apps.connections.open")) == 1
    finally:
        handler.close()
        socket_end.stop()
        api.stop()
        runner.close()


def test_the_assistant_panel_suggests_questions_and_answers_in_its_thread_with_a_status(
    bot: SlackBot,
) -> None:
    panel = {"channel_id": "D0ASSIST1", "thread_ts": "1700017000.000100", "user_id": "UCLINICIAN"}
    started = {"type": "assistant_thread_started", "assistant_thread": {**panel, "context": {}}}
    bot.post(
        {**event_body("", ts="1700017000.000200"), "event": {**started, "event_ts": "1700017000.000200"}}
    )
    prompts = bot.api.wait_for(
        lambda c: c["method"] == "assistant.threads.setSuggestedPrompts", "the suggested questions"
    )
    assert prompts["args"]["channel_id"] == "D0ASSIST1" and prompts["args"]["thread_ts"] == panel["thread_ts"]
    assert [p["message"] for p in prompts["args"]["prompts"]] == [p["message"] for p in SUGGESTED_PROMPTS]
    assert replies_in(bot.api, "D0ASSIST1", panel["thread_ts"])  # the welcome, in the panel thread

    question = {
        "type": "message",
        "channel": "D0ASSIST1",
        "channel_type": "im",
        "thread_ts": panel["thread_ts"],
    }
    bot.post(event_body(GOUT, ts="1700017001.000100", **question))
    answer = bot.answer_to("D0ASSIST1", panel["thread_ts"], turn=2)  # after the welcome
    assert f"*{OFFLINE_LABEL}*" in message_text(answer)
    status = bot.api.calls_to("assistant.threads.setStatus")
    assert [c["args"]["status"] for c in status] == [ASSISTANT_STATUS]
    consult_id = slack_consult_id(TEAM_ID, "D0ASSIST1", panel["thread_ts"])
    assert [t["question"] for t in bot.runner.history(consult_id)] == [GOUT]


def test_deliveries_are_claimed_once_across_processes_in_postgres(postgres_database_url: str) -> None:  # noqa: F811
    # Two consult stores on the same database stand for two bot processes (or one before and after a restart).
    first = DeliveryLog(open_checkpointer(Settings(checkpoint_url=postgres_database_url)))
    second = DeliveryLog(open_checkpointer(Settings(checkpoint_url=postgres_database_url)))
    key = message_key(TEAM_ID, CHANNEL, "1700018000.000100")
    assert first.claim(key, "Ev1", "slack-1") is True
    assert second.claim(key, "Ev1", "slack-1") is False  # Slack's retry, reaching the other process
    assert first.claim(key, "Ev2", "slack-1") is False  # the DM mention's second event
    first.record_reply(key, "1700018000.000200")
    assert second.claim(message_key(TEAM_ID, CHANNEL, "1700018001.000100")) is True
    with psycopg.connect(postgres_database_url) as conn:
        rows = conn.execute(
            "SELECT message_key, event_id, reply_ts FROM evigraph_slack_deliveries"
        ).fetchall()
    assert sorted(rows)[0] == (key, "Ev1", "1700018000.000200") and len(rows) == 2


def test_a_rate_limited_progress_edit_is_not_retried_and_the_answer_still_lands(
    bot: SlackBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        "agent.frontends.slack_bot.PROGRESS_INTERVAL_S", 0.0
    )  # every step edits the placeholder
    bot.api.rate_limit("chat.update", times=1)  # the first progress edit is refused
    bot.post(event_body(f"<@{BOT_USER_ID}> {GOUT}", ts="1700019000.000100"))

    assert f"*{OFFLINE_LABEL}*" in message_text(bot.answer_to(CHANNEL, "1700019000.000100"))
    [refused] = bot.api.calls_to("chat.update", refused=True)
    assert refused["args"]["text"].startswith(":hourglass")
    shown = [c["args"]["text"] for c in bot.api.calls_to("chat.update")]
    assert refused["args"]["text"] not in shown  # not retried: the turn went on to its next steps
    assert len(shown) >= 3 and bot.api.calls_to("chat.delete") == []
