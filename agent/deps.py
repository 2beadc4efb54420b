"""What the consult graph's nodes depend on: the knowledge base and (optionally) a chat model.

Why a dependency object instead of globals or run context: the KB and the model are long-lived, not
serialisable and not per-run settings; passing them in when the graph is built lets tests hand in a small
real KB and a fake model, and lets the Slack bot and the terminal share one loaded KB.
"""

from __future__ import annotations

from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel

from graphs.kb import KnowledgeBase


@dataclass
class ConsultDeps:
    kb: KnowledgeBase
    llm: BaseChatModel | None = None
    """``None`` means offline mode: deterministic planner and extractive answers."""
