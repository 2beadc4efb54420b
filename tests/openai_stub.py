"""A scripted OpenAI-compatible chat server on 127.0.0.1, so tests drive the real ``ChatOpenAI`` end to end.

Why a server and not a fake model: the agent's fallbacks exist for what a real endpoint does — HTTP errors,
timeouts, tool arguments that are not JSON, text where a function call was forced — and only the real
client turns those into the exceptions and messages the agent sees. The server answers
``POST /v1/chat/completions`` from a queue of scripted replies (one per request, in order), streams text
replies as SSE chunks when the request says ``"stream": true``, and records every request body so tests can
assert what the agent sent (model, tools, ``tool_choice``, prompts).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Body = dict[str, Any]


@dataclass
class Reply:
    """One scripted response: a tool call, text, an HTTP error status, or a stall past the client timeout."""

    kind: str
    content: str = ""
    tool_name: str = ""
    arguments: str = ""
    status: int = 200
    delay_s: float = 0.0
    finish: str = "stop"


def tool_reply(name: str, args: dict[str, Any] | str) -> Reply:
    """A function/tool call; a ``str`` ``args`` is sent verbatim (use it for malformed JSON)."""
    return Reply("tool", tool_name=name, arguments=args if isinstance(args, str) else json.dumps(args))


def tool_calls_reply(*calls: tuple[str, dict[str, Any]]) -> list[Reply]:
    """Several tool calls in one assistant message (the planner's reply)."""
    return [tool_reply(n, a) for n, a in calls]


def text_reply(content: str) -> Reply:
    return Reply("text", content=content)


def error_reply(status: int = 500, message: str = "") -> Reply:
    """An HTTP error; ``message`` is the error body's message (e.g. one echoing the request's key)."""
    return Reply("error", status=status, content=message)


def trickle_reply(content: str, every_s: float) -> Reply:
    """A streamed text reply whose chunks come ``every_s`` seconds apart (each read is quick, the whole is
    slow: no per-read timeout ever fires)."""
    return Reply("trickle", content=content, delay_s=every_s)


def stall_reply(delay_s: float) -> Reply:
    """Answer only after ``delay_s`` seconds (longer than the client's timeout: the client gives up)."""
    return Reply("stall", delay_s=delay_s, content="too late")


Scripted = Reply | list[Reply] | Callable[[Body], Reply | list[Reply]]

EVIDENCE_ID = re.compile(r"\[(E:[0-9a-f]+)\]")


def user_prompt(body: Body) -> str:
    return next((str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "user"), "")


def answer_citing(template: str) -> Callable[[Body], Reply]:
    """A text reply whose ``{e0}``, ``{e1}``… become the first evidence ids listed in the request's prompt."""

    def reply(body: Body) -> Reply:
        ids = list(dict.fromkeys(EVIDENCE_ID.findall(user_prompt(body))))
        return text_reply(template.format(**{f"e{i}": eid for i, eid in enumerate(ids)}))

    return reply


@dataclass
class StubServer:
    """The running server: ``base_url`` for the client, ``script`` to fill, ``requests`` received."""

    base_url: str = ""
    script: list[Scripted] = field(default_factory=list)
    responder: Callable[[Body], Reply | list[Reply]] | None = None
    """Answers requests once ``script`` is used up (e.g. a router by :func:`step_of`)."""
    requests: list[Body] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)

    def next_reply(self, body: Body) -> list[Reply]:
        with self.lock:
            self.requests.append(body)
            if self.script:
                item: Scripted = self.script.pop(0)
            elif self.responder is not None:
                item = self.responder
            else:
                return [error_reply(599)]
        if callable(item):
            item = item(body)
        return item if isinstance(item, list) else [item]

    def user_prompts(self) -> list[str]:
        """The user message of every request, in order."""
        return [user_prompt(r) for r in self.requests]


HOLD_LIMIT_S = 120.0
"""Longest a held request waits for its release (a bound, so a failed test cannot leave it hanging)."""


@dataclass
class HeldRequest:
    """A responder that holds the first request mentioning ``marker`` until ``release()`` — its turn paused in
    the middle of its graph, on an LLM call — and answers every request, that one too, with ``respond``."""

    respond: Callable[[Body], Reply | list[Reply]]
    marker: str
    reached: threading.Event = field(default_factory=threading.Event)
    """Set when the held request has come in."""
    released: threading.Event = field(default_factory=threading.Event)

    def __call__(self, body: Body) -> Reply | list[Reply]:
        if not self.reached.is_set() and self.marker in json.dumps(body, ensure_ascii=False):
            self.reached.set()
            self.released.wait(HOLD_LIMIT_S)
        return self.respond(body)

    def release(self) -> None:
        self.released.set()


def step_of(body: Body) -> str:
    """Which agent step sent a request: a forced function names the schema; free tools mean planning."""
    if body.get("stream"):
        return "answer"
    forced = (body.get("tool_choice") or {}) if isinstance(body.get("tool_choice"), dict) else {}
    name = forced.get("function", {}).get("name", "")
    if name == "HypothesisOutput":
        return "hypothesis"
    if name == "LLMVerdict":
        return "sufficiency"
    return "plan" if body.get("tools") else "text"


def _completion(body: Body, replies: list[Reply]) -> Body:
    model = body.get("model", "stub")
    calls = [r for r in replies if r.kind == "tool"]
    message: Body = {"role": "assistant", "content": None if calls else replies[0].content}
    if calls:
        message["tool_calls"] = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": c.tool_name, "arguments": c.arguments},
            }
            for i, c in enumerate(calls)
        ]
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else replies[0].finish}
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


def _sse_chunks(body: Body, text: str, finish: str = "stop") -> Iterator[Body]:
    """The streamed form of a text reply: a role chunk, one chunk per word, the finish, then usage."""
    base = {
        "id": "chatcmpl-stub",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": body.get("model"),
    }
    yield {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}
    words = text.split(" ")
    for i, word in enumerate(words):
        piece = word if i == len(words) - 1 else word + " "
        yield {**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
    yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
    yield {
        **base,
        "choices": [],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


def _handler(server: StubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # silence stderr logging
            return

        def _send_json(self, status: int, payload: Body) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:  # http.server's naming
            length = int(self.headers.get("Content-Length", "0"))
            body: Body = json.loads(self.rfile.read(length) or b"{}")
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})
                return
            replies = server.next_reply(body)
            first = replies[0]
            try:
                if first.kind == "stall":
                    server.stop.wait(first.delay_s)
                    self._send_json(200, _completion(body, [text_reply(first.content)]))
                elif first.kind == "error":
                    message = first.content or (
                        "scripted server error" if first.status != 599 else "no scripted reply left"
                    )
                    self._send_json(first.status, {"error": {"message": message, "type": "server_error"}})
                elif body.get("stream") and first.kind in ("text", "trickle"):
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    for chunk in _sse_chunks(body, first.content, first.finish):
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                        if first.kind == "trickle":
                            server.stop.wait(first.delay_s)
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                else:
                    self._send_json(200, _completion(body, replies))
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout): nothing to do
                return

    return Handler


@contextmanager
def openai_stub() -> Iterator[StubServer]:
    """Run a scripted server on an ephemeral port for the duration of the ``with`` block."""
    state = StubServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    httpd.daemon_threads = True
    state.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, name="openai-stub", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.stop.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
