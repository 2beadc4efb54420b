"""The structured-output probe's verdict per endpoint, kept on disk for the data dir.

Why: with ``EVIGRAPH_LLM_STRUCTURED=auto`` each new process asked the endpoint a test question (two
methods) before its first step; ``evigraph ask`` is a new process every time, and against a slow or hung
endpoint that probe alone cost minutes (issue 23). The file maps ``base URL|model`` to the method that
worked; a missing or damaged file only means probing again.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path


def read_probe_cache(path: str | None) -> dict[str, str]:
    if not path:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # missing or damaged: probe again
    return data if isinstance(data, dict) else {}


def write_probe_cache(path: str | None, key: str, method: str) -> None:
    if not path:
        return
    target = Path(path)
    with contextlib.suppress(OSError):  # a read-only data dir only costs a probe per process
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".tmp")
        tmp.write_text(json.dumps({**read_probe_cache(path), key: method}, indent=1), encoding="utf-8")
        tmp.replace(target)
