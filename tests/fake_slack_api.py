"""A tiny fake of Slack's Web API on 127.0.0.1, so the Slack bot runs end to end with no network.

It answers what the bot uses (``auth.test``, ``chat.postMessage``, ``chat.update``, ``chat.delete``), accepts
JSON and form-encoded bodies as slack_sdk sends both, checks the bearer token as Slack does, and records
every call. ``rate_limit(method, times)`` makes the next calls of a method fail as Slack's rate limiter does
(HTTP 429, ``Retry-After``, ``{"ok": false, "error": "ratelimited"}``) and ``fail(method, error, times)`` as
Slack refuses a call (HTTP 200, ``{"ok": false, "error": …}``); those calls are recorded with
``"refused": True``.

Native chat streaming (``chat.startStream`` / ``appendStream`` / ``stopStream``) exists only when the fake is
made with ``streaming=True`` (a workspace with Slack's Agents & AI Apps feature); otherwise those methods
answer ``unknown_method``. It keeps every message it posted in :attr:`messages`: a stream is a thread reply
(``thread_ts`` required), needs its recipient outside a DM, grows with each ``markdown_text`` (or markdown
chunks, as slack_sdk's ``ChatStream`` sends) while its ``streaming`` flag is on, takes its closing blocks at
the stop, and refuses appends once stopped (``message_not_in_streaming_state``), as Slack does.
Listeners run after bolt's ack in a thread pool, so tests poll the recorded calls with a bounded wait.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

BOT_USER_ID = "UBOT0001"
BOT_ID = "BBOT0001"
TEAM_ID = "T0TEST01"
WAIT_S = 120.0
"""Upper bound of a wait for a call (a turn takes seconds; the bound only stops a broken test hanging)."""

Call = dict[str, Any]


class FakeSlackApi:
    """Records every Web API call (method, args, the ts a posted message got) and answers like Slack."""

    def __init__(
        self, token: str, app_token: str = "", socket_url: str = "", streaming: bool = False
    ) -> None:
        self.token = token
        self.streaming = streaming
        self.messages: dict[tuple[str, str], dict[str, Any]] = {}
        """What each posted message shows now, by (channel, ts): text, blocks, thread_ts, streaming."""
        self.app_token = app_token
        self.socket_url = socket_url
        """What ``apps.connections.open`` answers (Socket Mode), called with ``app_token``."""
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        self._next_ts = 1_700_000_000_000_000
        self._limits: dict[str, int] = {}
        self._retry_after: dict[str, int] = {}
        self._failures: dict[str, tuple[str, int]] = {}
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/api/"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def calls_to(self, method: str, refused: bool = False) -> list[Call]:
        """The calls of ``method`` Slack accepted (or, with ``refused``, those it rate-limited)."""
        with self._lock:
            return [c for c in self.calls if c["method"] == method and c.get("refused", False) == refused]

    def rate_limit(self, method: str, times: int, retry_after: int = 0) -> None:
        """Refuse the next ``times`` calls of ``method`` with HTTP 429 and ``Retry-After: retry_after``."""
        with self._lock:
            self._limits[method] = times
            self._retry_after[method] = retry_after

    def fail(self, method: str, error: str, times: int = 1) -> None:
        """Answer the next ``times`` calls of ``method`` with ``{"ok": false, "error": error}``."""
        with self._lock:
            self._failures[method] = (error, times)

    def refuse(self, method: str, args: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """The refusal (HTTP status, body) while ``method`` is rate-limited or failing; the call is recorded
        as refused."""
        with self._lock:
            if self._limits.get(method, 0) > 0:
                self._limits[method] -= 1
                self.calls.append({"method": method, "args": args, "refused": True, "error": "ratelimited"})
                return 429, {"ok": False, "error": "ratelimited"}
            error, times = self._failures.get(method, ("", 0))
            if times > 0:
                self._failures[method] = (error, times - 1)
                self.calls.append({"method": method, "args": args, "refused": True, "error": error})
                return 200, {"ok": False, "error": error}
            return None

    def thread(self, channel: str, thread_ts: str) -> list[dict[str, Any]]:
        """What a thread shows now: a copy of every message the bot left in it (``text``, ``blocks``,
        ``thread_ts``, ``streaming``), oldest first."""
        with self._lock:
            kept = sorted((ts, m) for (c, ts), m in self.messages.items() if c == channel)
            return [dict(m) for _, m in kept if m["thread_ts"] == thread_ts]

    def wait_for(self, predicate: Callable[[Call], bool], what: str) -> Call:
        """The first recorded call matching ``predicate``, polling until it comes (bounded)."""
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            with self._lock:
                calls = list(self.calls)
            found = [c for c in calls if predicate(c)]  # outside the lock: predicates may read calls too
            if found:
                return found[0]
            time.sleep(0.05)
        raise AssertionError(f"no Slack call {what} within {WAIT_S:.0f} s; calls: {self.calls}")

    def answer(self, method: str, args: dict[str, Any], authorization: str) -> dict[str, Any]:
        if method == "apps.connections.open":
            if not self.app_token or authorization != f"Bearer {self.app_token}":
                return {"ok": False, "error": "invalid_auth"}
            with self._lock:
                self.calls.append({"method": method, "args": args})
            return {"ok": True, "url": self.socket_url}
        if authorization != f"Bearer {self.token}":
            return {"ok": False, "error": "invalid_auth"}
        with self._lock:
            self._next_ts += 100
            ts = f"{self._next_ts // 1_000_000}.{self._next_ts % 1_000_000:06d}"
            self.calls.append({"method": method, "args": args, "ts": ts})
        if method == "auth.test":
            return {
                "ok": True,
                "url": "https://evigraph-test.slack.com/",
                "team": "EviGraph test",
                "user": "evigraph",
                "team_id": TEAM_ID,
                "user_id": BOT_USER_ID,
                "bot_id": BOT_ID,
                "is_enterprise_install": False,
            }
        if method == "chat.postMessage":
            self._keep(args, ts, str(args.get("text", "")), args.get("blocks"), streaming=False)
            return {
                "ok": True,
                "channel": args.get("channel"),
                "ts": ts,
                "message": {"text": args.get("text")},
            }
        if method == "chat.update":
            with self._lock:
                message = self.messages.get((str(args.get("channel")), str(args.get("ts"))))
                if message is not None:  # an edit replaces what the message shows, and ends a stream
                    message.update(text=str(args.get("text", "")), blocks=args.get("blocks"), streaming=False)
            return {
                "ok": True,
                "channel": args.get("channel"),
                "ts": args.get("ts"),
                "text": args.get("text"),
            }
        if method == "chat.delete":
            with self._lock:
                self.messages.pop((str(args.get("channel")), str(args.get("ts"))), None)
            return {"ok": True, "channel": args.get("channel"), "ts": args.get("ts")}
        if method in ("chat.startStream", "chat.appendStream", "chat.stopStream"):
            return (
                self._stream(method, args, ts) if self.streaming else {"ok": False, "error": "unknown_method"}
            )
        if method in ("assistant.threads.setStatus", "assistant.threads.setSuggestedPrompts"):
            return {"ok": True}
        return {"ok": False, "error": "unknown_method"}

    def _keep(self, args: dict[str, Any], ts: str, text: str, blocks: Any, streaming: bool) -> None:
        with self._lock:
            self.messages[(str(args.get("channel")), ts)] = {
                "text": text,
                "blocks": blocks,
                "thread_ts": args.get("thread_ts"),
                "streaming": streaming,
            }

    def _stream(self, method: str, args: dict[str, Any], ts: str) -> dict[str, Any]:
        """Slack's streaming methods: start a thread reply, grow it, stop it with its closing blocks."""
        channel = str(args.get("channel") or "")
        if not channel:
            return {"ok": False, "error": "channel_not_found"}
        if method == "chat.startStream":
            if not args.get("thread_ts"):
                return {"ok": False, "error": "invalid_arguments"}  # streams are replies in a thread
            if not channel.startswith("D"):  # outside a DM Slack needs to know whom the stream is for
                for field in ("recipient_team_id", "recipient_user_id"):
                    if not args.get(field):
                        return {"ok": False, "error": f"missing_{field}"}
            self._keep(args, ts, stream_text(args), None, streaming=True)
            return {"ok": True, "channel": channel, "ts": ts}
        with self._lock:
            message = self.messages.get((channel, str(args.get("ts"))))
            if message is None:
                return {"ok": False, "error": "message_not_found"}
            if not message["streaming"]:
                return {"ok": False, "error": "message_not_in_streaming_state"}
            added = stream_text(args)
            if method == "chat.appendStream" and not added:
                return {"ok": False, "error": "invalid_arguments"}  # nothing to append
            message["text"] += added
            if method == "chat.stopStream":
                message.update(blocks=args.get("blocks"), streaming=False)
            shown = dict(message)
        return {"ok": True, "channel": channel, "ts": args.get("ts"), "message": shown}

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8")
                args = parse_body(raw, self.headers.get("Content-Type", ""))
                method = self.path.split("/api/", 1)[-1].split("?", 1)[0]
                refused = fake.refuse(method, args)
                if refused:
                    status, payload = refused
                else:
                    status, payload = 200, fake.answer(method, args, self.headers.get("Authorization", ""))
                data = json.dumps(payload).encode()
                self.send_response(status)
                if status == 429:
                    self.send_header("Retry-After", str(fake._retry_after.get(method, 0)))
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler


