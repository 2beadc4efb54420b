"""A frozen Neo4j must not hang a consult: reads end with a ``StoreError`` at their deadline.

Real driver, real server (the test Neo4j), and between them a TCP proxy on 127.0.0.1 that can stop
forwarding — what a SIGSTOPped or partitioned server looks like from the client: the socket stays open
and nothing comes back. The shared test server itself is never stopped.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from graphs.neo4j.connection import Neo4jConnection
from graphs.stores.base import StoreError
from tests.neo4j_fixture import neo4j_uri  # noqa: F401

pytestmark = pytest.mark.neo4j


class FreezableProxy:
    """Forwards 127.0.0.1:<port> to the Neo4j port until ``freeze()``; then holds every byte."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.frozen = threading.Event()
        self.closed = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = [self.listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            self.sockets += [client, upstream]
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        while not self.closed.is_set():
            try:
                data = src.recv(65536)
            except OSError:
                return
            if not data:
                return
            while self.frozen.is_set() and not self.closed.is_set():
                self.closed.wait(0.05)  # hold the bytes: the "server" has stopped answering
            try:
                dst.sendall(data)
            except OSError:
                return

    def freeze(self) -> None:
        self.frozen.set()

    def close(self) -> None:
        self.closed.set()
        for sock in self.sockets:
            sock.close()


@pytest.fixture()
def proxy(neo4j_uri: str) -> Iterator[FreezableProxy]:  # noqa: F811
    running = FreezableProxy(int(neo4j_uri.rsplit(":", 1)[1]))
    yield running
    running.close()


def test_a_read_from_a_frozen_neo4j_fails_at_its_deadline_with_a_message(proxy: FreezableProxy) -> None:
    conn = Neo4jConnection(f"bolt://127.0.0.1:{proxy.port}", query_timeout_s=None, retry_attempts=1)
    try:
        # Through the proxy while it forwards (no deadline here: a process's first connection can be slow).
        assert conn.read("RETURN 1 AS ok")[0]["ok"] == 1
        conn.query_timeout_s = 2.0
        proxy.freeze()
        with pytest.raises(StoreError, match=r"did not answer a read within 2 s \(the server may be frozen"):
            conn.read("RETURN 1 AS ok")
        with pytest.raises(StoreError, match="did not answer a read within 2 s"):
            conn.rows("RETURN collect([1]) AS rows")
    finally:
        proxy.close()  # the held reads end with a socket error on their daemon threads
        conn.close()


def test_reads_without_a_deadline_still_answer(neo4j_uri: str) -> None:  # noqa: F811
    conn = Neo4jConnection(neo4j_uri, query_timeout_s=None)
    try:
        assert conn.rows("RETURN collect([1, 2]) AS rows") == [[1, 2]]
    finally:
        conn.close()
