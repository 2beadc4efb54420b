"""Fault suite (issue 23): a Slack request whose body is not a readable event is a 400, never a 500.

Slack retries a 500 (three times) for a request that can never succeed; bolt parsed the body before any
check and a JSON error there was a 500. The guard answers 400 with one log line, signed or not, and the
consult service never sees the request.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphs.kb import KnowledgeBase
from tests.fake_slack_api import FakeSlackApi, fake_slack_api
from tests.test_slack_bot import SECRET, TOKEN, SlackBot, offline_runner, start_bot


@pytest.fixture()
def bot(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> Iterator[tuple[SlackBot, FakeSlackApi]]:
    with fake_slack_api(TOKEN) as api:
        running = start_bot(api, offline_runner(slice_kb, slice_kb_root, tmp_path))
        yield running, api
        running.stop()


def post_raw(url: str, raw: bytes, content_type: str = "application/json", signed: bool = True) -> int:
    ts = str(int(time.time()))
    headers = {"Content-Type": content_type, "X-Slack-Request-Timestamp": ts}
    if signed:  # Slack's v0 scheme over the raw bytes (the SDK's helper takes text, not any bytes)
        digest = hmac.new(SECRET.encode(), f"v0:{ts}:".encode() + raw, hashlib.sha256).hexdigest()
        headers["X-Slack-Signature"] = f"v0={digest}"
    request = urllib.request.Request(url, data=raw, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


@pytest.mark.parametrize(
    ("raw", "content_type"),
    [
        (b"this is not json", "application/json"),
        (b'{"type": "event_callback", "event": ', "application/json"),
        (b"\xff\xfe\x00garbage", "application/json"),
        (b"payload=%7Bnot-json", "application/x-www-form-urlencoded"),
    ],
)
def test_a_signed_garbage_body_is_a_400_with_one_log_line(
    bot: tuple[SlackBot, FakeSlackApi], raw: bytes, content_type: str, caplog: pytest.LogCaptureFixture
) -> None:
    running, api = bot
    with caplog.at_level(logging.WARNING, logger="evigraph.slack"):
        assert post_raw(running.url, raw, content_type) == 400
    assert "not a readable event" in caplog.text, caplog.text
    assert post_raw(running.url, raw, content_type, signed=False) == 400
    # Nothing reached the consult service, so nothing was posted (auth.test is the app's own start-up call).
    assert [c["method"] for c in api.calls if c["method"] != "auth.test"] == []
