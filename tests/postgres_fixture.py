"""Session-scoped access to a real local Postgres for the Postgres checkpointer tests.

Why a fixture instead of a skip: a Postgres-backed test that silently skips when no server is around
proves nothing. The fixture reuses a server that already answers on the test port (CI's, or a
developer's ``tests/postgres_server.sh start``), and otherwise starts a throw-away cluster from Debian's
``postgresql`` binaries itself and stops it again at session end, so ``pytest`` alone works on a fresh
clone once ``apt-get install postgresql`` has run. Each test gets its own fresh database, so reruns and
test order never see another test's checkpoints.
"""

import glob
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from tests.server_scripts import port_answers, run_server_script

REPO_ROOT = Path(__file__).resolve().parent.parent
SERVER_SCRIPT = REPO_ROOT / "tests" / "postgres_server.sh"
DEFAULT_TEST_PORT = 5499
TEST_DATABASE = "evigraph_test"
# initdb + start take about a second here; the margin covers a slow, busy machine.
START_TIMEOUT_SECONDS = 120
STOP_TIMEOUT_SECONDS = 60


def configured_port() -> int:
    """The port tests use: ``EVIGRAPH_TEST_PG_PORT`` or 5499 (clear of a user's own 5432)."""
    return int(os.environ.get("EVIGRAPH_TEST_PG_PORT", DEFAULT_TEST_PORT))


def server_url(port: int, database: str = TEST_DATABASE) -> str:
    """URL of a database on the test server (trust auth: no password)."""
    return f"postgresql://postgres@127.0.0.1:{port}/{database}"


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """URL of the ``evigraph_test`` database; starts and later stops a server only if none answers."""
    port = configured_port()
    started_here = False
    if not port_answers(port):
        if not glob.glob("/usr/lib/postgresql/*/bin/initdb"):
            pytest.fail(
                "The Postgres checkpointer tests need the Postgres server binaries and none are installed "
                "under /usr/lib/postgresql/*/bin: run `apt-get install -y postgresql` (Debian), "
                f"or start a server with trust auth on 127.0.0.1:{port} with a database {TEST_DATABASE}."
            )
        run_server_script(SERVER_SCRIPT, "start", port, START_TIMEOUT_SECONDS)
        started_here = True
    try:
        yield server_url(port)
    finally:
        if started_here:
            run_server_script(SERVER_SCRIPT, "stop", port, STOP_TIMEOUT_SECONDS)


@pytest.fixture()
def postgres_database_url(postgres_url: str) -> Iterator[str]:
    """URL of a brand-new, empty database for one test; dropped afterwards (open connections and all)."""
    name = f"evigraph_t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield server_url(configured_port(), name)
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
