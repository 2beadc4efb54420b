"""A stand-in ``llama-server`` executable for the lifecycle tests of ``evigraph llm serve|status|stop``.

It accepts llama-server's command line (``-m MODEL --host H --port P -t N …``), answers ``GET /health``
like llama-server and chat completions like the llama-server-like weak model (tests/llama_like.py), so
the real start/health-wait/stop code and the real ChatOpenAI client run against a real process. With
``FAKE_LLAMA_EXIT=1`` in the environment it fails at start the way a bad model file does.
"""

from __future__ import annotations

import argparse
import os
import sys
from http.server import ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.llama_like import LlamaLike
from tests.openai_stub import StubServer, _handler


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-m")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("-t", type=int)
    parser.add_argument("-c", type=int)
    parser.add_argument("-np", type=int)
    parser.add_argument("--alias")
    args = parser.parse_args()
    if os.environ.get("FAKE_LLAMA_EXIT"):
        print(f"error: failed to load model '{args.m}'", flush=True)
        sys.exit(1)
    state = StubServer(responder=LlamaLike(always_insufficient=False))
    base = _handler(state)

    class Handler(base):  # type: ignore[misc, valid-type]
        def do_GET(self) -> None:  # http.server's naming
            status = 200 if self.path == "/health" else 404
            self._send_json(status, {"status": "ok"} if status == 200 else {"error": "no route"})

    httpd = ThreadingHTTPServer((args.host, args.port), Handler)
    print(f"main: server is listening on http://{args.host}:{args.port} with {args.t} threads", flush=True)
    httpd.serve_forever()


if __name__ == "__main__":
    main()
