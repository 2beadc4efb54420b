"""``evigraph slack``: the Slack front end — mention the bot (or DM it) and get a cited answer in the thread.

One Slack thread is one consult. The consult id is derived from team, channel and thread timestamp, so a
follow-up in the thread continues the consult, also after a restart (turns live in the checkpointer), and
nothing has to be stored beside the checkpoints to map threads to consults.

Each question first gets a "working…" reply in its thread, which is then edited into the answer
(``chat.update``): the person sees at once that the question was taken, the thread keeps one bot message
per question, and a failure replaces the placeholder too, so no stale "working…" is ever left behind.
Bolt acknowledges each event before the listener runs (in its thread pool), so Slack never waits on a turn.

Errors: a ``UserError`` is shown as it is (its message is written for people); anything else is logged with
its traceback and Slack gets a short apology saying the consult was kept.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from slack_bolt import App, BoltContext
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from agent.consult import Consultant, Event
from agent.errors import UserError
from agent.render import event_line
from agent.serving import evidence_texts, run_turn
from agent.slack_render import answer_blocks, answer_fallback_text, escape

log = logging.getLogger("evigraph.slack")

EVENTS_PATH = "/slack/events"
WORKING_TEXT = ":hourglass_flowing_sand: Working on it — searching the knowledge base…"
EMPTY_QUESTION_TEXT = (
    "Ask me a clinical question after the mention, for example: "
    "_What is the first-line treatment for type 2 diabetes?_ "
    "Follow-ups in this thread continue the same consult."
)
PROGRESS_INTERVAL_S = 3.0
"""Least time between two progress edits of the "working…" message (Slack rate-limits ``chat.update``)."""
SEEN_MESSAGES = 2000
"""Handled messages remembered, to answer each once (Slack retries; a DM mention may come twice)."""


def slack_consult_id(team_id: str, channel: str, thread_ts: str) -> str:
    """The consult of a Slack thread: stable across restarts, and telling nothing about the workspace."""
    digest = hashlib.sha256(f"{team_id}/{channel}/{thread_ts}".encode()).hexdigest()
    return f"slack-{digest[:16]}"


def question_text(text: str, bot_user_id: str | None) -> str:
    """The question as typed: without the bot's own ``<@U…>`` mention, Slack's ``&amp;``/``&lt;``/``&gt;``
    turned back into characters ("HbA1c &lt; 7%" is "HbA1c < 7%"); other mentions stay, they are content."""
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>", "", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").strip()


class SlackConsults:
    """The listeners: take a message, run its turn in the thread's consult, edit the reply into the answer."""

    def __init__(self, consultant: Consultant, task: str = "auto") -> None:
        self.consultant = consultant
        self.task = task
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._seen_lock = threading.Lock()

    def on_app_mention(self, body: dict[str, Any], event: dict[str, Any], context: BoltContext) -> None:
        self.handle(body, event, context)

    def on_message(self, body: dict[str, Any], event: dict[str, Any], context: BoltContext) -> None:
        """Direct messages only; edits, deletions, bot posts and channel chatter are not questions."""
        if event.get("channel_type") != "im" or event.get("subtype") or event.get("bot_id"):
            return
        self.handle(body, event, context)

    def first_time(self, channel: str, ts: str) -> bool:
        """True once per message: later deliveries (retries, mention + DM event) are dropped."""
        key = (channel, ts)
        with self._seen_lock:
            if key in self._seen:
                return False
            self._seen[key] = None
            while len(self._seen) > SEEN_MESSAGES:
                self._seen.popitem(last=False)
            return True

    def handle(self, body: dict[str, Any], event: dict[str, Any], context: BoltContext) -> None:
        channel, ts = str(event.get("channel", "")), str(event.get("ts", ""))
        if not channel or not ts or not self.first_time(channel, ts):
            return
        client = context.client
        assert client is not None  # bolt sets it for every authorised request
        thread_ts = str(event.get("thread_ts") or ts)
        team_id = str(body.get("team_id") or event.get("team") or context.team_id or "")
        question = question_text(str(event.get("text", "")), context.bot_user_id)
        if not question:
            client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=EMPTY_QUESTION_TEXT)
            return
        consult_id = slack_consult_id(team_id, channel, thread_ts)
        working = client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=WORKING_TEXT)
        reply_ts = str(working["ts"])
        try:
            result = run_turn(
                self.consultant,
                question,
                consult_id=consult_id,
                task=self.task,
                start_if_missing=True,
                on_event=self.progress_reporter(client, channel, reply_ts),
            )
            cited = evidence_texts(self.consultant, list(result.answer.get("evidence_ids", [])))
            client.chat_update(
                channel=channel,
                ts=reply_ts,
                text=answer_fallback_text(result.answer, consult_id),
                blocks=answer_blocks(result.answer, cited, consult_id),
            )
        except UserError as exc:
            client.chat_update(channel=channel, ts=reply_ts, text=f":warning: {escape(str(exc))}")
        except Exception as exc:
            log.exception("Slack turn failed in consult %s", consult_id)
            apology = (
                f":x: Sorry — something went wrong while answering ({type(exc).__name__}). "
                "The consult was kept: ask again in this thread to continue."
            )
            client.chat_update(channel=channel, ts=reply_ts, text=apology)

    def progress_reporter(self, client: WebClient, channel: str, ts: str) -> Callable[[Event], None]:
        """Edit the "working…" message with the current step, at most every few seconds, never failing."""
        last = time.monotonic()

        def report(event: Event) -> None:
            nonlocal last
            now = time.monotonic()
            if event.get("step") == "token" or now - last < PROGRESS_INTERVAL_S:
                return
            last = now
            step_line = escape(event_line(event))
            try:
                client.chat_update(channel=channel, ts=ts, text=f"{WORKING_TEXT}\n_{step_line}_")
            except (SlackApiError, OSError) as exc:  # progress is a courtesy: it must never stop the turn
                log.warning("progress update not shown in Slack: %s", exc)

        return report


def make_slack_app(
    consultant: Consultant,
    token: str,
    signing_secret: str,
    client: WebClient | None = None,
    task: str = "auto",
) -> App:
    """A bolt ``App`` answering mentions and direct messages with consults (checks the token at once).

    ``client`` is for a Slack API elsewhere than slack.com (tests use a local fake); its token is used.
    """
    web = client or WebClient(token=token)
    app = App(client=web, signing_secret=signing_secret, name="evigraph")
    consults = SlackConsults(consultant, task=task)
    app.event("app_mention")(consults.on_app_mention)
    app.event("message")(consults.on_message)
    return app


class _QuietHandler(WSGIRequestHandler):
    """Request lines go to the log, not to stderr."""

    def log_message(self, format: str, *args: Any) -> None:
        log.info("%s %s", self.address_string(), format % args)


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    """One thread per request, so a slow client cannot hold up Slack's other deliveries."""

    daemon_threads = True


def make_slack_server(app: App, host: str = "127.0.0.1", port: int = 3000) -> WSGIServer:
    """The app behind bolt's WSGI adapter on a stdlib server bound to ``host`` (port 0 = any free port)."""
    handler = SlackRequestHandler(app, path=EVENTS_PATH)
    return make_server(host, port, handler, server_class=_ThreadingWSGIServer, handler_class=_QuietHandler)