def parse_body(raw: str, content_type: str) -> dict[str, Any]:
    """JSON or form-encoded arguments; form values that are JSON (``blocks``) are decoded."""
    if not raw:
        return {}
    if content_type.startswith("application/json"):
        return dict(json.loads(raw))
    args: dict[str, Any] = {k: v[-1] for k, v in parse_qs(raw, keep_blank_values=True).items()}
    if isinstance(args.get("blocks"), str):
        args["blocks"] = json.loads(args["blocks"])
    return args


def stream_text(args: dict[str, Any]) -> str:
    """The text a streaming call adds: its ``markdown_text`` and its markdown chunks, in order."""
    chunks = args.get("chunks") or []
    if isinstance(chunks, str):
        chunks = json.loads(chunks)
    added = str(args.get("markdown_text") or "")
    return added + "".join(str(c.get("text", "")) for c in chunks if c.get("type") == "markdown_text")


def message_text(call: Call) -> str:
    """What a person sees of a posted or updated message: its blocks' texts, or its text when it has none."""
    args = call["args"]
    blocks = args.get("blocks") or []
    if not blocks:
        return str(args.get("text", ""))
    parts: list[str] = []
    for block in blocks:
        if "text" in block:
            parts.append(str(block["text"].get("text", "")))
        parts += [str(e.get("text", "")) for e in block.get("elements", [])]
    return "\n".join(parts)


