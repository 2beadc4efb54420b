"""``evigraph mcp`` end to end with the official MCP SDK's own client, and ``langgraph.json``'s factory.

The server runs as a real ``evigraph mcp`` process over the slice KB (offline): once over stdio (the client
starts it as a subprocess, as Claude Desktop or an IDE does) and once over streamable HTTP on 127.0.0.1.
What must hold for an MCP client: the four retrieval tools and ``consult`` are listed with their argument
and result schemas; a call returns the tool's structured result; bad arguments come back as a tool error
naming the problem, not a crash; and ``consult`` returns a cited answer whose citations resolve to passages.
In process, over the real consult service: ``consult`` calls on different consults run side by side.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.graph.state import CompiledStateGraph
from mcp import Client, StdioServerParameters
from typer.testing import CliRunner

from agent.context import ConsultContext
from agent.frontends.cli import app
from agent.frontends.mcp_server import build_mcp_server
from agent.nodes.answer import OFFLINE_LABEL, SAFETY_NOTE
from graphs.kb import KnowledgeBase
from tests.openai_stub import HOLD_LIMIT_S, HeldRequest, openai_stub
from tests.test_agent_openai import consultant_for, router
from tests.test_slack_bot import service_runner

REPO = Path(__file__).resolve().parent.parent
GOUT = "What is the treatment for gout?"
TOOLS = {"ner_link", "hypergraph_walk", "reasoning_chain", "evidence_rank", "consult"}
START_S = 120.0
"""Upper bound for the server process to start listening (it loads the KB; the bound only stops a hang)."""


def server_args(kb_root: Path, *extra: str) -> list[str]:
    return [
        "-c",
        "from agent.frontends.cli import app; app()",
        "mcp",
        "--kb-dir",
        str(kb_root),
        "--offline",
        *extra,
    ]


def server_env(data_dir: Path) -> dict[str, str]:
    return {"PYTHONPATH": str(REPO), "EVIGRAPH_DATA_DIR": str(data_dir), "PATH": os.environ.get("PATH", "")}


async def exercise(client: Client) -> dict[str, Any]:
    """List the tools, run a retrieval chain and a consult; return what the checks need."""
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    linked = await client.call_tool("ner_link", {"texts": [GOUT]})
    entity_ids = [e["id"] for e in (linked.structured_content or {})["entities"]]
    walked = await client.call_tool("hypergraph_walk", {"entity_ids": entity_ids})
    ranked = await client.call_tool("evidence_rank", {"question": GOUT, "entity_ids": entity_ids})
    refused = await client.call_tool("ner_link", {"texts": []})
    consulted = await client.call_tool("consult", {"question": GOUT})
    consult_id = (consulted.structured_content or {}).get("consult_id")
    follow_up = await client.call_tool(
        "consult", {"question": "What medicines lower uric acid?", "consult_id": consult_id}
    )
    unknown = await client.call_tool("consult", {"question": GOUT, "consult_id": "no-such-consult"})
    return {
        "listed": listed,
        "entity_ids": entity_ids,
        "walked": walked,
        "ranked": ranked,
        "refused": refused,
        "consulted": consulted,
        "follow_up": follow_up,
        "unknown": unknown,
    }


def check(found: dict[str, Any]) -> None:
    listed = found["listed"]
    assert set(listed) == TOOLS
    assert "texts" in listed["ner_link"].input_schema["properties"]  # flat parameters, not one "request"
    assert listed["evidence_rank"].output_schema and listed["consult"].output_schema
    assert "DOID:13189" in found["entity_ids"]  # gout
    assert not found["walked"].is_error and found["walked"].structured_content["topics"]
    ranked = found["ranked"].structured_content
    assert not found["ranked"].is_error and ranked["evidence"][0]["id"].startswith("E:")
    assert found["refused"].is_error and "texts" in found["refused"].content[0].text
    reply = found["consulted"].structured_content
    assert not found["consulted"].is_error and reply["status"] == "answered"
    assert OFFLINE_LABEL in reply["text"] and reply["answer"]["safety_note"] == SAFETY_NOTE
    assert reply["cited_passages"] and set(reply["cited_passages"]) <= set(reply["answer"]["evidence_ids"])
    assert all(f"[{eid}]" in reply["text"] for eid in list(reply["cited_passages"])[:1])
    follow_up = found["follow_up"].structured_content
    assert follow_up["consult_id"] == reply["consult_id"]
    assert found["unknown"].is_error and "No consult 'no-such-consult'" in found["unknown"].content[0].text


def test_mcp_over_stdio_with_the_sdk_client(slice_kb_root: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=server_args(slice_kb_root), env=server_env(tmp_path), cwd=str(REPO)
    )

    async def run() -> dict[str, Any]:
        async with Client(params, read_timeout_seconds=START_S) as client:
            return await exercise(client)

    check(asyncio.run(run()))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture()
def http_server(slice_kb_root: Path, tmp_path: Path) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, *server_args(slice_kb_root, "--transport", "http", "--port", str(port))],
        env=server_env(tmp_path),
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + START_S
        while True:
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the MCP HTTP server did not start listening"
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_mcp_over_streamable_http_with_the_sdk_client(http_server: str) -> None:
    async def run() -> dict[str, Any]:
        async with Client(http_server, read_timeout_seconds=START_S) as client:
            return await exercise(client)

    check(asyncio.run(run()))


def test_consult_calls_on_different_consults_run_side_by_side(
    slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    """While one ``consult`` call's turn is held in the middle of its graph (its LLM request unanswered), a
    call on another consult runs its whole turn and returns; then the held one finishes too."""
    uric_acid = "What medicines lower uric acid?"
    with openai_stub() as stub:
        hold = HeldRequest(router(), marker=GOUT)
        stub.responder = hold
        consultant = consultant_for(stub, slice_kb, slice_kb_root, tmp_path, timeout_s=HOLD_LIMIT_S)
        runner = service_runner(consultant.settings, slice_kb, consultant.llm)

        async def run() -> tuple[bool, Any, Any]:
            async with Client(build_mcp_server(runner), read_timeout_seconds=START_S) as client:
                held = asyncio.create_task(client.call_tool("consult", {"question": GOUT}))
                assert await asyncio.to_thread(hold.reached.wait, HOLD_LIMIT_S), "no LLM call held"
                other = await client.call_tool("consult", {"question": uric_acid})
                still_held = not held.done() and not hold.released.is_set()
                hold.release()
                return still_held, other, await held

        try:
            still_held, other, held = asyncio.run(run())
            assert still_held  # the other consult was answered while the first turn was still held
            asked = {}
            for result in (held, other):
                assert not result.is_error, result.content
                reply = result.structured_content
                assert reply["status"] == "answered" and reply["answer"]["mode"] == "llm"
                turns = runner.history(reply["consult_id"]) or []
                asked[reply["consult_id"]] = [t["question"] for t in turns]
        finally:
            hold.release()
            runner.close()
    assert sorted(asked.values()) == [[GOUT], [uric_acid]]  # two consults, one turn each


def test_a_wrong_transport_or_a_busy_port_is_a_one_line_error(slice_kb_root: Path) -> None:
    runner = CliRunner()
    wrong = runner.invoke(app, ["mcp", "--transport", "sse", "--kb-dir", str(slice_kb_root)])
    assert wrong.exit_code == 2 and "Unknown transport 'sse'. Choose stdio or http." in wrong.output
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        taken = runner.invoke(app, ["mcp", "--transport", "http", "--port", str(port)])
    assert taken.exit_code == 2 and f"Cannot listen on 127.0.0.1:{port}" in taken.output


def test_langgraph_json_names_a_factory_that_builds_the_consult_graph(
    slice_kb_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = json.loads((REPO / "langgraph.json").read_text())
    assert config["dependencies"] == ["."]
    path, name = config["graphs"]["consult"]["path"].split(":")
    spec = importlib.util.spec_from_file_location("studio_under_test", REPO / path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setenv("EVIGRAPH_KB_DIR", str(slice_kb_root))
    monkeypatch.setenv("EVIGRAPH_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("EVIGRAPH_LLM_ENABLED", "false")

    graph = getattr(module, name)({"configurable": {}})
    assert isinstance(graph, CompiledStateGraph)
    assert graph.checkpointer is None  # the LangGraph server supplies its own
    assert {"start_turn", "evidence_rank", "sufficiency", "answer"} <= set(graph.get_graph().nodes)
    state = graph.invoke({"question": GOUT}, context=ConsultContext(llm_enabled=False))
    assert state["answer"]["status"] == "answered" and state["answer"]["evidence_ids"]
    assert getattr(module, name)() is graph  # built once per process
