"""How a Slack reply reaches the thread: Slack's native chat streaming when the workspace has it, otherwise a
"working…" placeholder edited into the answer (``chat.update``), and in every case the answer exactly once.

Native streaming (``chat.startStream`` / ``chat.appendStream`` / ``chat.stopStream``, slack_sdk ≥ 3.37) is
part of Slack's Agents & AI Apps feature: the reply is one message in the thread whose text grows as the
consult runs (the progress lines, then in LLM mode the draft as the model writes it), and ``chat.stopStream``
finishes it with the checked answer as the Block Kit sections :mod:`agent.frontends.slack_render` builds.
Streams only exist as thread replies; outside a DM Slack needs the recipient (``recipient_team_id`` and
``recipient_user_id``: the person who asked), so both are always sent.

Why the raw methods and not slack_sdk's ``ChatStream`` helper: ``ChatStream.stop`` adds its text to its buffer
before the call, so a stop retried after a failure would send that text twice, and its appends raise on a
rate limit in the middle of a turn. Here an append refused by the rate limiter keeps its text for the next
append (no line is lost or doubled and the turn never waits), and the stop runs through the client's own
``ratelimited`` retries; a stop refused for good falls back to :func:`deliver` (edit the streamed message
into the answer, else post the answer and delete the stream), so the answer lands once.

Choosing (``EVIGRAPH_SLACK_STREAMING``): ``auto`` (default) streams natively until Slack answers an error
that means "not available for this app or workspace" (:data:`UNAVAILABLE`) and then uses edits for the rest
of the process, so no later message pays a failed call; ``native`` always tries the stream first (a refused
start still falls back, per message); ``edits`` never streams.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

from agent.consult import Event
from agent.errors import UserError
from agent.frontends.render import event_line
from agent.frontends.slack_render import section
from agent.sanitize import clean_text

log = logging.getLogger("evigraph.slack")

STREAMING_ENV = "EVIGRAPH_SLACK_STREAMING"
STREAMING_MODES = ("auto", "native", "edits")
UNAVAILABLE = frozenset(
    {
        "unknown_method",
        "not_allowed",
        "not_allowed_token_type",
        "invalid_arguments",
        "missing_scope",
        "no_permission",
        "feature_not_enabled",
        "method_not_supported_for_channel_type",
        "team_not_allowed",
    }
)
"""Errors of ``chat.startStream`` that mean the method is not there for this app, token or workspace."""
STREAM_OPENING = ":hourglass_flowing_sand: Working on it — searching the knowledge base…"
DRAFT_HEADING = "\n\n*Draft — citations not yet checked:*\n\n"
APPEND_INTERVAL_S = 1.0
"""Least time between two ``chat.appendStream`` calls; what comes in between is sent together."""
MARKDOWN_LIMIT = 12_000
"""Slack's limit for one ``markdown_text``."""

Blocks = list[dict[str, Any]] | None


def streaming_mode(value: str | None = None) -> str:
    """The streaming setting (``value``, else the environment, else ``auto``), or a clear error."""
    raw = os.environ.get(STREAMING_ENV, "") if value is None else value
    mode = (raw or "auto").strip().lower()
    if mode not in STREAMING_MODES:
        raise UserError(
            f"{STREAMING_ENV}={raw!r} is not a Slack streaming mode. "
            f"Choose one of: {', '.join(STREAMING_MODES)} "
            "(auto streams natively where Slack allows it, otherwise edits the reply)."
        )
    return mode


class StreamingChoice:
    """Per app (one per process): stream natively or not, remembering Slack's "not available" in ``auto``."""

    def __init__(self, mode: str | None = None) -> None:
        self.mode = streaming_mode(mode)
        self.unavailable_because = ""
        self._lock = threading.Lock()

    def wants_native(self) -> bool:
        return self.mode == "native" or (self.mode == "auto" and not self.unavailable_because)

    def not_available(self, error: str) -> None:
        """Slack said streaming is not there: ``auto`` edits from now on; ``native`` keeps trying."""
        with self._lock:
            if self.mode != "auto" or self.unavailable_because:
                return
            self.unavailable_because = error
        log.warning("Slack chat streaming is not available (%s); replies are edited in place instead", error)


def slack_error(exc: SlackApiError) -> str:
    return str(exc.response.get("error", "")) if exc.response is not None else ""


def retry_after(exc: SlackApiError) -> float:
    value = exc.response.headers.get("Retry-After", "") if exc.response is not None else ""
    return float(value) if str(value).isdigit() else 0.0


