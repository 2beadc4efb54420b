"""The HTTP JSON API end to end: a real uvicorn server on 127.0.0.1, urllib requests, a real offline
``ConsultService`` over the slice KB with a SQLite checkpoint.

What a client program relies on: a consult is created and continued by id and its turns read back; every
failure is JSON ``{"error": …}`` with a status it can act on (400 bad input, 404 unknown consult or route,
405 method, 408 body too slow, 413 body too large, 500 without a traceback) and leaves no empty consult
behind; the server listens on 127.0.0.1 unless told otherwise; OpenAPI is at /docs.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.http_api import MAX_BODY_BYTES, ApiServer
from agent.nodes.answer import OFFLINE_LABEL
from agent.serving import ConsultService, ServeSettings
from graphs.kb import KnowledgeBase
from tests.http_client import FOLLOW_UP, GOUT, Api, api_settings, running_api


@pytest.fixture()
def api(slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path) -> Iterator[Api]:
    with running_api(api_settings(slice_kb_root, tmp_path), slice_kb, body_timeout_s=1.0) as running:
        yield running


def test_the_server_listens_on_localhost_by_default(api: Api) -> None:
    assert api.server.socket.getsockname()[0] == "127.0.0.1"


def test_healthz_reports_the_kb_version_and_the_mode(api: Api) -> None:
    response = api.call("GET", "/healthz")
    assert response.status == 200
    assert response.body == {"kb_version": api.service.kb.version, "mode": "offline"}


def test_readyz_reports_the_kb_in_use_and_each_dependency(api: Api, slice_kb: KnowledgeBase) -> None:
    response = api.call("GET", "/readyz")
    assert response.status == 200
    assert response.body["kb_version"] == slice_kb.version
    assert response.body["kb_build"] == slice_kb.build_dir.name
    assert response.body["checks"] == {"kb": "ok", "checkpointer": "ok", "neo4j": "not configured"}


def test_openapi_is_served_at_docs(api: Api) -> None:
    assert api.call("GET", "/docs").status == 200
    spec = api.call("GET", "/openapi.json").body
    assert {"/v1/consults", "/v1/consults/{consult_id}/turns", "/readyz"} <= set(spec["paths"])
    body = spec["paths"]["/v1/consults"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body["required"] == ["question"]


def test_a_consult_is_created_continued_and_read_back(api: Api) -> None:
    created = api.call("POST", "/v1/consults", {"question": GOUT})
    assert created.status == 201
    consult_id = created.body["consult_id"]
    assert created.headers["location"] == f"/v1/consults/{consult_id}"
    answer = created.body["answer"]
    assert answer["status"] == "answered" and answer["mode"] == "offline"
    assert answer["text"].startswith(f"**{OFFLINE_LABEL}**") and answer["evidence_ids"]
    assert answer["kb_version"] == api.service.kb.version and answer["sources"]
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
    missing = api.call("GET", "/v2/everything")
    assert missing.status == 404 and missing.body == {"error": "No route /v2/everything."}
    assert api.stored_consults() == {}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"question": "gout?', "The body is not valid JSON"),
        (b'["What is gout?"]', "The body must be a JSON object"),
        ({"question": "   "}, 'The body needs a non-empty "question" string.'),
        ({"task": "clinical"}, 'The body needs a non-empty "question" string.'),
        ({"question": GOUT, "task": "radiology"}, "Unknown task 'radiology'. Choose one of: auto, clinical"),
        (b'{"question": "gout \xff\xfe treatment"}', "The body is not valid UTF-8"),
        (b'{"question": "gout \\ud800 treatment"}', '"question" contains a lone surrogate'),
        (b'{"question": "gout", "task": "\\udfff"}', '"task" contains a lone surrogate'),
        (b"[" * 150_000, "The body is not valid JSON (nested too deep)."),
        (b'{"question": ' * 10_000, "The body is not valid JSON (nested too deep)."),
    ],
)
def test_bad_input_is_400_with_a_message_and_leaves_no_consult(
    api: Api, body: bytes | dict[str, Any], message: str
) -> None:
    response = api.call("POST", "/v1/consults", body)
    assert response.status == 400
    assert set(response.body) == {"error"} and response.body["error"].startswith(message)
    assert api.stored_consults() == {}  # refused before anything was written: no 0-turn orphan


def test_bad_input_to_an_existing_consult_leaves_it_as_it_was(api: Api) -> None:
    consult_id = api.call("POST", "/v1/consults", {"question": GOUT}).body["consult_id"]
    response = api.call("POST", f"/v1/consults/{consult_id}/turns", b'{"question": "\\udc00"}')
    assert response.status == 400
    assert api.stored_consults() == {consult_id: 1}


def test_a_body_over_the_limit_is_refused_unread(api: Api) -> None:
    oversize = {"question": "x" * (MAX_BODY_BYTES + 1000)}
    response = api.call("POST", "/v1/consults", oversize)
    assert response.status == 413
    assert response.body["error"].endswith(f"the limit is {MAX_BODY_BYTES} bytes.")
    assert api.call("GET", "/healthz").status == 200  # the server carries on


def test_a_content_length_larger_than_the_body_ends_in_408_not_a_held_request(api: Api) -> None:
    with socket.create_connection(("127.0.0.1", api.server.port), timeout=60) as sock:
        sock.sendall(
            b"POST /v1/consults HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'Content-Length: 500\r\n\r\n{"question": "gout'
        )
        reply = _read_reply(sock)
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408")
    assert b"The body did not arrive within 1 s (18 of 500 bytes)" in body
    assert api.call("GET", "/healthz").status == 200
    assert api.stored_consults() == {}


def _read_reply(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
        if b"\r\n\r\n" in b"".join(chunks) and b"}" in chunk:
            break
    return b"".join(chunks)


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("GET", "/v1/consults", "POST"),
        ("POST", "/healthz", "GET"),
        ("PUT", "/v1/consults", "POST"),
        ("DELETE", "/v1/consults/abc", "GET"),
        ("PATCH", "/v1/consults/abc/turns", "POST"),
    ],
)
def test_a_method_a_route_does_not_take_is_405_json(api: Api, method: str, path: str, allowed: str) -> None:
    response = api.call(method, path, {"question": GOUT} if method != "GET" else None)
    assert response.status == 405
    assert response.body == {"error": f"{method} is not allowed on {path} (use {allowed})."}


def test_head_gets_a_json_status_without_a_body(api: Api) -> None:
    response = api.call("HEAD", "/v1/consults")
    assert response.status == 405 and response.headers["content-type"] == "application/json"


def test_an_internal_failure_is_500_with_a_message_and_no_consult_left(
    slice_kb_root: Path, tmp_path: Path
) -> None:
    broken = KnowledgeBase.open(slice_kb_root)
    broken.store.close()  # the KB's database goes away under the server
    with running_api(api_settings(slice_kb_root, tmp_path), broken) as api:
        response = api.call("POST", "/v1/consults", {"question": GOUT})
        assert response.status == 500
        assert response.body == {
            "error": "Internal error (ProgrammingError); the details are in the server log."
        }
        assert api.stored_consults() == {}  # the failed first turn does not leave an empty consult
    broken.vectors.close()


def test_binding_beyond_loopback_without_a_token_warns(
    slice_kb_root: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = api_settings(slice_kb_root, tmp_path)
    with caplog.at_level(logging.WARNING, logger="evigraph.http"):
        server = ApiServer(lambda lim: ConsultService.open(settings, lim), "0.0.0.0", 0, ServeSettings())
        server.socket.close()
    assert "without EVIGRAPH_API_TOKEN" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="evigraph.http"):
        server = ApiServer(
            lambda lim: ConsultService.open(settings, lim), "0.0.0.0", 0, ServeSettings(api_token="s3cret")
        )
        server.socket.close()
    assert "without EVIGRAPH_API_TOKEN" not in caplog.text


def test_a_bearer_token_is_required_when_configured(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    with running_api(api_settings(slice_kb_root, tmp_path), slice_kb, api_token="s3cret") as api:
        refused = api.call("POST", "/v1/consults", {"question": GOUT})
        assert refused.status == 401 and refused.headers["www-authenticate"] == "Bearer"
        assert "Authorization: Bearer" in refused.body["error"]
        wrong = api.call("GET", "/v1/consults/abc", headers={"Authorization": "Bearer nope"})
        assert wrong.status == 401
        assert api.call("GET", "/healthz").status == 200  # probes stay open
        ok = api.call("POST", "/v1/consults", {"question": GOUT}, {"Authorization": "Bearer s3cret"})
        assert ok.status == 201
