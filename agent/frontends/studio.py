"""The consult graph for ``langgraph dev`` / LangGraph Studio (referenced by ``langgraph.json``).

Why a factory and not a module-level graph: importing this module must stay cheap and side-effect free
(Studio imports it to list graphs; a test imports it), while building needs the KB — the default one is
built on first use as ``evigraph ask`` does, which takes a while. The LangGraph server calls
:func:`make_graph` with the run's config and supplies its own checkpointer, so the graph is compiled
without one. The KB, LLM and graph are built once per process and reused for every run.
"""

from __future__ import annotations

import functools
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from agent.deps import ConsultDeps
from agent.graph import build_consult_graph
from agent.llm import make_chat_model
from agent.redact import install_log_redaction
from graphs.kb import open_kb
from graphs.model.settings import load_settings


def make_graph(config: RunnableConfig | None = None) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The consult graph over the configured KB (the default one, built on first use) and LLM, if any.

    Run it in Studio with input ``{"question": "…"}``; the context (task, LLM on/off) takes its defaults.
    """
    return _graph()


@functools.cache
def _graph() -> CompiledStateGraph[Any, Any, Any, Any]:
    from agent.frontends.cli_kb import ensure_default_kb

    install_log_redaction()
    settings = load_settings()
    if settings.kb_dir is None:
        ensure_default_kb(settings)
    deps = ConsultDeps(open_kb(settings), make_chat_model(settings))
    return build_consult_graph(deps)
