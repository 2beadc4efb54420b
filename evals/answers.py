"""Answer-level evaluation with an LLM: MCQ (EM / PCR) and long-form (ROUGE-L), closed-book or with
EviGraph's retrieved evidence in the prompt.

Runs only when an LLM is configured (``Settings().llm_configured``); the runner says so plainly and stops
otherwise. The prompt asks for option letters only (HyKGE §A.2.2: "guide LLMs to only answer the correct
answer"), and :func:`parse_options` reads them back tolerantly ("B", "Answer: B and D", "(c)").
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evals.datasets.schema import LongFormItem, McqItem
from evals.metrics.answers import exact_match, partial_correct, rate, rouge_l
from graphs.settings import Settings

Ask = Callable[[str], str]
Retrieve = Callable[[str], list[str]]

_LETTERS = re.compile(r"(?<![A-Za-z])([A-J])(?![A-Za-z])")


def parse_options(reply: str, valid: Sequence[str]) -> set[str]:
    """Option letters in a model reply: the text after "answer:" if present, else the first line."""
    lowered = reply.strip()
    marker = re.search(r"answer\s*(?:is)?\s*[:\-]?", lowered, flags=re.IGNORECASE)
    segment = lowered[marker.end() :] if marker else lowered.splitlines()[0] if lowered else ""
    found = {m.group(1) for m in _LETTERS.finditer(segment.upper())}
    return found & set(valid)


def mcq_prompt(item: McqItem, evidence: Sequence[str]) -> str:
    options = "\n".join(f"{letter}. {text}" for letter, text in sorted(item.options.items()))
    context = "\n\n".join(f"[{i + 1}] {text}" for i, text in enumerate(evidence))
    parts = [
        f"Evidence:\n{context}\n" if evidence else "",
        f"Question: {item.question}\n\nOptions:\n{options}\n",
    ]
    parts.append("Reply with the letter(s) of the correct option(s) only, e.g. 'Answer: B'.")
    return "\n".join(p for p in parts if p)


def long_form_prompt(item: LongFormItem, evidence: Sequence[str]) -> str:
    context = "\n\n".join(f"[{i + 1}] {text}" for i, text in enumerate(evidence))
    head = f"Evidence:\n{context}\n\n" if evidence else ""
    return f"{head}Question: {item.question}\n\nAnswer in one or two short paragraphs."


@dataclass(frozen=True)
class McqResult:
    n: int
    em: float
    pcr: float
    unparsed: int


@dataclass(frozen=True)
class LongFormResult:
    n: int
    rouge_l_f1: float
    rouge_l_recall: float


def evaluate_mcq(items: Sequence[McqItem], ask: Ask, retrieve: Retrieve | None) -> McqResult:
    em: list[bool] = []
    pcr: list[bool] = []
    unparsed = 0
    for item in items:
        evidence = retrieve(item.question) if retrieve else []
        predicted = parse_options(ask(mcq_prompt(item, evidence)), list(item.options))
        unparsed += not predicted
        em.append(exact_match(predicted, item.gold))
        pcr.append(partial_correct(predicted, item.gold))
    return McqResult(len(items), rate(em), rate(pcr), unparsed)


def evaluate_long_form(items: Sequence[LongFormItem], ask: Ask, retrieve: Retrieve | None) -> LongFormResult:
    scores = []
    for item in items:
        evidence = retrieve(item.question) if retrieve else []
        scores.append(rouge_l(ask(long_form_prompt(item, evidence)), item.reference))
    return LongFormResult(
        len(items),
        statistics.fmean(s.f1 for s in scores) if scores else 0.0,
        statistics.fmean(s.recall for s in scores) if scores else 0.0,
    )


def openai_ask(settings: Settings) -> Ask:
    """A plain chat call to the configured OpenAI-compatible endpoint (temperature 0)."""
    from langchain_openai import ChatOpenAI  # imported here: only needed when an LLM is configured

    model = ChatOpenAI(
        model=settings.llm_model,
        base_url=settings.llm_base_url,
        api_key=settings.llm_api_key.get_secret_value() if settings.llm_api_key else "not-needed",
        timeout=settings.llm_timeout_s,
        max_retries=settings.llm_max_retries,
        temperature=0,
    )

    def ask(prompt: str) -> str:
        return str(model.invoke(prompt).content)

    return ask
