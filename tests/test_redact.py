"""Secrets never shown: one redaction function, applied to ``evigraph config``, errors, logs, traces, answers
and the consult store.

Each road a secret took in the issue is driven for real: the CLI with secrets in its environment, a refused
Postgres URL carrying ``?password=``, httpx logging a request to a URL with userinfo, and the REAL
``ChatOpenAI`` against a scripted server whose 401 body echoes ``Bearer sk-…`` (as some gateways do), with
consults kept in a real SQLite file that is then searched byte by byte.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from agent.consult import Consultant
from agent.frontends.cli import app
from agent.frontends.http_api import ApiServer
from agent.llm import make_chat_model
from agent.redact import install_log_redaction, redact, redact_value, remember_secret
from agent.serving import ConsultService, ServeSettings
from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings
from tests.http_client import Api
from tests.openai_stub import Body, StubServer, error_reply, openai_stub

API_KEY = "sk-proj-Zq8Xw2Lr5Tn9Vb4Hc7Jm1Kp3"
PG_PASSWORD = "pg-Secret-4711"
QDRANT_KEY = "qdrant-Key-0815"


@pytest.mark.parametrize(
    ("text", "secret", "kept"),
    [
        ("postgresql://evi:pg-Secret-4711@db:5432/consults", PG_PASSWORD, "postgresql://evi:***@db:5432"),
        ("postgresql://evi@db/c?sslmode=require&password=pg-Secret-4711", PG_PASSWORD, "sslmode=require&"),
        ("host=db password=pg-Secret-4711 dbname=c", PG_PASSWORD, "host=db password=*** dbname=c"),
        ("http://user:hunter2hunter2@127.0.0.1:6333/collections", "hunter2hunter2", "http://user:***@127"),
        ("https://q.example/x?api_key=qdrant-Key-0815&limit=3", QDRANT_KEY, "limit=3"),
        (f"Error code: 401 - {{'message': 'bad header Bearer {API_KEY}'}}", API_KEY, "Bearer ***"),
        (f"Incorrect API key provided: {API_KEY}.", API_KEY, "provided: sk-***."),
        ("token xoxb-1111-2222-AbCdEfGh was revoked", "AbCdEfGh", "token xoxb-*** was"),
        ("app token xapp-1-A0B1-2222-abcdef", "abcdef", "xapp-***"),
    ],
)
def test_each_kind_of_secret_is_masked_and_the_message_kept(text: str, secret: str, kept: str) -> None:
    shown = redact(text)
    assert secret not in shown
    assert kept in shown


def test_clinical_text_and_plain_urls_are_left_alone() -> None:
    text = (
        "HbA1c < 7% is the target; weigh the risk-benefit of metformin (design=RCT). "
        "See https://medlineplus.gov/gout.html?q=gout&page=2 and [E:1a2b3c]. Slack app: Basic Information "
        "→ Signing Secret; the Bearer of the token. Fix EVIGRAPH_CHECKPOINT_URL "
        "(postgresql://user[:password]@host:port/database)."
    )
    assert redact(text) == text
    nested = {"a": [text, ("postgresql://u:pw-123456@h/d",)], "n": 3}
    assert redact_value(nested) == {"a": [text, ("postgresql://u:***@h/d",)], "n": 3}


def test_a_remembered_secret_of_any_shape_is_masked_by_value() -> None:
    remember_secret("neo4j-Pass-Word!")
    remember_secret("abc")  # too short to mask safely: ordinary words would be masked too
    assert redact("auth failed for neo4j-Pass-Word! on bolt") == "auth failed for *** on bolt"
    assert redact("abc") == "abc"


def test_config_shows_no_secret_in_text_or_json(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("EVIGRAPH_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("EVIGRAPH_CHECKPOINT_URL", f"postgresql://evi:{PG_PASSWORD}@db:5432/consults")
    monkeypatch.setenv("EVIGRAPH_LLM_BASE_URL", "http://gateway:gw-Pass-2024@llm.local:8000/v1")
    monkeypatch.setenv("EVIGRAPH_QDRANT_URL", f"http://qdrant.local:6333/?api_key={QDRANT_KEY}")
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    runner = CliRunner()
    for args in (["config"], ["config", "--json"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        for secret in (PG_PASSWORD, "gw-Pass-2024", QDRANT_KEY, API_KEY):
            assert secret not in result.output
    values = json.loads(result.output)
    assert values["checkpoint_url"] == "postgresql://evi:***@db:5432/consults"
    assert values["llm_base_url"] == "http://gateway:***@llm.local:8000/v1"
    assert values["qdrant_url"] == "http://qdrant.local:6333/?api_key=***"
    assert values["llm_api_key"] == "***"


def test_a_password_parameter_is_not_echoed_when_the_consult_store_is_unreachable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("EVIGRAPH_DATA_DIR", str(tmp_path))
    # Port 1 on loopback refuses at once: the real psycopg connect fails and the error names the URL.
    url = f"postgresql://evi@127.0.0.1:1/consults?password={PG_PASSWORD}&connect_timeout=3"
    monkeypatch.setenv("EVIGRAPH_CHECKPOINT_URL", url)
    result = CliRunner().invoke(app, ["consults"])
    assert result.exit_code == 2
    assert "Could not connect to the Postgres consult store" in result.output
    assert "password=***" in result.output and PG_PASSWORD not in result.output


@pytest.fixture()
def echo_server() -> Iterator[str]:
    """A local HTTP server answering 200 to anything (the far end of an httpx request)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_httpx_and_httpcore_logs_and_logged_tracebacks_carry_no_secret(
    echo_server: str, caplog: pytest.LogCaptureFixture
) -> None:
    install_log_redaction()
    install_log_redaction()  # idempotent: installing twice wraps the record factory once
    caplog.set_level(logging.DEBUG)
    response = httpx.get(f"http://user:hunter2hunter2@{echo_server}/v1/models?api_key={QDRANT_KEY}")
    assert response.status_code == 200
    try:
        raise RuntimeError(f"upstream said: Authorization: Bearer {API_KEY}")
    except RuntimeError:
        logging.getLogger("evigraph.test").exception("call failed for %s", f"sk={API_KEY}")
    logged = caplog.text
    assert "HTTP Request: GET http://user:***@" in logged  # httpx's own INFO line, masked
    assert any(r.name.startswith("httpcore") for r in caplog.records)  # its DEBUG lines went through too
    assert "Bearer ***" in logged and "Traceback" in logged
    for secret in ("hunter2hunter2", QDRANT_KEY, API_KEY):
        assert secret not in logged