class FakeSocketModeServer:
    """Slack's Socket Mode end on 127.0.0.1 (a real WebSocket server, as slack_sdk's own tests use): says
    ``hello`` to each connection, pushes the envelopes given to :meth:`push`, and records the acks."""

    def __init__(self) -> None:
        from websockets.sync.server import serve

        self.acks: list[dict[str, Any]] = []
        self._outbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self._connected = threading.Event()
        self._server = serve(self._session, "127.0.0.1", 0)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self._server.socket.getsockname()[1]}/link"

    def push(self, payload: dict[str, Any], envelope_id: str) -> None:
        """Deliver an Events API payload as Slack does over the socket (the bot must ack ``envelope_id``)."""
        envelope = {"envelope_id": envelope_id, "type": "events_api", "payload": payload}
        self._outbox.put({**envelope, "accepts_response_payload": False, "retry_attempt": 0})

    def wait_connected(self) -> None:
        assert self._connected.wait(WAIT_S), "the bot never opened the Socket Mode connection"

    def wait_ack(self, envelope_id: str) -> None:
        deadline = time.monotonic() + WAIT_S
        while not any(a.get("envelope_id") == envelope_id for a in self.acks):
            assert time.monotonic() < deadline, f"envelope {envelope_id} never acknowledged"
            time.sleep(0.05)

    def _session(self, connection: Any) -> None:
        connection.send(json.dumps({"type": "hello", "num_connections": 1, "debug_info": {}}))
        self._connected.set()
        while True:
            try:
                connection.send(json.dumps(self._outbox.get(timeout=0.05)))
            except queue.Empty:
                pass
            except Exception:  # the bot went away
                return
            try:
                message = connection.recv(timeout=0.05)
            except TimeoutError:
                continue
            except Exception:
                return
            data = json.loads(message)
            if "envelope_id" in data:
                self.acks.append(data)

    def stop(self) -> None:
        self._server.shutdown()


@contextmanager
def fake_slack_api(token: str, streaming: bool = False) -> Iterator[FakeSlackApi]:
    api = FakeSlackApi(token, streaming=streaming)
    api.start()
    try:
        yield api
    finally:
        api.stop()
