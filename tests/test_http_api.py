"""The HTTP JSON API end to end: a real server on 127.0.0.1, urllib requests, a real offline ``Consultant``
over the slice KB with a SQLite checkpoint.

What a client program relies on: a consult is created and continued by id and its turns read back; every
failure is JSON ``{"error": …}`` with a status it can act on (400 bad input, 404 unknown consult, 413 body
too large, 500 without a traceback); and the server listens on 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agent.consult import Consultant
from agent.http_api import MAX_BODY_BYTES, make_http_server
from agent.nodes.answer import OFFLINE_LABEL
from graphs.kb import KnowledgeBase
from graphs.settings import Settings

GOUT = "What is the treatment for gout?"
FOLLOW_UP = "What medicines lower uric acid?"


@dataclass
class Response:
    status: int
    body: dict[str, Any]
    headers: dict[str, str]


@dataclass
class Api:
    consultant: Consultant
    server: ThreadingHTTPServer

    def call(self, method: str, path: str, body: bytes | dict[str, Any] | None = None) -> Response:
        data = json.dumps(body).encode() if isinstance(body, dict) else body
        port = self.server.server_address[1]
        request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return Response(response.status, json.loads(response.read()), dict(response.headers))
        except urllib.error.HTTPError as exc:
            return Response(exc.code, json.loads(exc.read()), dict(exc.headers))


@contextmanager
def serve(consultant: Consultant) -> Iterator[Api]:
    server = make_http_server(consultant, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Api(consultant, server)
    finally:
        server.shutdown()
        server.server_close()


def offline_consultant(kb: KnowledgeBase, kb_root: Path, data_dir: Path) -> Consultant:
    return Consultant(Settings(kb_dir=kb_root, data_dir=data_dir, llm_enabled=False), kb=kb, use_llm=False)


@pytest.fixture()
def api(slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path) -> Iterator[Api]:
    with serve(offline_consultant(slice_kb, slice_kb_root, tmp_path)) as running:
        yield running


def test_the_server_listens_on_localhost_by_default(api: Api) -> None:
    assert api.server.server_address[0] == "127.0.0.1"


def test_healthz_reports_the_kb_version_and_the_mode(api: Api) -> None:
    response = api.call("GET", "/healthz")
    assert response.status == 200
    assert response.body == {"kb_version": api.consultant.kb.version, "mode": "offline"}


def test_a_consult_is_created_continued_and_read_back(api: Api) -> None:
    created = api.call("POST", "/v1/consults", {"question": GOUT})
    assert created.status == 201
    consult_id = created.body["consult_id"]
    assert created.headers["Location"] == f"/v1/consults/{consult_id}"
    answer = created.body["answer"]
    assert answer["status"] == "answered" and answer["mode"] == "offline"
    assert answer["text"].startswith(f"**{OFFLINE_LABEL}**") and answer["evidence_ids"]
    assert answer["kb_version"] == api.consultant.kb.version and answer["sources"]
    assert created.body["llm_calls"] == 0 and created.body["seconds"] > 0 and created.body["trace"]

    follow_up = api.call("POST", f"/v1/consults/{consult_id}/turns", {"question": FOLLOW_UP})
    assert follow_up.status == 200 and follow_up.body["consult_id"] == consult_id

    history = api.call("GET", f"/v1/consults/{consult_id}")
    assert history.status == 200 and history.body["consult_id"] == consult_id
    assert [t["question"] for t in history.body["turns"]] == [GOUT, FOLLOW_UP]
    assert history.body["turns"][1]["answer"] == follow_up.body["answer"]


def test_an_unknown_consult_or_route_is_404(api: Api) -> None:
    turn = api.call("POST", "/v1/consults/nope123/turns", {"question": GOUT})
    assert turn.status == 404
    assert turn.body == {"error": "No consult 'nope123'. Start one with POST /v1/consults."}
    assert api.call("GET", "/v1/consults/nope123").body == {"error": "No consult 'nope123'."}
    assert api.call("GET", "/v1/consults/nope123").status == 404
    assert api.call("GET", "/v2/everything").status == 404


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"question": "gout?', "The body is not valid JSON"),
        (b'["What is gout?"]', "The body must be a JSON object"),
        ({"question": "   "}, 'The body needs a non-empty "question" string.'),
        ({"task": "clinical"}, 'The body needs a non-empty "question" string.'),
        ({"question": GOUT, "task": "radiology"}, "Unknown task 'radiology'. Choose one of: auto, clinical"),
    ],
)
def test_bad_input_is_400_with_a_message(api: Api, body: bytes | dict[str, Any], message: str) -> None:
    response = api.call("POST", "/v1/consults", body)
    assert response.status == 400
    assert set(response.body) == {"error"} and response.body["error"].startswith(message)


def test_a_body_over_the_limit_is_refused_unread(api: Api) -> None:
    oversize = {"question": "x" * (MAX_BODY_BYTES + 1000)}
    response = api.call("POST", "/v1/consults", oversize)
    assert response.status == 413
    assert response.body["error"].endswith(f"the limit is {MAX_BODY_BYTES} bytes.")
    assert api.call("GET", "/healthz").status == 200  # the server carries on


def test_a_method_a_route_does_not_take_is_405(api: Api) -> None:
    assert api.call("GET", "/v1/consults").status == 405
    assert api.call("POST", "/healthz", {"question": GOUT}).status == 405


def test_an_internal_failure_is_500_with_a_message_and_no_traceback(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    consultant = offline_consultant(slice_kb, slice_kb_root, tmp_path)
    consultant.checkpointer.conn.close()  # type: ignore[attr-defined]  # the consult store goes away
    with serve(consultant) as api:
        response = api.call("POST", "/v1/consults", {"question": GOUT})
        assert response.status == 500
        assert response.body == {
            "error": "Internal error (ProgrammingError); the details are in the server log."
        }
