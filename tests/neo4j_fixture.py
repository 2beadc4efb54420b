"""Session-scoped access to a real local Neo4j for tests marked ``neo4j``.

Why a fixture instead of a skip: a Neo4j-backed test that silently skips when no server is around
proves nothing. The fixture reuses a server that already answers on the test port (a developer's
``neo4j-server.sh start`` or CI's), and otherwise starts the bundled Maven-Central Neo4j itself
and stops it again at session end, so ``pytest`` alone works on a fresh clone with java + mvn.
"""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server_scripts import port_answers, run_server_script

REPO_ROOT = Path(__file__).resolve().parent.parent
SERVER_SCRIPT = REPO_ROOT / "graphs" / "neo4j" / "server" / "neo4j-server.sh"
DEFAULT_TEST_PORT = 7697
# Covers a cold install (jar download from Maven Central) plus the script's own 120 s Bolt wait.
START_TIMEOUT_SECONDS = 600
STOP_TIMEOUT_SECONDS = 120


def configured_port() -> int:
    """The Bolt port tests use: ``EVIGRAPH_TEST_NEO4J_PORT`` or 7697 (clear of a user's own 7687)."""
    return int(os.environ.get("EVIGRAPH_TEST_NEO4J_PORT", DEFAULT_TEST_PORT))


@pytest.fixture(scope="session")
def neo4j_uri() -> Iterator[str]:
    """Bolt URI of a running Neo4j (auth disabled); starts and later stops one only if none answers."""
    port = configured_port()
    started_here = False
    if not port_answers(port):
        run_server_script(SERVER_SCRIPT, "start", port, START_TIMEOUT_SECONDS)
        started_here = True
    try:
        yield f"bolt://127.0.0.1:{port}"
    finally:
        if started_here:
            run_server_script(SERVER_SCRIPT, "stop", port, STOP_TIMEOUT_SECONDS)
