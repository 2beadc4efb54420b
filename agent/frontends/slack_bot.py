"""``evigraph slack``: the Slack front end — mention the bot (or DM it) and get a cited answer in the thread.

One Slack thread is one consult. The consult id is derived from team, channel and thread timestamp, so a
follow-up in the thread continues the consult, also after a restart (turns live in the checkpointer), and
nothing has to be stored beside the checkpoints to map threads to consults.

Each question first gets a "working…" reply in its thread, which is then edited into the answer
(``chat.update``): the person sees at once that the question was taken, the thread keeps one bot message
per question, and a failure replaces the placeholder too, so no stale "working…" is ever left behind.
Where the workspace has Slack's native chat streaming, the reply is a streamed message instead, growing with
the steps and the draft and finished with the answer (``agent.frontends.slack_stream``; setting
``EVIGRAPH_SLACK_STREAMING``).
Bolt acknowledges each event before the listener runs (in its thread pool), so Slack never waits on a turn.
Turns run in the consult service the HTTP API uses (``agent.service_runner``): threads of different consults
are answered side by side, each consult one turn at a time, on the newest published KB build.

Errors: a ``UserError`` is shown as it is (its message is written for people); anything else is logged with
its traceback and Slack gets a short apology saying the consult was kept.

When Slack misbehaves: each message is claimed once in the consult store
(``agent.frontends.slack_deliveries``), so a
redelivery — also after a restart, also to another process — is not answered twice; ``ratelimited`` calls
are retried after ``Retry-After``, and a final edit still refused is posted as a new message with the
placeholder deleted; posts by bots (other bots, and this one) are never taken as questions.

Transports: Slack's Events API over HTTP (bolt's WSGI adapter on a stdlib server) or Socket Mode (a
WebSocket this process opens; no public URL). The Assistant side panel, when enabled for the app, gets a
welcome, suggested questions and a "searching…" status, and is answered like any thread.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
import time
from collections.abc import Callable
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from slack_bolt import App, Assistant, BoltContext, Say, SetStatus, SetSuggestedPrompts
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_bolt.request.internals import parse_body
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

from agent.consult import Event
from agent.errors import UserError
from agent.frontends.render import event_line
from agent.frontends.slack_deliveries import DeliveryLog, message_key
from agent.frontends.slack_render import answer_blocks, answer_fallback_text, escape
from agent.frontends.slack_stream import (
    StreamingChoice,
    deliver,
    start_native_reply,
    streaming_mode,
    without_rate_limit_retries,
)
from agent.service_runner import ServiceRunner

log = logging.getLogger("evigraph.slack")

EVENTS_PATH = "/slack/events"
WORKING_TEXT = ":hourglass_flowing_sand: Working on it — searching the knowledge base…"
EMPTY_QUESTION_TEXT = (
    "Ask me a clinical question after the mention, for example: "
    "_What is the first-line treatment for type 2 diabetes?_ "
    "Follow-ups in this thread continue the same consult."
)
ASSISTANT_WELCOME = (
    "Hi — I answer clinical questions only from evidence I can cite (passages and knowledge-graph chains), "
    "and say so when the evidence is not enough. Each thread here is one consult: ask follow-ups in it."
)
ASSISTANT_STATUS = "is searching the knowledge base…"
SUGGESTED_PROMPTS = (
    {"title": "First-line medicine", "message": "What is the first-line medicine for type 2 diabetes?"},
    {"title": "Treatment options", "message": "What is the treatment for gout?"},
    {"title": "Check a reply", "message": "Check this reply: colchicine can treat a gout flare."},
)
PROGRESS_INTERVAL_S = 3.0
"""Least time between two progress edits of the "working…" message (Slack rate-limits ``chat.update``)."""
RATE_LIMIT_RETRIES = 3
"""Times a rate-limited Web API call is retried (each after Slack's ``Retry-After``) before giving up."""
MAX_PROGRESS_CHARS = 3000
"""Longest progress message (a long draft is cut; the final answer is not)."""


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


def from_a_bot(event: dict[str, Any], bot_user_id: str | None) -> bool:
    """Posts by bots (this one included) are never questions: two bots mentioning each other would loop."""
    return bool(
        event.get("bot_id")
        or event.get("bot_profile")
        or event.get("subtype") == "bot_message"
        or (bot_user_id and event.get("user") == bot_user_id)
    )


class SlackConsults:
    """The listeners: take a message, run its turn in the thread's consult, edit the reply into the answer."""

    def __init__(self, runner: ServiceRunner, task: str = "auto", streaming: str | None = None) -> None:
        self.runner = runner
        self.task = task
        self.deliveries = DeliveryLog(runner.checkpointer)  # a sync connection to the same consult store
        self.streaming = StreamingChoice(streaming)

    def on_app_mention(self, body: dict[str, Any], event: dict[str, Any], context: BoltContext) -> None:
        self.handle(body, event, context)

    def on_message(self, body: dict[str, Any], event: dict[str, Any], context: BoltContext) -> None:
        """Direct messages only; edits, deletions, bot posts and channel chatter are not questions."""
        if event.get("channel_type") != "im" or event.get("subtype"):
            return
        self.handle(body, event, context)

    def handle(self, body: dict[str, Any], event: dict[str, Any], context: BoltContext) -> None:
        channel, ts = str(event.get("channel", "")), str(event.get("ts", ""))
        if not channel or not ts or from_a_bot(event, context.bot_user_id):
            return
        client = context.client
        assert client is not None  # bolt sets it for every authorised request
        thread_ts = str(event.get("thread_ts") or ts)
        team_id = str(body.get("team_id") or event.get("team") or context.team_id or "")
        consult_id = slack_consult_id(team_id, channel, thread_ts)
        key = message_key(team_id, channel, ts)
        if not self.deliveries.claim(key, str(body.get("event_id", "")), consult_id):
            log.info("message %s already taken (Slack redelivery); not answered again", key)
            return
        question = question_text(str(event.get("text", "")), context.bot_user_id)
        if not question:
            client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=EMPTY_QUESTION_TEXT)
            return
        reply_ts, on_event, finish = self.open_reply(client, channel, thread_ts, team_id, event)
        self.deliveries.record_reply(key, reply_ts)
        text, blocks = self.answer(question, consult_id, on_event)
        finish(text, blocks)

    def open_reply(
        self, client: WebClient, channel: str, thread_ts: str, team_id: str, event: dict[str, Any]
    ) -> tuple[str, Callable[[Event], None], Callable[[str, list[dict[str, Any]] | None], None]]:
        """The reply's ts, its progress callback and how it is finished: a native Slack stream where the
        workspace has it (``agent.frontends.slack_stream``), else the "working…" placeholder edited."""
        if self.streaming.wants_native():
            user = str(event.get("user") or "")
            stream = start_native_reply(client, self.streaming, channel, thread_ts, team_id, user)
            if stream is not None:
                return stream.ts, stream.report, stream.finish
        working = client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=WORKING_TEXT)
        reply_ts = str(working["ts"])

        def finish(text: str, blocks: list[dict[str, Any]] | None) -> None:
            deliver(client, channel, thread_ts, reply_ts, text, blocks)

        return reply_ts, self.progress_reporter(client, channel, reply_ts), finish

    def answer(
        self, question: str, consult_id: str, on_event: Callable[[Event], None]
    ) -> tuple[str, list[dict[str, Any]] | None]:
        """The reply: the cited answer, or the input error as written, or an apology — never raised."""
        try:
            result = self.runner.ask(
                question, consult_id=consult_id, task=self.task, start_if_missing=True, on_event=on_event
            )
            cited = self.runner.evidence_texts(list(result.answer.get("evidence_ids", [])))
        except UserError as exc:
            return f":warning: {escape(str(exc))}", None
        except Exception as exc:
            log.exception("Slack turn failed in consult %s", consult_id)
            apology = (
                f":x: Sorry — something went wrong while answering ({type(exc).__name__}). "
                "The consult was kept: ask again in this thread to continue."
            )
            return apology, None
        return answer_fallback_text(result.answer, consult_id), answer_blocks(
            result.answer, cited, consult_id
        )

    def progress_reporter(self, client: WebClient, channel: str, ts: str) -> Callable[[Event], None]:
        """Edit the "working…" message with the current step, or the answer as it is written (LLM mode), at
        most every few seconds (Slack rate-limits ``chat.update``), never failing nor delaying the turn.

        Progress edits go through a client without rate-limit retries: they run on the thread waiting for the
        turn, so a retry would hold up its events for ``Retry-After``; a refused edit pauses progress that
        long instead."""
        client = without_rate_limit_retries(client)
        last = time.monotonic()
        draft: list[str] = []

        def report(event: Event) -> None:
            nonlocal last
            if event.get("step") == "token":
                draft.append(str(event.get("text", "")))
            now = time.monotonic()
            if now - last < PROGRESS_INTERVAL_S:
                return
            last = now
            if draft:
                text = f"{WORKING_TEXT}\n_draft, citations not yet checked:_\n{escape(''.join(draft))}"
            else:
                text = f"{WORKING_TEXT}\n_{escape(event_line(event))}_"
            try:
                client.chat_update(channel=channel, ts=ts, text=text[:MAX_PROGRESS_CHARS])
            except SlackApiError as exc:  # progress is a courtesy: it must never stop the turn
                retry_after = exc.response.headers.get("Retry-After", "") if exc.response is not None else ""
                last = now + (float(retry_after) if str(retry_after).isdigit() else 0.0)
                log.warning("progress update not shown in Slack: %s", exc)
            except OSError as exc:
                log.warning("progress update not shown in Slack: %s", exc)

        return report


