"""Slack's native chat streaming end to end: slack_sdk's real ``WebClient`` against the fake Slack Web API on
127.0.0.1, which implements ``chat.startStream`` / ``chat.appendStream`` / ``chat.stopStream`` (a thread reply
whose text grows), and the real consult service over the slice KB.

What must hold for a clinician: the reply streams its progress and ends with the cited answer, shown exactly
once in the thread whatever Slack does midway (rate limits are waited out, a broken stream still ends in the
answer, never in a stale "working…"); a workspace without streaming gets the edited reply and the bot stops
trying after the first refusal; an unchecked LLM draft never stays above the checked answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from agent.errors import UserError
from agent.frontends.slack_bot import make_slack_app, slack_consult_id
from agent.frontends.slack_stream import (
    STREAM_OPENING,
    STREAMING_ENV,
    NativeReply,
    progress_markdown,
    stream_markdown,
)
from agent.nodes.answer import OFFLINE_LABEL, SAFETY_NOTE
from graphs.kb import KnowledgeBase
from tests import test_slack_bot
from tests.fake_slack_api import BOT_USER_ID, TEAM_ID, FakeSlackApi, fake_slack_api
from tests.openai_stub import answer_citing, openai_stub
from tests.test_agent_openai import consultant_for, router
from tests.test_slack_bot import (
    CHANNEL,
    GOUT,
    SECRET,
    TOKEN,
    SlackBot,
    event_body,
    offline_runner,
    service_runner,
    start_bot,
)

api = test_slack_bot.api  # the fake without streaming (Slack answers unknown_method), as most workspaces

ASKER = "UCLINICIAN"
"""The ``user`` of every event ``event_body`` builds: the stream's recipient."""


@pytest.fixture()
def streaming_api() -> Iterator[FakeSlackApi]:
    with fake_slack_api(TOKEN, streaming=True) as fake:
        yield fake


