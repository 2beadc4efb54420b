"""The API under load and contention, against a real uvicorn server and the real consult service.

The reliability cases of issue 12: a burst of simultaneous POSTs is answered (no resets) and every turn is
stored; hundreds of half-open sockets do not stop a real request; a full queue is refused with 429 +
Retry-After; two writers on one consult never lose a turn (the second waits, or gets a loud 409); reading
a consult never waits behind a running turn; turns stream as Server-Sent Events; and a server switches to
a newly published KB build between turns, shown by /readyz.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from agent.consult import Consultant
from agent.consult_lock import ConsultLocks, consult_locks
from graphs.building.incremental import remove_document
from graphs.kb import KnowledgeBase
from tests.http_client import FOLLOW_UP, GOUT, Api, Response, api_settings, running_api
from tests.openai_stub import openai_stub, step_of
from tests.test_agent_openai import consultant_for, router


@pytest.fixture()
def api(slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path) -> Iterator[Api]:
    with running_api(api_settings(slice_kb_root, tmp_path), slice_kb) as running:
        yield running


@contextmanager
def api_with_consult(
    kb: KnowledgeBase, kb_root: Path, data_dir: Path, **limits: Any
) -> Iterator[tuple[Api, str, ConsultLocks]]:
    """A running API with one consult started (one turn), and the consult locks its processes share."""
    settings = api_settings(kb_root, data_dir)
    with running_api(settings, kb, **limits) as api:
        consult_id = api.call("POST", "/v1/consults", {"question": GOUT}).body["consult_id"]
        yield api, consult_id, consult_locks(settings.data_dir)


def wait_until(check: object, what: str, limit_s: float = 120.0) -> None:
    """Poll ``check()`` until it is true (a bound so a broken server fails the test instead of hanging)."""
    end = time.monotonic() + limit_s
    while not check():  # type: ignore[operator]
        if time.monotonic() > end:
            raise AssertionError(f"gave up waiting: {what}")
        time.sleep(0.02)


def test_a_burst_of_20_simultaneous_consults_is_answered_and_stored(api: Api) -> None:
    with ThreadPoolExecutor(max_workers=20) as pool:
        replies = list(
            pool.map(lambda i: api.call("POST", "/v1/consults", {"question": f"{GOUT} ({i})"}), range(20))
        )
    assert [r.status for r in replies] == [201] * 20
    stored = api.stored_consults()
    assert {r.body["consult_id"] for r in replies} == set(stored) and set(stored.values()) == {1}


def test_half_open_sockets_do_not_block_a_real_request(api: Api) -> None:
    idle = []
    try:
        for i in range(300):
            sock = socket.create_connection(("127.0.0.1", api.server.port), timeout=30)
            if i % 2:
                sock.sendall(b"POST /v1/consults HTTP/1.1\r\nHost: x\r\n")  # headers never finished
            idle.append(sock)
        reply = api.call("POST", "/v1/consults", {"question": GOUT})
        assert reply.status == 201
    finally:
        for sock in idle:
            sock.close()


def test_a_full_queue_is_refused_with_429_and_retry_after(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    with api_with_consult(slice_kb, slice_kb_root, tmp_path, max_parallel_turns=1, max_queued_turns=0) as (
        api,
        consult_id,
        locks,
    ):
        waiting: list[Response] = []
        with locks.hold(consult_id):  # another writer holds the consult: the next turn waits, admitted
            thread = threading.Thread(
                target=lambda: waiting.append(
                    api.call("POST", f"/v1/consults/{consult_id}/turns", {"question": FOLLOW_UP})
                )
            )
            thread.start()
            wait_until(lambda: api.call("GET", "/readyz").body["turns_admitted"] == 1, "the turn admitted")
            refused = api.call("POST", "/v1/consults", {"question": GOUT})
            assert refused.status == 429 and int(refused.headers["retry-after"]) >= 1
            assert refused.body["error"].startswith("The server is busy (1 turns running or queued).")
        thread.join()
        assert waiting[0].status == 200  # the waiting turn ran once the consult was free
        assert api.stored_consults()[consult_id] == 2


def test_a_turn_on_a_busy_consult_is_refused_loudly_with_409(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    with api_with_consult(slice_kb, slice_kb_root, tmp_path, turn_lock_wait_s=0.5) as (
        api,
        consult_id,
        locks,
    ):
        with locks.hold(consult_id):
            busy = api.call("POST", f"/v1/consults/{consult_id}/turns", {"question": FOLLOW_UP})
            streamed = api.call(
                "POST", f"/v1/consults/{consult_id}/turns?stream=true", {"question": FOLLOW_UP}
            )
        assert busy.status == 409 and busy.headers["retry-after"]
        assert busy.body["error"].startswith(
            f"Consult '{consult_id}' is busy: another turn of it is still running"
        )
        assert streamed.status == 200 and "event: error" in streamed.text and '"status": 409' in streamed.text
        assert api.stored_consults() == {consult_id: 1}


def test_reading_a_consult_does_not_wait_behind_a_running_turn(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    with api_with_consult(slice_kb, slice_kb_root, tmp_path) as (api, consult_id, locks):
        with locks.hold(consult_id):  # stands for a turn that is running right now
            writer = threading.Thread(
                target=api.call, args=("POST", f"/v1/consults/{consult_id}/turns", {"question": FOLLOW_UP})
            )
            writer.start()
            wait_until(lambda: api.call("GET", "/readyz").body["turns_admitted"] == 1, "the turn admitted")
            history = api.call("GET", f"/v1/consults/{consult_id}")
            assert history.status == 200 and [t["question"] for t in history.body["turns"]] == [GOUT]
            assert writer.is_alive()  # the read was answered while the turn was still waiting
        writer.join()
        assert len(api.call("GET", f"/v1/consults/{consult_id}").body["turns"]) == 2


def test_two_writers_on_one_consult_keep_every_turn(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    """An HTTP client and a CLI-style ``Consultant`` (its own checkpointer connection) write alternately."""
    with api_with_consult(slice_kb, slice_kb_root, tmp_path) as (api, consult_id, _):
        cli = Consultant(api.settings, kb=slice_kb, use_llm=False)
        rounds = 4

        def http_writer() -> list[int]:
            return [
                api.call("POST", f"/v1/consults/{consult_id}/turns", {"question": f"http {i}"}).status
                for i in range(rounds)
            ]

        def cli_writer() -> list[str]:
            return [cli.ask(f"cli {i}", consult_id=consult_id).consult_id for i in range(rounds)]

        with ThreadPoolExecutor(max_workers=2) as pool:
            http_done, cli_done = pool.submit(http_writer), pool.submit(cli_writer)
            assert http_done.result() == [200] * rounds and cli_done.result() == [consult_id] * rounds
        turns = api.call("GET", f"/v1/consults/{consult_id}").body["turns"]
        asked = sorted(t["question"] for t in turns)
        assert asked == sorted(
            [GOUT] + [f"http {i}" for i in range(rounds)] + [f"cli {i}" for i in range(rounds)]
        )


def sse_events(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


@pytest.mark.parametrize("how", ["query", "accept"])
def test_a_turn_streams_as_server_sent_events(api: Api, how: str) -> None:
    path, headers = (
        ("/v1/consults?stream=true", {})
        if how == "query"
        else ("/v1/consults", {"Accept": "text/event-stream"})
    )
    response = api.call("POST", path, {"question": GOUT}, headers)
    assert response.status == 200 and response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.text)
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "consult" and kinds[-1] == "turn" and set(kinds[1:-1]) == {"step"}
    steps = [data["step"] for kind, data in events if kind == "step"]
    assert steps[0] == "start" and "evidence_rank" in steps and steps[-1] == "answer"
    final = events[-1][1]
    assert events[0][1] == {"consult_id": final["consult_id"]}
    assert response.headers["location"] == f"/v1/consults/{final['consult_id']}"
    stored = api.call("GET", f"/v1/consults/{final['consult_id']}").body["turns"]
    assert stored[-1]["answer"] == final["answer"]


def test_a_server_switches_to_a_new_build_between_turns(kb_copy: Path, tmp_path: Path) -> None:
    settings = api_settings(kb_copy, tmp_path / "data")
    with running_api(settings, None, kb_check_interval_s=0.0) as api:
        first = api.call("POST", "/v1/consults", {"question": GOUT})
        old_version = first.body["answer"]["kb_version"]
        assert api.call("GET", "/readyz").body["kb_version"] == old_version
        cited = api.service.kb.store.get_evidence(first.body["answer"]["evidence_ids"][:1])
        removed_doc = next(iter(cited.values())).document_id

        new_version = remove_document(kb_copy, removed_doc).kb_version  # `evigraph kb remove` meanwhile

        again = api.call("POST", f"/v1/consults/{first.body['consult_id']}/turns", {"question": GOUT})
        assert again.status == 200 and again.body["answer"]["kb_version"] == new_version != old_version
        cited_now = api.service.kb.store.get_evidence(again.body["answer"]["evidence_ids"])
        assert removed_doc not in {ev.document_id for ev in cited_now.values()}
        ready = api.call("GET", "/readyz").body
        assert ready["kb_version"] == new_version and ready["ready"] is True


def test_answer_tokens_stream_as_sse_in_llm_mode(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    """A real ChatOpenAI against the scripted OpenAI-compatible stub: the answer arrives token by token."""
    with openai_stub() as stub:
        stub.responder = router()
        consultant = consultant_for(stub, slice_kb, slice_kb_root, tmp_path)
        with running_api(consultant.settings, slice_kb, llm=consultant.llm) as api:
            response = api.call("POST", "/v1/consults?stream=true", {"question": GOUT})
    events = sse_events(response.text)
    tokens = [data["text"] for kind, data in events if kind == "token"]
    assert len(tokens) > 5 and "".join(tokens).startswith("NSAIDs treat gout attacks [E:")
    kind, final = events[-1]
    assert kind == "turn" and final["answer"]["mode"] == "llm" and final["llm_calls"] == 3
    assert [step_of(r) for r in stub.requests] == ["hypothesis", "sufficiency", "answer"]


def test_a_client_that_hangs_up_mid_stream_does_not_lose_the_turn(api: Api) -> None:
    with socket.create_connection(("127.0.0.1", api.server.port), timeout=120) as sock:
        body = json.dumps({"question": GOUT}).encode()
        sock.sendall(
            b"POST /v1/consults?stream=true HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        received = b""
        marker = b"event: consult\ndata: "
        while marker not in received or b"\n" not in received.split(marker, 1)[1]:
            chunk = sock.recv(4096)
            assert chunk, f"the stream ended before its consult event: {received!r}"
            received += chunk
        # hang up here, before the turn has finished
    consult_id = json.loads(received.split(marker, 1)[1].split(b"\n", 1)[0])["consult_id"]
    wait_until(lambda: api.stored_consults().get(consult_id) == 1, "the turn stored after the hang-up")
