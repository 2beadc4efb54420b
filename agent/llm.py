"""The LLM factory and the guarded calls every LLM step goes through.

One factory builds ``ChatOpenAI`` from settings (base URL, model, key, timeout, retries) so any
OpenAI-compatible server works (OpenAI, vLLM, Ollama, llama.cpp). Structured steps ask in one of two ways,
chosen per endpoint (``llm_structured``): function calling (OpenAI, vLLM with a tool parser) or a JSON
schema in ``response_format`` (grammar-constrained on llama.cpp, which ignores a named ``tool_choice`` and
whose Qwen-Coder template emits no tool-call tags); ``auto`` probes the endpoint once per process and
remembers. A reply that is JSON in a Markdown fence instead of a function call is still accepted.

Every call is guarded (see :mod:`agent.llm_guard`): a per-call ``max_tokens`` (a model that never stops
ends at the cap), the turn's shared deadline and a circuit breaker. A timeout, an HTTP error, prose where
JSON was asked, or the deadline raises :class:`LLMStepFailed` with a short reason, and the calling node
falls back to its offline path for that step and records why — the consult continues.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.utils.json import parse_json_markdown
from pydantic import BaseModel, ValidationError

from agent.llm_guard import (
    BreakerOpen,
    DeadlineExceeded,
    breaker_for,
    current_deadline,
    run_within,
)
from agent.llm_probe_cache import read_probe_cache, write_probe_cache
from agent.redact import redact
from graphs.model.settings import Settings
from prompts import load_prompt

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
StructuredMethod = Literal["function_calling", "json_schema"]
MAX_TOKENS = {"hypothesis": 320, "verdict": 400, "plan": 260, "answer": 480, "summary": 160, "probe": 40}
"""Per-step output caps: enough for the schema or a 350-word answer, and a bound on a model that never
stops (at ~5 tokens/s on a busy CPU, 480 tokens is ~100 s)."""


class LLMStepFailed(RuntimeError):
    """An LLM step could not produce a usable result; ``str(exc)`` is the reason shown to the user."""


def _chat_class() -> type[BaseChatModel]:
    from langchain_openai import ChatOpenAI

    class EviGraphChat(ChatOpenAI):
        """``ChatOpenAI`` plus EviGraph's per-endpoint policy (never sent to the server)."""

        structured: str = "auto"
        turn_deadline_s: float | None = None
        breaker_cooldown_s: float = 60.0
        probe_cache: str | None = None

    return EviGraphChat


_CHAT_CLASS: type[BaseChatModel] | None = None
# The turn deadline for `EVIGRAPH_LLM_BASE_URL=local` unless one is set explicitly.
LOCAL_TURN_DEADLINE_S = 600.0


def make_chat_model(settings: Settings) -> BaseChatModel | None:
    """``ChatOpenAI`` for the configured endpoint, or ``None`` for offline mode."""
    global _CHAT_CLASS
    if not settings.llm_configured:
        return None
    _CHAT_CLASS = _CHAT_CLASS or _chat_class()
    local = settings.llm_base_url == "local"
    base_url = local_base_url() if local else settings.llm_base_url
    deadline = settings.llm_turn_deadline_s
    if local and "llm_turn_deadline_s" not in settings.model_fields_set:
        # A CPU-only 1.5B model makes ~5-10 tokens/s: three calls do not fit the default 180 s, and
        # a turn that always ends at the deadline never shows the model's answer.
        deadline = max(deadline, LOCAL_TURN_DEADLINE_S)
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else "not-needed"
    return _CHAT_CLASS(
        model=settings.llm_model,
        base_url=base_url,
        api_key=key,
        timeout=settings.llm_timeout_s,
        max_retries=settings.llm_max_retries,
        temperature=0,
        structured=settings.llm_structured,
        turn_deadline_s=deadline,
        breaker_cooldown_s=settings.llm_breaker_cooldown_s,
        probe_cache=str(settings.data_dir / "llm_probe.json"),
    )