def llm_settings(stub: StubServer, key: str, kb_root: Path, data_dir: Path) -> Settings:
    """Settings of an LLM consult against ``stub`` with API key ``key`` (no retries: one request a step)."""
    return Settings(
        kb_dir=kb_root,
        data_dir=data_dir,
        llm_base_url=stub.base_url,
        llm_api_key=key,
        llm_model="m",
        llm_max_retries=0,
        llm_enabled=True,
    )


def echoing_gateway(body: Body) -> Any:
    """Every request refused with a 401 whose body quotes the Authorization header it got."""
    return error_reply(401, f"Invalid credentials in header 'Authorization: Bearer {API_KEY}'")


def test_an_llm_error_echoing_the_key_reaches_no_answer_trace_event_or_stored_consult(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    with openai_stub() as stub:
        stub.responder = echoing_gateway
        settings = llm_settings(stub, API_KEY, slice_kb_root, tmp_path)
        consultant = Consultant(settings, kb=slice_kb)  # consults in tmp_path/consults.sqlite
        events: list[dict[str, Any]] = []
        result = consultant.ask("What is the treatment for gout?", on_event=events.append)
        assert stub.requests  # the real client did call the gateway and got the 401
    fallbacks = [s["fallback"] for s in result.trace if s.get("fallback")]
    assert fallbacks and all("Bearer ***" in f for f in fallbacks)
    assert "Bearer ***" in result.answer["fallback"] and result.answer["mode"] == "offline"
    shown = json.dumps(result.payload()) + json.dumps(events, default=str)  # what HTTP and Slack send
    stored = json.dumps(consultant.history(result.consult_id))
    assert API_KEY not in shown and API_KEY not in stored
    consultant.checkpointer.conn.close()  # type: ignore[attr-defined]
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("consults.sqlite*"))
    assert b"Bearer ***" in raw and API_KEY.encode() not in raw  # the fallback was stored, masked
    with sqlite3.connect(tmp_path / "consults.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] > 0


def test_an_llm_error_echoing_the_key_reaches_no_http_reply_plain_or_streamed(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    with openai_stub() as stub:
        stub.responder = echoing_gateway
        settings = llm_settings(stub, API_KEY, slice_kb_root, tmp_path)
        llm = make_chat_model(settings)
        limits = ServeSettings(_env_file=None)

        def service(lim: ServeSettings) -> Any:
            return ConsultService.open(settings, lim, kb=slice_kb, llm=llm)

        server = ApiServer(service, "127.0.0.1", 0, limits)
        server.start()
        try:
            api = Api(server, settings)
            plain = api.call("POST", "/v1/consults", {"question": "What is the treatment for gout?"})
            streamed = api.call("POST", "/v1/consults?stream=true", {"question": "What is gout?"})
        finally:
            server.stop()
        assert stub.requests
    assert plain.status == 201 and "Bearer ***" in plain.body["answer"]["fallback"]
    assert streamed.status == 200 and "event: turn" in streamed.text and "Bearer ***" in streamed.text
    assert API_KEY not in plain.text and API_KEY not in streamed.text
