"""``/readyz``: is this process ready to answer consults — KB opened, consult store and Neo4j reachable?

Why separate from ``/healthz``: liveness says the process answers (restart it if not); readiness says its
dependencies answer (send it traffic only if so). Each check is bounded in time, so a frozen store makes
``/readyz`` say 503 quickly instead of hanging the probe.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agent.serving import ConsultService

CHECK_TIMEOUT_S = 3.0


async def readiness(service: ConsultService) -> tuple[bool, dict[str, Any]]:
    """``(ready, body)``: the KB version and build in use, and one status line per dependency."""
    kb = service.kb
    checks: dict[str, str] = {"kb": "ok"}
    checks["checkpointer"] = await _check(service.checkpointer_ok())
    ping = getattr(kb.store, "ping", None)
    checks["neo4j"] = await _check(asyncio.to_thread(ping)) if callable(ping) else "not configured"
    ready = all(value in ("ok", "not configured") for value in checks.values())
    body = {
        "ready": ready,
        "kb_version": kb.version,
        "kb_build": kb.build_dir.name,
        "mode": service.mode,
        "turns_admitted": service.admitted,
        "checks": checks,
    }
    return ready, body


async def _check(probe: Any) -> str:
    try:
        await asyncio.wait_for(probe, timeout=CHECK_TIMEOUT_S)
    except TimeoutError:
        return f"no answer within {CHECK_TIMEOUT_S:g} s"
    except Exception as exc:
        return f"failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return "ok"
