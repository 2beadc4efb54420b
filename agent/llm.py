"""The LLM factory and the guarded calls every LLM step goes through.

One factory builds ``ChatOpenAI`` from settings (base URL, model, key, timeout, retries) so any
OpenAI-compatible server works (OpenAI, vLLM, Ollama, llama.cpp). Structured outputs use function calling,
which all of those servers accept (llama.cpp rejects the ``json_schema`` method). Every call is guarded: a
timeout, an HTTP error, a refusal or unparseable output raises :class:`LLMStepFailed` with a short reason,
and the calling node falls back to its offline path for that step and records why — the consult continues.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from graphs.settings import Settings
from prompts import load_prompt

M = TypeVar("M", bound=BaseModel)


class LLMStepFailed(RuntimeError):
    """An LLM step could not produce a usable result; ``str(exc)`` is the reason shown to the user."""


def make_chat_model(settings: Settings) -> BaseChatModel | None:
    """``ChatOpenAI`` for the configured endpoint, or ``None`` for offline mode."""
    if not settings.llm_configured:
        return None
    from langchain_openai import ChatOpenAI

    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else "not-needed"
    return ChatOpenAI(
        model=settings.llm_model,
        base_url=settings.llm_base_url,
        api_key=key,
        timeout=settings.llm_timeout_s,
        max_retries=settings.llm_max_retries,
        temperature=0,
    )


@dataclass
class Usage:
    """LLM calls and tokens of one consult turn (target: ≤ 4 calls for a one-round question)."""

    calls: int = 0
    tokens: int = 0
    failures: list[str] = field(default_factory=list)

    def record(self, message: BaseMessage | None) -> None:
        self.calls += 1
        meta = getattr(message, "usage_metadata", None) or {}
        self.tokens += int(meta.get("total_tokens", 0) or 0)


def _messages(prompt: str) -> list[BaseMessage]:
    return [SystemMessage(load_prompt("system")), HumanMessage(prompt)]


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}"[:300]


def _malformed_calls(message: BaseMessage | None) -> str:
    """Names of tool calls whose arguments did not parse (the client lists them as ``invalid_tool_calls``)."""
    invalid = getattr(message, "invalid_tool_calls", None) or []
    return ", ".join(str(c.get("name") or "?") for c in invalid)


def structured_call(model: BaseChatModel, schema: type[M], prompt: str, usage: Usage) -> M:
    """Ask for a ``schema`` object through function calling; raise :class:`LLMStepFailed` on any failure."""
    try:
        runnable = model.with_structured_output(schema, method="function_calling", include_raw=True)
        out: dict[str, Any] = runnable.invoke(_messages(prompt))  # type: ignore[assignment]
    except Exception as exc:  # network, HTTP status, timeout: all mean "this step goes offline"
        usage.calls += 1
        usage.failures.append(_reason(exc))
        raise LLMStepFailed(_reason(exc)) from exc
    raw = out.get("raw")
    usage.record(raw if isinstance(raw, BaseMessage) else None)
    parsed = out.get("parsed")
    if isinstance(parsed, schema):
        return parsed
    error = out.get("parsing_error")
    malformed = _malformed_calls(raw)
    if malformed:
        reason = f"the model's function arguments were not valid JSON ({malformed})"
    elif isinstance(raw, AIMessage) and not raw.tool_calls and raw.content:
        reason = "the model answered in text instead of calling the function (refusal or unstructured reply)"
    else:
        reason = f"unparseable structured output ({_reason(error) if error else 'no result'})"
    usage.failures.append(reason)
    raise LLMStepFailed(reason)


def text_call(model: BaseChatModel, prompt: str, usage: Usage, on_token: Any = None) -> str:
    """Plain text completion, streamed token by token to ``on_token`` when given."""
    try:
        if on_token is None:
            message = model.invoke(_messages(prompt))
            usage.record(message)
            return str(message.content)
        chunks: list[str] = []
        last: BaseMessage | None = None
        for chunk in model.stream(_messages(prompt)):
            piece = str(chunk.content)
            if piece:
                chunks.append(piece)
                on_token(piece)
            last = chunk if getattr(chunk, "usage_metadata", None) else last
        usage.record(last)
        return "".join(chunks)
    except Exception as exc:
        usage.calls += 1
        usage.failures.append(_reason(exc))
        raise LLMStepFailed(_reason(exc)) from exc


def tool_call_plan(model: BaseChatModel, tools: list[Any], prompt: str, usage: Usage) -> list[dict[str, Any]]:
    """Let the model choose tool calls; return ``[{name, args}]`` (possibly empty when it calls none)."""
    try:
        message = model.bind_tools(tools).invoke(_messages(prompt))
    except Exception as exc:
        usage.calls += 1
        usage.failures.append(_reason(exc))
        raise LLMStepFailed(_reason(exc)) from exc
    usage.record(message)
    calls = getattr(message, "tool_calls", None) or []
    malformed = _malformed_calls(message)
    if malformed and not calls:
        reason = f"the model's tool-call arguments were not valid JSON ({malformed})"
        usage.failures.append(reason)
        raise LLMStepFailed(reason)
    return [{"name": c["name"], "args": dict(c.get("args") or {})} for c in calls]


def topic_summariser(model: BaseChatModel, usage: Usage) -> Any:
    """A builder ``describe_topic`` that asks the LLM for a 60-word summary (prompts/topic_summary.md),
    falling back to the extractive description when a call fails."""
    from graphs.hypergraph import extractive_description

    def describe(entity_name: str, label: str, units: list[Any]) -> str:
        passages = "\n\n".join(u.text for u in units[:6])
        prompt = load_prompt("topic_summary").format(entity=entity_name, label=label, passages=passages)
        try:
            return f"{entity_name} — {label}: " + text_call(model, prompt, usage).strip()[:600]
        except LLMStepFailed:
            return extractive_description(entity_name, label, units)

    return describe
