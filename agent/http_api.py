"""``evigraph serve``: a small JSON API over consults, for other programs (an EHR plug-in, a notebook).

Routes::

    GET  /healthz                  → {"kb_version", "mode"}
    POST /v1/consults              {"question", "task"?} → 201, the first turn
    POST /v1/consults/{id}/turns   {"question", "task"?} → 200, the next turn (404 if no such consult)
    GET  /v1/consults/{id}         → {"consult_id", "turns"}

A turn is the same JSON as ``evigraph ask --json`` (consult_id, answer, llm_calls, llm_tokens, seconds,
trace), so scripts can switch between the two. Every error is ``{"error": "…"}`` with a status a client can
act on; an unexpected failure is logged with its traceback and answered 500 with a one-line message, never
the traceback. Why the standard library: four routes need no framework, and ``ThreadingHTTPServer`` keeps
/healthz answering while a turn runs (turns themselves run one at a time, see :mod:`agent.serving`).
The server binds to 127.0.0.1 by default and has no authentication or TLS: put it behind your proxy.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agent.consult import Consultant
from agent.errors import UserError
from agent.serving import consult_turns, known_consult, run_turn

log = logging.getLogger("evigraph.http")

MAX_BODY_BYTES = 200_000
DRAIN_LIMIT_BYTES = 2_000_000
"""An oversized body is read and dropped up to this size so the client sees the 413, not a reset socket."""
_CONSULT = re.compile(r"^/v1/consults/([A-Za-z0-9_.\-]{1,128})$")
_TURNS = re.compile(r"^/v1/consults/([A-Za-z0-9_.\-]{1,128})/turns$")


class ApiError(Exception):
    """A request that cannot be served, with the status and message the client gets."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class ConsultHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server that knows its ``Consultant``."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], consultant: Consultant) -> None:
        self.consultant = consultant
        super().__init__(address, ConsultRequestHandler)


class ConsultRequestHandler(BaseHTTPRequestHandler):
    """Routes a request, turns every failure into a JSON error."""

    server: ConsultHTTPServer
    server_version = "EviGraph"

    def do_GET(self) -> None:
        self.respond(self.route_get)

    def do_POST(self) -> None:
        self.respond(self.route_post)

    def respond(self, route: Callable[[str], tuple[HTTPStatus, dict[str, Any]]]) -> None:
        try:
            status, payload = route(self.path.split("?", 1)[0])
        except ApiError as exc:
            status, payload = exc.status, {"error": exc.message}
        except UserError as exc:
            status, payload = HTTPStatus.BAD_REQUEST, {"error": str(exc)}
        except Exception as exc:
            log.exception("%s %s failed", self.command, self.path)
            status = HTTPStatus.INTERNAL_SERVER_ERROR
            payload = {"error": f"Internal error ({type(exc).__name__}); the details are in the server log."}
        self.send_json(status, payload)

    def route_get(self, path: str) -> tuple[HTTPStatus, dict[str, Any]]:
        consultant = self.server.consultant
        if path == "/healthz":
            return HTTPStatus.OK, {"kb_version": consultant.kb.version, "mode": consultant.mode}
        match = _CONSULT.match(path)
        if match:
            consult_id = match.group(1)
            turns = consult_turns(consultant, consult_id)
            if turns is None:
                raise ApiError(HTTPStatus.NOT_FOUND, f"No consult '{consult_id}'.")
            return HTTPStatus.OK, {"consult_id": consult_id, "turns": turns}
        if path == "/v1/consults" or _TURNS.match(path):
            raise ApiError(HTTPStatus.METHOD_NOT_ALLOWED, f"Use POST for {path}.")
        raise ApiError(HTTPStatus.NOT_FOUND, f"No route {path}.")

    def route_post(self, path: str) -> tuple[HTTPStatus, dict[str, Any]]:
        consultant = self.server.consultant
        if path == "/v1/consults":
            question, task = self.read_question()
            result = run_turn(consultant, question, task=task)
            return HTTPStatus.CREATED, result.payload()
        match = _TURNS.match(path)
        if match:
            consult_id = match.group(1)
            question, task = self.read_question()
            if not known_consult(consultant, consult_id):
                raise ApiError(
                    HTTPStatus.NOT_FOUND, f"No consult '{consult_id}'. Start one with POST /v1/consults."
                )
            return HTTPStatus.OK, run_turn(consultant, question, consult_id=consult_id, task=task).payload()
        if path == "/healthz" or _CONSULT.match(path):
            raise ApiError(HTTPStatus.METHOD_NOT_ALLOWED, f"Use GET for {path}.")
        raise ApiError(HTTPStatus.NOT_FOUND, f"No route {path}.")

    def read_question(self) -> tuple[str, str]:
        """The body's ``question`` (non-empty text) and ``task`` (default "auto"), or a 4xx error."""
        body = self.read_json()
        question, task = body.get("question"), body.get("task", "auto")
        if not isinstance(question, str) or not question.strip():
            raise ApiError(HTTPStatus.BAD_REQUEST, 'The body needs a non-empty "question" string.')
        if not isinstance(task, str):
            raise ApiError(HTTPStatus.BAD_REQUEST, '"task" must be a string (auto, clinical, mcq, …).')
        return question, task

    def read_json(self) -> dict[str, Any]:
        length_header = self.headers.get("Content-Length")
        if length_header is None or not length_header.isdigit():
            raise ApiError(HTTPStatus.LENGTH_REQUIRED, "Send the JSON body with a Content-Length header.")
        length = int(length_header)
        if length > MAX_BODY_BYTES:
            self.drain(length)
            raise ApiError(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"The body is {length} bytes; the limit is {MAX_BODY_BYTES} bytes.",
            )
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ApiError(HTTPStatus.BAD_REQUEST, f"The body is not valid JSON ({exc}).") from None
        if not isinstance(body, dict):
            raise ApiError(HTTPStatus.BAD_REQUEST, 'The body must be a JSON object like {"question": "…"}.')
        return body

    def drain(self, length: int) -> None:
        """Read and drop an oversized body (up to a bound), then close the connection."""
        self.close_connection = True
        remaining = min(length, DRAIN_LIMIT_BYTES)
        while remaining > 0:
            chunk = self.rfile.read(min(remaining, 65536))
            if not chunk:
                break
            remaining -= len(chunk)

    def send_json(self, status: HTTPStatus, payload: dict[str, Any]) -> None:
        data = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        if status == HTTPStatus.CREATED and "consult_id" in payload:
            self.send_header("Location", f"/v1/consults/{payload['consult_id']}")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        log.info("%s %s", self.address_string(), format % args)


def make_http_server(
    consultant: Consultant, host: str = "127.0.0.1", port: int = 8080
) -> ThreadingHTTPServer:
    """The JSON API bound to ``host:port`` (port 0 = any free port); call ``serve_forever()`` on it."""
    return ConsultHTTPServer((host, port), consultant)