def with_rate_limit_retries(client: WebClient) -> WebClient:
    """The client, retrying ``ratelimited`` (HTTP 429) calls after Slack's ``Retry-After`` (slack_sdk's own
    handler), so a final edit that hits the rate limit still lands."""
    if not any(isinstance(h, RateLimitErrorRetryHandler) for h in client.retry_handlers):
        client.retry_handlers.append(RateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES))
    return client


def make_slack_app(
    runner: ServiceRunner,
    token: str,
    signing_secret: str,
    client: WebClient | None = None,
    task: str = "auto",
    streaming: str | None = None,
) -> App:
    """A bolt ``App`` answering mentions and direct messages with consults (checks the token at once).

    ``client`` is for a Slack API elsewhere than slack.com (tests use a local fake); its token is used.
    ``signing_secret`` may be empty in Socket Mode, where no HTTP request comes in to be verified.
    ``streaming`` is auto, native or edits (default: ``EVIGRAPH_SLACK_STREAMING``, else auto).
    """
    streaming = streaming_mode(streaming)  # a bad setting is reported before Slack is contacted
    web = with_rate_limit_retries(client or WebClient(token=token))
    app = App(client=web, signing_secret=signing_secret, name="evigraph")
    consults = SlackConsults(runner, task=task, streaming=streaming)
    app.use(assistant_panel(consults))  # first: it takes the messages of assistant threads
    app.event("app_mention")(consults.on_app_mention)
    app.event("message")(consults.on_message)
    return app