def local_base_url() -> str:
    """``EVIGRAPH_LLM_BASE_URL=local``: the URL of the server ``evigraph llm serve`` started."""
    from agent.errors import UserError
    from agent.local_llm_server import running

    info = running()
    if info is None:
        raise UserError(
            "EVIGRAPH_LLM_BASE_URL=local but no local LLM server is running: start one with "
            "`evigraph llm serve`, or unset EVIGRAPH_LLM_BASE_URL for offline mode."
        )
    return info.base_url


def endpoint_of(model: BaseChatModel) -> str:
    base = getattr(model, "openai_api_base", None) or type(model).__name__
    return f"{base}|{getattr(model, 'model_name', '')}"


def turn_deadline_seconds(model: BaseChatModel | None) -> float | None:
    return getattr(model, "turn_deadline_s", None) if model is not None else None


@dataclass
class Usage:
    """LLM calls and tokens of one step (target: ≤ 3 calls for a one-round question)."""

    calls: int = 0
    tokens: int = 0
    failures: list[str] = field(default_factory=list)
    deadline: float | None = field(default_factory=current_deadline)
    """The turn's shared deadline (monotonic), picked up inside a graph run."""

    def record(self, message: BaseMessage | None) -> None:
        self.calls += 1
        meta = getattr(message, "usage_metadata", None) or {}
        self.tokens += int(meta.get("total_tokens", 0) or 0)


def _messages(prompt: str) -> list[BaseMessage]:
    return [SystemMessage(load_prompt("system")), HumanMessage(prompt)]