def stream_markdown(text: str) -> str:
    """Text from the consult made safe for ``markdown_text``: no control characters, ``&``/``<``/``>`` as
    entities (never a mention, link or HTML), and no Markdown link ``](`` (a draft cannot smuggle a link)."""
    cleaned = clean_text(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return cleaned.replace("](", "] (")


def progress_markdown(event: Event) -> str:
    """One progress line as a list item in a code span, so entity names and chain texts show as typed."""
    line = event_line(event).replace("`", "'")
    return f"\n- `{line}`" if line else ""


class NativeReply:
    """One streamed reply: ``report`` is the consult's ``on_event``; ``finish`` delivers the answer once."""

    def __init__(self, client: WebClient, channel: str, thread_ts: str, ts: str) -> None:
        self.client = client
        self.quiet = without_rate_limit_retries(client)
        self.channel, self.thread_ts, self.ts = channel, thread_ts, ts
        self.pending = ""
        self.draft = ""
        self.drafting = False
        self.broken = ""
        self.next_append = time.monotonic() + APPEND_INTERVAL_S

    def report(self, event: Event) -> None:
        """Queue the step's line (or the draft's next tokens) and append what is queued, at most every
        :data:`APPEND_INTERVAL_S`; never raises and never waits on Slack's rate limit."""
        if event.get("step") == "token":
            self.add_draft(str(event.get("text", "")))
        else:
            self.pending += progress_markdown(event)
        now = time.monotonic()
        if self.broken or not self.pending or now < self.next_append:
            return
        self.next_append = now + APPEND_INTERVAL_S
        self.append()

    def add_draft(self, token: str) -> None:
        if not self.drafting:
            self.drafting = True
            self.pending += DRAFT_HEADING
        self.draft += token
        cut = len(self.draft) - 1 if self.draft.endswith("]") else len(self.draft)  # "](" may span tokens
        self.pending += stream_markdown(self.draft[:cut])
        self.draft = self.draft[cut:]

    def append(self) -> None:
        text = self.pending[:MARKDOWN_LIMIT]
        try:
            self.quiet.chat_appendStream(channel=self.channel, ts=self.ts, markdown_text=text)
        except SlackApiError as exc:
            if slack_error(exc) == "ratelimited":  # kept: the next append (or the stop) carries it
                self.next_append = time.monotonic() + retry_after(exc)
                log.info("Slack stream append rate-limited; the text goes with the next one")
                return
            self.broken = slack_error(exc) or str(exc)
            log.warning("Slack stream append refused (%s); the answer will be delivered at the end", exc)
            return
        except SlackClientError as exc:  # refused before it was sent (e.g. a closed stream)
            self.broken = str(exc)
            log.warning("Slack stream append not sent (%s); the answer will be delivered at the end", exc)
            return
        except OSError as exc:  # it may have landed: not resent, so nothing shows twice
            self.pending = self.pending[len(text) :]
            self.broken = str(exc)
            log.warning("Slack stream append failed (%s); the answer will be delivered at the end", exc)
            return
        self.pending = self.pending[len(text) :]

    def finish(self, text: str, blocks: Blocks) -> None:
        """Stop the stream with the answer (the client retries ``ratelimited``); if Slack refuses, deliver it
        as the edit path does. A streamed draft is then replaced by the checked answer."""
        final = blocks or [section(text)]
        closing = (self.pending + stream_markdown(self.draft))[-MARKDOWN_LIMIT:]
        try:
            self.client.chat_stopStream(
                channel=self.channel, ts=self.ts, markdown_text=closing or None, blocks=final
            )
        except (SlackClientError, OSError) as exc:
            log.warning("could not finish the Slack stream (%s); delivering the answer another way", exc)
            deliver(self.client, self.channel, self.thread_ts, self.ts, text, final)
            return
        if self.drafting:  # the unchecked draft must not stay above the checked answer
            try:
                self.client.chat_update(channel=self.channel, ts=self.ts, text=text, blocks=final)
            except (SlackApiError, OSError) as exc:
                log.warning("the streamed draft stays above the answer (%s)", exc)


def start_native_reply(
    client: WebClient, choice: StreamingChoice, channel: str, thread_ts: str, team_id: str, user_id: str
) -> NativeReply | None:
    """Open the streamed reply in the thread, or None when Slack refuses (then the caller edits instead)."""
    try:
        started = client.chat_startStream(
            channel=channel,
            thread_ts=thread_ts,
            markdown_text=STREAM_OPENING,
            recipient_team_id=team_id or None,
            recipient_user_id=user_id or None,
        )
    except SlackApiError as exc:
        error = slack_error(exc)
        if error in UNAVAILABLE:
            choice.not_available(error)
        else:
            log.warning("could not start a Slack stream (%s); editing a placeholder instead", exc)
        return None
    except OSError as exc:
        log.warning("could not start a Slack stream (%s); editing a placeholder instead", exc)
        return None
    return NativeReply(client, channel, thread_ts, str(started["ts"]))


def deliver(
    client: WebClient,
    channel: str,
    thread_ts: str,
    reply_ts: str,
    text: str,
    blocks: Blocks,
) -> None:
    """Edit the placeholder into the reply; if Slack keeps refusing the edit, post the reply instead.

    The client's retry handler has already waited out ``ratelimited`` answers (honouring ``Retry-After``);
    an edit still refused after that must not leave "Working on it…" forever, nor an apology for an answer
    that is stored: the reply is posted as a new message in the thread and the placeholder deleted.
    """
    try:
        client.chat_update(channel=channel, ts=reply_ts, text=text, blocks=blocks)
        return
    except (SlackApiError, OSError) as exc:
        log.warning("could not edit the reply into place (%s); posting it as a new message", exc)
    try:
        client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=text, blocks=blocks)
    except (SlackApiError, OSError):
        log.exception("the reply could not be delivered to %s (thread %s)", channel, thread_ts)
        return
    try:
        client.chat_delete(channel=channel, ts=reply_ts)
    except (SlackApiError, OSError) as exc:
        log.warning("the placeholder %s stays (delete refused: %s)", reply_ts, exc)


def without_rate_limit_retries(client: WebClient) -> WebClient:
    """The same client (token, API URL, timeout, proxy) but one refused call is refused at once."""
    if not any(isinstance(h, RateLimitErrorRetryHandler) for h in client.retry_handlers):
        return client
    handlers = [h for h in client.retry_handlers if not isinstance(h, RateLimitErrorRetryHandler)]
    return WebClient(
        token=client.token,
        base_url=client.base_url,
        timeout=client.timeout,
        ssl=client.ssl,
        proxy=client.proxy,
        headers=client.headers,
        retry_handlers=handlers,
    )
