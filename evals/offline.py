"""An offline consultant over a KB directory, for the evals that ask it question after question.

Why a helper: the evals that put many questions to the agent as new consults (evals/causes_questions.py,
evals/definition_questions.py) need the same set-up — the KB as a user would have it, a throw-away data
directory for the consults, no LLM, an in-memory checkpointer.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from langgraph.checkpoint.memory import InMemorySaver

from agent.consult import Consultant
from graphs.model.settings import Settings


@contextmanager
def offline_consultant(kb_root: Path) -> Iterator[Consultant]:
    """A consultant on ``kb_root`` with no LLM, whose consults live in a temporary directory."""
    with tempfile.TemporaryDirectory() as tmp:
        yield Consultant(
            Settings(kb_dir=kb_root, data_dir=Path(tmp), llm_enabled=False),
            checkpointer=InMemorySaver(),
            use_llm=False,
        )
