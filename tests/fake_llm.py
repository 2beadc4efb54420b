"""A scripted chat model for agent tests: it replays the replies a test wrote, and records what it was asked.

``GenericFakeChatModel`` cannot bind tools or produce structured output as it is; this subclass's
``bind_tools`` returns the model itself (recording the tools and ``tool_choice``), so the planner's tool
calling and ``with_structured_output(..., method="function_calling")`` both read the scripted
``AIMessage.tool_calls`` exactly as they would read a real model's. A scripted reply may also be a function
of the prompt messages, for replies that must cite evidence ids only known once retrieval has run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

Reply = AIMessage | str | Callable[[list[BaseMessage]], AIMessage | str]

EVIDENCE_ID = re.compile(r"\[(E:[0-9a-f]+)\]")


class ScriptExhausted(RuntimeError):
    """The agent made more LLM calls than the test scripted."""


class ScriptedChatModel(GenericFakeChatModel):
    """Replays ``script`` one reply per call; ``prompts``, ``bound`` and ``replies`` record the exchange."""

    messages: Any = Field(default_factory=lambda: iter(()))
    script: list[Any] = Field(default_factory=list)
    prompts: list[list[BaseMessage]] = Field(default_factory=list)
    bound: list[dict[str, Any]] = Field(default_factory=list)
    replies: list[AIMessage] = Field(default_factory=list)

    def bind_tools(
        self,
        tools: Sequence[Any],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        names = [convert_to_openai_tool(t)["function"]["name"] for t in tools]
        self.bound.append({"tools": names, "tool_choice": tool_choice})
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.prompts.append(list(messages))
        if not self.script:
            raise ScriptExhausted(f"LLM call #{len(self.prompts)} was not scripted")
        reply = self.script.pop(0)
        if callable(reply):
            reply = reply(list(messages))
        message = AIMessage(content=reply) if isinstance(reply, str) else reply
        self.replies.append(message)
        return ChatResult(generations=[ChatGeneration(message=message)])

    @property
    def calls(self) -> int:
        return len(self.prompts)


def structured(name: str, **args: Any) -> AIMessage:
    """A function-calling reply carrying ``args`` for the schema called ``name`` (e.g. ``"LLMVerdict"``)."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call_{name}"}])


def tool_calls(*calls: tuple[str, dict[str, Any]]) -> AIMessage:
    """A planner reply calling the given tools in order."""
    return AIMessage(
        content="",
        tool_calls=[{"name": n, "args": a, "id": f"call_{i}"} for i, (n, a) in enumerate(calls)],
    )


def hypothesis(terms: list[str], text: str = "A tentative answer.") -> AIMessage:
    features = [{"text": f"A passage about {t}.", "usefulness": 8} for t in terms[:3]]
    return structured("HypothesisOutput", hypothesis=text, search_terms=terms, features=features)


def verdict(completeness: float, **fields: list[str]) -> AIMessage:
    """An ``LLMVerdict`` reply; ``fields`` sets missing_entities / missing_labels / reasons …"""
    return structured("LLMVerdict", completeness=completeness, **{"reasons": ["scripted verdict"], **fields})


def prompt_text(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


def evidence_ids_in(messages: list[BaseMessage]) -> list[str]:
    """The evidence ids an answer prompt listed, in order (what a well-behaved model may cite)."""
    return list(dict.fromkeys(EVIDENCE_ID.findall(prompt_text(messages))))


def answer_citing(template: str) -> Callable[[list[BaseMessage]], str]:
    """An answer reply whose ``{e0}``, ``{e1}``… placeholders become the prompt's first evidence ids."""

    def reply(messages: list[BaseMessage]) -> str:
        ids = evidence_ids_in(messages)
        return template.format(**{f"e{i}": eid for i, eid in enumerate(ids)})

    return reply
