"""The consult store's failures name the file and the fix; `evigraph consults` lists what it can (issue 13).

Real SQLite files, real CLI subprocesses; read-only is a real read-only mount (or permission bits when not
root: see ``tests.conftest.read_only``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agent.sessions import list_consults, open_checkpointer
from graphs.model.settings import load_settings
from tests.conftest import read_only

REPO = Path(__file__).resolve().parent.parent
QUESTION = "How is gout treated?"


def _cli(data_dir: Path, kb_root: Path | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "EVIGRAPH_DATA_DIR": str(data_dir),
        "EVIGRAPH_KB_DIR": str(kb_root),
        "COLUMNS": "1000",
    }
    env.pop("EVIGRAPH_CHECKPOINT_URL", None)
    if kb_root is None:  # the first-run path: the default KB under the data dir
        env.pop("EVIGRAPH_KB_DIR")
    return subprocess.run(
        [sys.executable, "-m", "agent.frontends.cli", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
        env=env,
    )


def _one_consult(data_dir: Path, kb_root: Path) -> None:
    done = _cli(data_dir, kb_root, "ask", "--offline", "--json", QUESTION)
    assert done.returncode == 0, done.stderr


def test_a_damaged_store_is_named_with_the_fix(slice_kb_root: Path, tmp_path: Path) -> None:
    store = tmp_path / "consults.sqlite"
    store.write_bytes(b"this is not a database" * 100)
    ask = _cli(tmp_path, slice_kb_root, "ask", "--offline", QUESTION)
    assert ask.returncode == 2 and "Traceback" not in ask.stderr
    assert f"The consult store {store} is damaged" in ask.stderr and f"mv {store}" in ask.stderr
    listing = _cli(tmp_path, slice_kb_root, "consults")
    assert listing.returncode == 2 and str(store) in listing.stderr and "Traceback" not in listing.stderr


def test_a_read_only_store_refuses_turns_clearly_but_still_lists_its_consults(
    slice_kb_root: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    _one_consult(data, slice_kb_root)
    with read_only(data):
        ask = _cli(data, slice_kb_root, "ask", "--offline", QUESTION)
        assert ask.returncode == 2 and "Traceback" not in ask.stderr
        assert f"The consult store {data / 'consults.sqlite'} cannot be written" in ask.stderr
        listing = _cli(data, slice_kb_root, "consults", "--json")
        assert listing.returncode == 0, listing.stderr
        assert QUESTION in listing.stdout
        saver = open_checkpointer(load_settings(data_dir=data), read_only=True)
        try:
            assert len(list_consults(saver)) == 1
        finally:
            saver.conn.close()  # type: ignore[attr-defined]


def test_a_read_only_data_dir_on_first_run_says_where_and_what_to_do(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    with read_only(data):
        ask = _cli(data, None, "ask", "--offline", QUESTION)
    assert ask.returncode == 2 and "Traceback" not in ask.stderr
    assert str(data / "kb") in ask.stderr and "EVIGRAPH_DATA_DIR" in ask.stderr
