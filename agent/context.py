"""Per-run settings of a consult, passed to the graph as LangGraph run context (never as globals).

Why a context and not state: these do not change during a run and must not be checkpointed as if they were
findings; a resumed consult may run its next turn with other settings (e.g. LLM switched off).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Task = Literal["auto", "clinical", "mcq", "check_reply", "audit"]
TASKS: tuple[str, ...] = ("clinical", "mcq", "check_reply", "audit")


@dataclass(frozen=True)
class ConsultContext:
    """Knobs of one consult turn (defaults follow the papers; see ALGORITHMS.md)."""

    task: Task = "auto"
    """Search condition (EbmKG Figure 9): clinical question, exam MCQ, check a reply, audit a decision."""
    k: int = 3
    """Reasoning-chain hop limit (HyKGE: performance peaks near 3)."""
    n_m: int = 3
    """Entities kept per search term (EbmKG ablation knee)."""
    n_t: int = 10
    """Topics kept from the hypergraph walk."""
    top_k: int = 12
    """Evidence passages passed to the answer."""
    word_budget: int = 8000
    """Cap on retrieved text (EbmKG: 8,000 words)."""
    max_rounds: int = 3
    """Retrieval rounds before answering, whatever the sufficiency verdict."""
    max_tool_calls_per_round: int = 6
    """Follow-up tool calls one planning step may make."""
    llm_enabled: bool = True
    """False forces the offline path even when an LLM is configured."""
    seed: int = 0
    walk_mode: Literal["random_walk", "ppr"] = "ppr"
    started_at: float | None = None
    """When the user's wait began (``time.monotonic()``): the request's arrival, the CLI process's start.
    The turn's LLM deadline counts from here, not from the first LLM step (None: from that step)."""
    turns_running: int = 1
    """Turns running in this process when this one started; sizes the time kept for the offline finish."""
    extra: dict[str, Any] = field(default_factory=dict)