def _reason(exc: BaseException) -> str:
    """One line about a failure, secrets masked (an error body may echo a key or a URL password)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return redact(f"{type(exc).__name__}: {text}")[:300]


def limited(model: BaseChatModel, step: str, deadline: float | None = None) -> BaseChatModel:
    """A copy of ``model`` with the ``step``'s ``max_tokens`` (none without a step) and, under a turn
    ``deadline``, an HTTP client whose request ends by it (models without these fields are returned as
    they are).

    Why the client: a call abandoned at the deadline used to run on in its thread until the client's own
    timeout and retries gave up (60 s × 3), and ``evigraph ask`` could not exit until then — 184 s for a
    10 s deadline (issue 23). Under a deadline the request's timeout is the time left and it is not
    retried: a retry (or a 429's ``Retry-After: 30``) cannot fit, and the breaker and the offline fallback
    handle the failure."""
    fields = type(model).model_fields
    update: dict[str, Any] = {}
    if step and "max_tokens" in fields:
        update["max_tokens"] = MAX_TOKENS.get(step, 400)
    root = getattr(model, "root_client", None)
    if deadline is not None and "root_client" in fields and root is not None:
        left = max(0.1, deadline - time.monotonic())
        own = getattr(model, "request_timeout", None)
        timeout = min(left, float(own)) if isinstance(own, int | float) else left
        bounded = root.with_options(timeout=timeout, max_retries=0)
        update |= {"root_client": bounded, "client": bounded.chat.completions}
    return model.model_copy(update=update) if update else model


def endpoint_failure(exc: BaseException) -> bool:
    """True for failures of the endpoint (network, timeout, HTTP 5xx/429, auth) — what the breaker counts;
    False for a reply the model got wrong (prose where JSON was asked, a cut-off reply): the endpoint is
    up and the next step may well succeed."""
    import httpx
    import openai

    if isinstance(exc, (DeadlineExceeded, TimeoutError, httpx.HTTPError, openai.APIConnectionError)):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code >= 500 or exc.status_code in (401, 403, 404, 429)
    return False


def guarded(
    model: BaseChatModel,
    usage: Usage,
    fn: Callable[[], T],
    output_error: Callable[[Exception], str] | None = None,
) -> T:
    """``fn()`` under the endpoint's circuit breaker and the turn's deadline; failures → LLMStepFailed.

    ``output_error`` words a failure of the model's reply, not of the endpoint (``endpoint_failure``)."""
    cooldown = float(getattr(model, "breaker_cooldown_s", 60.0) or 60.0)
    breaker = breaker_for(endpoint_of(model), cooldown)
    try:
        breaker.check()
    except BreakerOpen as exc:
        usage.failures.append(str(exc))
        raise LLMStepFailed(str(exc)) from exc
    if usage.deadline is not None and usage.deadline <= time.monotonic():
        reason = "skipped: the turn's LLM deadline has passed"
        usage.failures.append(reason)
        raise LLMStepFailed(reason)
    try:
        result = run_within(fn, usage.deadline)
    except Exception as exc:  # network, HTTP status, timeout, unparseable reply: this step goes offline
        usage.calls += 1
        if endpoint_failure(exc):
            reason = str(exc) if isinstance(exc, DeadlineExceeded) else _reason(exc)
            breaker.failure(reason)
        else:
            breaker.success()
            reason = output_error(exc) if output_error else _reason(exc)
        usage.failures.append(reason)
        raise LLMStepFailed(reason) from exc
    breaker.success()
    return result


def _malformed_calls(message: BaseMessage | None) -> str:
    """Names of tool calls whose arguments did not parse (the client lists them as ``invalid_tool_calls``)."""
    invalid = getattr(message, "invalid_tool_calls", None) or []
    return ", ".join(str(c.get("name") or "?") for c in invalid)


def json_in_text(schema: type[M], text: str) -> M | None:
    """``schema`` parsed from JSON in a reply's text (bare or in a Markdown fence), or ``None``.

    Why: weak or tool-less models (Qwen-Coder on llama.cpp) answer a function call with fenced JSON."""
    try:
        data = parse_json_markdown(text)
    except ValueError:
        return None
    if isinstance(data, dict) and "arguments" in data and isinstance(data["arguments"], dict):
        data = data["arguments"]  # {"name": ..., "arguments": {...}} written out as text
    try:
        return schema.model_validate(data)
    except ValidationError:
        return None


_probe_lock = threading.Lock()
_probed: dict[str, StructuredMethod] = {}


class _Probe(BaseModel):
    answer: int


def structured_method(model: BaseChatModel, usage: Usage | None = None) -> StructuredMethod:
    """The structured-output method for ``model``'s endpoint: the setting, or (``auto``) the probe's result.

    The probe asks a tiny question once by function calling and, if that does not come back as a function
    call, once by JSON schema; the first that parses is remembered for the process and on disk (the
    model's ``probe_cache`` file, keyed by endpoint and model), so a new process does not ask again. When
    neither parses, JSON schema is used (grammar-constrained servers are the ones that fail function
    calling). The probe runs under the turn's deadline and breaker like any call (``usage``): a hung
    endpoint fails the step at the deadline and counts toward the breaker; that is not cached."""
    mode = getattr(model, "structured", None)
    if mode in ("function_calling", "json_schema"):
        return mode
    if mode != "auto":
        return "function_calling"  # a model without the setting (scripted test models)
    key = endpoint_of(model)
    cache = getattr(model, "probe_cache", None)
    with _probe_lock:
        if key not in _probed:
            stored = read_probe_cache(cache).get(key)
            if stored in ("function_calling", "json_schema"):
                _probed[key] = stored  # type: ignore[assignment]
            else:
                _probed[key] = _probe(model, usage or Usage())
                write_probe_cache(cache, key, _probed[key])
        return _probed[key]


def forget_probes() -> None:
    with _probe_lock:
        _probed.clear()


def _probe(model: BaseChatModel, usage: Usage) -> StructuredMethod:
    prompt = "What is 2 + 3? Give the answer as the field `answer`."
    kept = len(usage.failures)
    for method in ("function_calling", "json_schema"):
        runnable = limited(model, "probe", usage.deadline).with_structured_output(
            _Probe, method=method, include_raw=True
        )
        try:
            out: dict[str, Any] = guarded(model, usage, lambda r=runnable: r.invoke(_messages(prompt)))  # type: ignore[misc]
        except LLMStepFailed as exc:
            cause = exc.__cause__
            if cause is None or isinstance(cause, BreakerOpen) or endpoint_failure(cause):
                raise  # down, hung, past the deadline: no verdict on the method, and nothing is cached
            continue  # the endpoint rejects this method: try the next
        if isinstance(out.get("parsed"), _Probe):
            del usage.failures[kept:]  # a method the endpoint refused is not a failure of the turn
            return method
    del usage.failures[kept:]
    return "json_schema"


def structured_call(model: BaseChatModel, schema: type[M], prompt: str, usage: Usage, step: str = "") -> M:
    """Ask for a ``schema`` object; raise :class:`LLMStepFailed` on any failure."""
    method = structured_method(model, usage)
    runnable = limited(model, step, usage.deadline).with_structured_output(
        schema, method=method, include_raw=True
    )
    how = "calling the function" if method == "function_calling" else "writing the requested JSON"

    def wrong_reply(exc: Exception) -> str:  # the JSON-schema path raises while parsing the reply
        return f"the model answered in text instead of {how} ({_reason(exc)[:120]})"

    reply = guarded(model, usage, lambda: runnable.invoke(_messages(prompt)), wrong_reply)
    out: dict[str, Any] = reply if isinstance(reply, dict) else {"parsed": reply}
    raw = out.get("raw")
    usage.record(raw if isinstance(raw, BaseMessage) else None)
    parsed = out.get("parsed")
    if isinstance(parsed, schema):
        return parsed
    text = str(raw.content) if isinstance(raw, AIMessage) else ""
    rescued = json_in_text(schema, text) if text else None
    if rescued is not None:
        return rescued
    error = out.get("parsing_error")
    malformed = _malformed_calls(raw)
    if malformed:
        reason = f"the model's function arguments were not valid JSON ({malformed})"
    elif isinstance(raw, AIMessage) and not raw.tool_calls and raw.content:
        reason = f"the model answered in text instead of {how} (refusal or unstructured reply)"
    else:
        reason = f"unparseable structured output ({_reason(error) if error else 'no result'})"
    usage.failures.append(reason)
    raise LLMStepFailed(reason)


def text_call(model: BaseChatModel, prompt: str, usage: Usage, on_token: Any = None, step: str = "") -> str:
    """Plain text completion, streamed token by token to ``on_token`` when given."""
    capped = limited(model, step, usage.deadline)

    def call() -> tuple[str, BaseMessage | None]:
        if on_token is None:
            message = capped.invoke(_messages(prompt))
            return str(message.content), message
        chunks: list[str] = []
        last: BaseMessage | None = None
        for chunk in capped.stream(_messages(prompt)):
            if usage.deadline is not None and time.monotonic() > usage.deadline:
                # A reply trickling in (a token every few seconds) never trips the per-read timeout: stop
                # reading at the deadline, which closes the stream and frees the thread.
                raise DeadlineExceeded("the reply was still streaming at the turn's LLM deadline")
            piece = str(chunk.content)
            if piece:
                chunks.append(piece)
                on_token(piece)
            last = chunk if getattr(chunk, "usage_metadata", None) else last
        return "".join(chunks), last

    text, message = guarded(model, usage, call)
    usage.record(message)
    return text


def tool_call_plan(model: BaseChatModel, tools: list[Any], prompt: str, usage: Usage) -> list[dict[str, Any]]:
    """Let the model choose tool calls; return ``[{name, args}]`` (possibly empty when it calls none)."""
    bound = limited(model, "plan", usage.deadline).bind_tools(tools)
    message = guarded(model, usage, lambda: bound.invoke(_messages(prompt)))
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
    from graphs.building.hypergraph import extractive_description

    def describe(entity_name: str, label: str, units: list[Any]) -> str:
        passages = "\n\n".join(u.text for u in units[:6])
        prompt = load_prompt("topic_summary").format(entity=entity_name, label=label, passages=passages)
        try:
            return (
                f"{entity_name} — {label}: " + text_call(model, prompt, usage, step="summary").strip()[:600]
            )
        except LLMStepFailed:
            return extractive_description(entity_name, label, units)

    return describe
