"""The README's "Where things are" map matches the tree, and the import rules hold.

Why a test: the map is how a newcomer finds "the Neo4j code" or "where the walk lives"; a package added or
moved without its line makes the map lie quietly. The import rules (agent → tools → graphs, the layers
inside graphs/) are the contracts in pyproject.toml, run here with import-linter so a violation fails the
suite, not only CI's static step.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ROOT_PACKAGES = ("agent", "tools", "graphs", "prompts", "evals")
ALSO_MAPPED = ("tests", "data", ".ci")


def _map_paths() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Where things are", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^- `([^`]+)/`", section, flags=re.MULTILINE)


def _packages() -> set[str]:
    found = set()
    for root in ROOT_PACKAGES:
        for init in (REPO / root).rglob("__init__.py"):
            if "__pycache__" not in init.parts:
                found.add(init.parent.relative_to(REPO).as_posix())
    return found


def test_every_mapped_path_exists() -> None:
    listed = _map_paths()
    assert len(listed) >= len(ROOT_PACKAGES)
    missing = [path for path in listed if not (REPO / path).is_dir()]
    assert not missing, f"README 'Where things are' lists folders that do not exist: {missing}"


def test_every_package_is_mapped() -> None:
    listed = set(_map_paths())
    unlisted = sorted((_packages() | set(ALSO_MAPPED)) - listed)
    assert not unlisted, f"packages missing from README 'Where things are': {unlisted}"


def test_each_mapped_path_is_listed_once() -> None:
    listed = _map_paths()
    assert len(listed) == len(set(listed))


def test_each_graphs_subpackage_says_what_it_owns() -> None:
    for package in sorted(p for p in _packages() if p.startswith("graphs/")):
        docstring = (REPO / package / "__init__.py").read_text(encoding="utf-8").strip()
        assert docstring.startswith('"""') and len(docstring) > 120, package


def test_import_contracts_hold() -> None:
    # In a child process: import-linter reconfigures logging in the process that runs it, which broke a
    # later test that reads httpx's log lines.
    script = (
        "import sys; from importlinter.cli import lint_imports; "
        f"sys.exit(lint_imports(config_filename={str(REPO / 'pyproject.toml')!r}, no_cache=True, "
        "no_logo=True))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    assert "0 broken" in completed.stdout