def assistant_panel(consults: SlackConsults) -> Assistant:
    """Slack's AI-assistant side panel (bolt's ``Assistant`` middleware): a new panel thread gets a welcome
    and suggested questions; a question there shows a "searching…" status and is answered in its thread
    like any other, one panel thread being one consult. Without the app's assistant feature enabled in
    Slack these events never come, and mentions and DMs work as before."""
    assistant = Assistant()

    @assistant.thread_started
    def started(say: Say, set_suggested_prompts: SetSuggestedPrompts) -> None:
        say(ASSISTANT_WELCOME)
        set_suggested_prompts(prompts=list(SUGGESTED_PROMPTS), title="Try a question")

    @assistant.user_message
    def user_message(
        body: dict[str, Any], event: dict[str, Any], context: BoltContext, set_status: SetStatus
    ) -> None:
        try:
            set_status(ASSISTANT_STATUS)
        except (SlackApiError, OSError) as exc:  # the status is a courtesy: the answer matters
            log.warning("assistant status not shown: %s", exc)
        consults.handle(body, event, context)

    return assistant


class _QuietHandler(WSGIRequestHandler):
    """Request lines go to the log, not to stderr."""

    def log_message(self, format: str, *args: Any) -> None:
        log.info("%s %s", self.address_string(), format % args)


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    """One thread per request, so a slow client cannot hold up Slack's other deliveries."""

    daemon_threads = True


def readable_body(body: bytes, content_type: str) -> bool:
    """Whether bolt can parse ``body`` into an event: UTF-8, and JSON where it is JSON (bolt's own
    ``parse_body`` decides, so the two never disagree)."""
    try:
        return isinstance(parse_body(body.decode("utf-8"), content_type or None), dict)
    except (UnicodeDecodeError, ValueError):
        return False


class RefuseMalformed:
    """WSGI guard in front of bolt: a POST whose body is not a parsable Slack request is a 400 with one log
    line. Why: bolt parses the body before it checks anything, and a JSON error there was a 500 — which
    Slack retries, three times, for a request that can never succeed (issue 23)."""

    def __init__(self, inner: Callable[..., Any]) -> None:
        self.inner = inner

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if environ.get("REQUEST_METHOD") == "POST":
            length = int(environ.get("CONTENT_LENGTH") or 0)
            body = environ["wsgi.input"].read(length) if length > 0 else b""
            environ["wsgi.input"] = io.BytesIO(body)
            if not readable_body(body, environ.get("CONTENT_TYPE", "")):
                log.warning(
                    "refused a Slack request whose body is not a readable event (%d bytes)", len(body)
                )
                start_response("400 Bad Request", [("Content-Type", "text/plain; charset=utf-8")])
                return [b"malformed Slack request body\n"]
        return self.inner(environ, start_response)


def make_slack_server(app: App, host: str = "127.0.0.1", port: int = 3000) -> WSGIServer:
    """The app behind bolt's WSGI adapter on a stdlib server bound to ``host`` (port 0 = any free port)."""
    handler = RefuseMalformed(SlackRequestHandler(app, path=EVENTS_PATH))
    return make_server(host, port, handler, server_class=_ThreadingWSGIServer, handler_class=_QuietHandler)


def make_socket_mode_handler(app: App, app_token: str) -> SocketModeHandler:
    """Socket Mode: this process opens a WebSocket to Slack and receives events over it, so the bot needs
    no public URL, TLS proxy or signing secret (the app-level token authenticates the connection).

    bolt's built-in client (standard library only); ``connect()`` returns at once, ``start()`` blocks.
    ``apps.connections.open`` goes through the app's own client, so a test's fake Slack API serves it too.
    """
    return SocketModeHandler(app, app_token, web_client=app.client)
