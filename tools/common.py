"""What the four retrieval tools share: input limits, errors, and the LangChain wrapper.

Each tool is a pure function ``tool(kb, request) -> result`` over pydantic models; :func:`as_langchain_tool`
exposes it to an LLM with the request model as its argument schema, so a model can call it through tool
calling and the agent's tool-executing node validates arguments with the same model.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, ValidationError

from graphs.kb import KnowledgeBase

MAX_TEXT_CHARS = 4000
"""Longer inputs are truncated with a note (a 50,000-character paste must not stall a tool)."""

Req = TypeVar("Req", bound=BaseModel)
Res = TypeVar("Res", bound=BaseModel)


class ToolInputError(ValueError):
    """A request the tool cannot serve (bad ids, out-of-range parameters); the message says why."""


def truncate(text: str, limit: int = MAX_TEXT_CHARS) -> tuple[str, str | None]:
    """``text`` cut at a word boundary under ``limit`` characters, and a note when it was cut."""
    if len(text) <= limit:
        return text, None
    cut = text.rfind(" ", 0, limit)
    cut = cut if cut > limit // 2 else limit
    return text[:cut], f"input truncated from {len(text):,} to {cut:,} characters"


def as_langchain_tool(
    kb: KnowledgeBase,
    fn: Callable[[KnowledgeBase, Any], BaseModel],
    request_model: type[BaseModel],
    name: str,
    description: str,
) -> BaseTool:
    """Wrap ``fn(kb, request)`` as a LangChain tool; errors come back to the model as text, not exceptions."""

    def run(**kwargs: Any) -> str:
        try:
            request = request_model.model_validate(kwargs)
            return fn(kb, request).model_dump_json()
        except (ValidationError, ToolInputError) as exc:
            return json.dumps({"error": str(exc)})

    return StructuredTool.from_function(
        func=run, name=name, description=description, args_schema=request_model
    )