@pytest.fixture()
def every_step_appends(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("agent.frontends.slack_stream.APPEND_INTERVAL_S", 0.0)


@pytest.fixture()
def streaming_bot(
    streaming_api: FakeSlackApi, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> Iterator[SlackBot]:
    running = start_bot(streaming_api, offline_runner(slice_kb, slice_kb_root, tmp_path))
    yield running
    running.stop()


def block_text(blocks: list[dict[str, Any]] | None) -> str:
    parts: list[str] = []
    for block in blocks or []:
        if "text" in block:
            parts.append(str(block["text"].get("text", "")))
        parts += [str(e.get("text", "")) for e in block.get("elements", [])]
    return "\n".join(parts)


def answers_in(api: FakeSlackApi, channel: str, thread_ts: str) -> list[dict[str, Any]]:
    return [m for m in api.thread(channel, thread_ts) if OFFLINE_LABEL in block_text(m["blocks"])]


def wait_finished(api: FakeSlackApi, method: str = "chat.stopStream") -> dict[str, Any]:
    """The first accepted call of ``method`` (the turn's last call to Slack on that path)."""
    return api.wait_for(lambda c: c["method"] == method and not c.get("refused"), f"an accepted {method}")


def test_native_streaming_shows_the_steps_as_they_run_then_the_answer_once(
    streaming_bot: SlackBot, every_step_appends: None
) -> None:
    api, ts = streaming_bot.api, "1700030000.000100"
    streaming_bot.post(event_body(f"<@{BOT_USER_ID}> {GOUT}", ts=ts))
    stop = wait_finished(api)

    [start] = api.calls_to("chat.startStream")
    assert start["args"]["thread_ts"] == ts and start["args"]["markdown_text"] == STREAM_OPENING
    assert (start["args"]["recipient_team_id"], start["args"]["recipient_user_id"]) == (TEAM_ID, ASKER)
    appends = api.calls_to("chat.appendStream")
    assert len(appends) >= 3 and all(a["args"]["ts"] == start["ts"] for a in appends)
    assert "- `turn 1 · task" in appends[0]["args"]["markdown_text"]  # the first step, as it ran

    [shown] = api.thread(CHANNEL, ts)
    streamed = [a["args"]["markdown_text"] for a in appends] + [stop["args"].get("markdown_text") or ""]
    assert shown["text"] == STREAM_OPENING + "".join(streamed) and not shown["streaming"]
    answer = block_text(shown["blocks"])
    assert f"*{OFFLINE_LABEL}*" in answer and "*Citations*" in answer and "[1]" in answer
    assert SAFETY_NOTE in answer
    consult_id = slack_consult_id(TEAM_ID, CHANNEL, ts)
    assert f"consult `{consult_id}`" in answer
    assert api.calls_to("chat.postMessage") == [] and api.calls_to("chat.update") == []  # once, in the stream
    assert streaming_bot.runner.history(consult_id)[0]["answer"]["status"] == "answered"


def test_auto_falls_back_to_edits_where_slack_has_no_streaming_and_remembers_it(
    api: FakeSlackApi, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    assert not api.streaming  # the tests' default fake: chat.startStream answers unknown_method
    bot = start_bot(api, offline_runner(slice_kb, slice_kb_root, tmp_path), streaming="auto")
    try:
        for ts in ("1700031000.000100", "1700031001.000100"):
            bot.post(event_body(f"<@{BOT_USER_ID}> {GOUT}", ts=ts))
            assert f"*{OFFLINE_LABEL}*" in block_text(bot.answer_to(CHANNEL, ts)["args"]["blocks"])
    finally:
        bot.stop()
    assert len(api.calls_to("chat.startStream")) == 1  # the second message paid no failed call


def test_native_mode_keeps_trying_and_edits_mode_never_streams(
    api: FakeSlackApi,
    streaming_api: FakeSlackApi,
    slice_kb: KnowledgeBase,
    slice_kb_root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    native = start_bot(api, offline_runner(slice_kb, slice_kb_root, tmp_path), streaming="native")
    try:
        for ts in ("1700032000.000100", "1700032001.000100"):
            native.post(event_body(f"<@{BOT_USER_ID}> {GOUT}", ts=ts))
            native.answer_to(CHANNEL, ts)  # refused stream: the edited placeholder still answers
    finally:
        native.stop()
    assert len(api.calls_to("chat.startStream")) == 2

    monkeypatch.setenv(STREAMING_ENV, "edits")
    edits = start_bot(streaming_api, offline_runner(slice_kb, slice_kb_root, tmp_path / "e"))
    try:
        edits.post(event_body(f"<@{BOT_USER_ID}> {GOUT}", ts="1700032002.000100"))
        assert f"*{OFFLINE_LABEL}*" in block_text(
            edits.answer_to(CHANNEL, "1700032002.000100")["args"]["blocks"]
        )
    finally:
        edits.stop()
    assert [c for c in streaming_api.calls if c["method"].endswith("Stream")] == []

    monkeypatch.setenv(STREAMING_ENV, "sometimes")
    with pytest.raises(UserError, match=r"EVIGRAPH_SLACK_STREAMING='sometimes' .* auto, native, edits"):
        make_slack_app(native.runner, TOKEN, SECRET, client=WebClient(token=TOKEN, base_url=api.base_url))


def test_rate_limits_midway_are_waited_out_and_no_line_is_lost_or_doubled(
    streaming_bot: SlackBot, every_step_appends: None
) -> None:
    api, ts = streaming_bot.api, "1700033000.000100"
    api.rate_limit("chat.appendStream", times=1, retry_after=1)  # the first append: kept for the next one
    api.rate_limit("chat.stopStream", times=2, retry_after=1)  # the stop: retried after Retry-After
    streaming_bot.post(event_body(f"<@{BOT_USER_ID}> {GOUT}", ts=ts))
    wait_finished(api)

    [refused] = api.calls_to("chat.appendStream", refused=True)
    assert len(api.calls_to("chat.stopStream", refused=True)) == 2
    [shown] = api.thread(CHANNEL, ts)
    assert shown["text"].count(refused["args"]["markdown_text"]) == 1  # sent later, once
    assert len(answers_in(api, CHANNEL, ts)) == 1 and not shown["streaming"]
    assert api.calls_to("chat.postMessage") == []


def test_a_stream_broken_midway_still_ends_in_the_answer_exactly_once(
    streaming_bot: SlackBot, every_step_appends: None
) -> None:
    api, ts = streaming_bot.api, "1700034000.000100"
    api.rate_limit("chat.appendStream", times=1)  # first rate-limited (kept for later) …
    api.fail("chat.appendStream", "internal_error", times=1000)  # … then refused for good
    api.fail("chat.stopStream", "message_not_in_streaming_state", times=1000)
    streaming_bot.post(event_body(f"<@{BOT_USER_ID}> {GOUT}", ts=ts))
    update = wait_finished(api, "chat.update")

    refused = api.calls_to("chat.appendStream", refused=True)
    assert [c["error"] for c in refused] == ["ratelimited", "internal_error"]  # none after it broke
    assert api.calls_to("chat.appendStream") == []
    [start] = api.calls_to("chat.startStream")
    assert update["args"]["ts"] == start["ts"]  # the streamed message is edited into the answer
    [shown] = api.thread(CHANNEL, ts)
    assert f"*{OFFLINE_LABEL}*" in block_text(shown["blocks"]) and not shown["streaming"]
    assert api.calls_to("chat.postMessage") == []
    consult_id = slack_consult_id(TEAM_ID, CHANNEL, ts)
    assert streaming_bot.runner.history(consult_id)[0]["answer"]["status"] == "answered"


def test_a_stream_that_cannot_be_stopped_nor_edited_is_replaced_by_a_posted_answer(
    streaming_bot: SlackBot,
) -> None:
    api, ts = streaming_bot.api, "1700035000.000100"
    api.fail("chat.stopStream", "channel_not_found", times=1000)
    api.rate_limit("chat.update", times=1000)
    streaming_bot.post(event_body(f"<@{BOT_USER_ID}> {GOUT}", ts=ts))
    deleted = api.wait_for(lambda c: c["method"] == "chat.delete", "the stream removed")

    [start] = api.calls_to("chat.startStream")
    assert deleted["args"]["ts"] == start["ts"]
    [shown] = api.thread(CHANNEL, ts)  # the stream is gone; the posted answer is what is left
    assert f"*{OFFLINE_LABEL}*" in block_text(shown["blocks"]) and "Sorry" not in shown["text"]
    assert len(api.calls_to("chat.postMessage")) == 1


def test_an_llm_draft_streams_and_is_replaced_by_the_checked_answer(
    streaming_api: FakeSlackApi,
    slice_kb: KnowledgeBase,
    slice_kb_root: Path,
    tmp_path: Path,
    every_step_appends: None,
) -> None:
    unsupported = "Unicorn horn powder cures gout overnight"
    draft = f"NSAIDs treat gout attacks [{{e0}}]. {unsupported} [E:00000000deadbeef]."
    with openai_stub() as stub:
        stub.responder = router(answer=[answer_citing(draft)])
        consultant = consultant_for(stub, slice_kb, slice_kb_root, tmp_path)
        bot = start_bot(streaming_api, service_runner(consultant.settings, slice_kb, consultant.llm))
        ts = "1700036000.000100"
        try:
            bot.post(event_body(f"<@{BOT_USER_ID}> {GOUT}", ts=ts))
            update = wait_finished(streaming_api, "chat.update")
            turns = bot.runner.history(slack_consult_id(TEAM_ID, CHANNEL, ts))
        finally:
            bot.stop()
    streamed = "".join(
        str(c["args"].get("markdown_text", "")) for c in streaming_api.calls_to("chat.appendStream")
    )
    assert "Draft — citations not yet checked" in streamed and "Unicorn horn" in streamed  # live
    [stop] = streaming_api.calls_to("chat.stopStream")
    assert update["args"]["ts"] == stop["args"]["ts"] and update["args"]["blocks"] == stop["args"]["blocks"]
    [shown] = streaming_api.thread(CHANNEL, ts)
    final = block_text(shown["blocks"]) + shown["text"]
    assert "NSAIDs treat gout attacks [1]" in final and "llm mode" in final
    assert "Unicorn horn" not in final and "1 unsupported claim(s) removed." in final
    answer = (turns or [{}])[0]["answer"]
    assert answer["mode"] == "llm" and answer["removed_claims"]


def test_streamed_markdown_cannot_ping_link_or_carry_control_characters() -> None:
    hostile = "See <!channel> & <@U123>\x07 [here](https://evil.example) `x`"
    safe = stream_markdown(hostile)
    assert "<" not in safe and ">" not in safe and "\x07" not in safe and "](" not in safe
    assert "&lt;!channel&gt; &amp; &lt;@U123&gt;" in safe and "[here] (https://evil.example)" in safe
    line = progress_markdown({"step": "ner_link", "entities": ["gout`", "<!here>"]})
    assert line.startswith("\n- `") and line.count("`") == 2  # one code span: shown as typed

    reply = NativeReply(WebClient(token=TOKEN, base_url="http://127.0.0.1:9/api/"), "C1", "1.0", "1.1")
    for token in ("Use [", "E:1]", "(https://x.example) now"):  # a link split across tokens
        reply.add_draft(token)
    assert "](" not in reply.pending + stream_markdown(reply.draft)


def test_a_bad_streaming_setting_stops_evigraph_slack_with_a_clear_error(
    slice_kb_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from agent.frontends.cli import app

    monkeypatch.setenv("SLACK_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("SLACK_SIGNING_SECRET", SECRET)
    monkeypatch.setenv(STREAMING_ENV, "stream-please")
    result = CliRunner().invoke(app, ["slack", "--offline", "--kb-dir", str(slice_kb_root)])
    assert result.exit_code == 2 and "EVIGRAPH_SLACK_STREAMING='stream-please' is not" in result.output
    assert "Traceback" not in result.output


def test_the_fake_streams_like_slack_for_slack_sdks_own_chat_stream_helper(
    streaming_api: FakeSlackApi,
) -> None:
    """slack_sdk's ``ChatStream`` (buffered, markdown chunks) grows and stops a message in the fake as the
    bot's raw calls do, and Slack's rules hold: recipients outside a DM, no append once stopped."""
    client = WebClient(token=TOKEN, base_url=streaming_api.base_url)
    with pytest.raises(SlackApiError, match="missing_recipient_team_id"):
        client.chat_startStream(channel=CHANNEL, thread_ts="1700037000.000100", markdown_text="x")
    stream = client.chat_stream(
        channel=CHANNEL,
        thread_ts="1700037000.000100",
        recipient_team_id=TEAM_ID,
        recipient_user_id=ASKER,
        buffer_size=8,
    )
    stream.append(markdown_text="Gout is ")  # 8 characters: flushed, the stream starts
    stream.append(markdown_text="treated")  # buffered
    stream.stop(
        markdown_text=" [1].", blocks=[{"type": "section", "text": {"type": "mrkdwn", "text": "end"}}]
    )
    [shown] = streaming_api.thread(CHANNEL, "1700037000.000100")
    assert (
        shown["text"] == "Gout is treated [1]."
        and not shown["streaming"]
        and block_text(shown["blocks"]) == "end"
    )
    with pytest.raises(SlackApiError, match="message_not_in_streaming_state"):
        client.chat_appendStream(channel=CHANNEL, ts=str(stream.ts), markdown_text="more")
