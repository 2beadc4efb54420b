"""Answer-level evaluation with an LLM: MCQ (EM / PCR) and long-form (ROUGE-L; with a judge also key-point
coverage, EbmKG eq. 11, and the advantage score over the no-evidence answer, eq. 12–13), closed-book or
with EviGraph's retrieved evidence in the prompt.

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
from evals.judges import Ask, JudgeTally, contradicted, key_points, pairwise
from evals.metrics.answers import (
    Advantage,
    advantage_score,
    exact_match,
    key_point_coverage,
    partial_correct,
    rate,
    rouge_l,
)
from graphs.model.settings import Settings

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
    """ROUGE-L always; the judged metrics only when a judge ran (None otherwise).

    ``advantage`` compares the answer with EviGraph's evidence against the same model's answer without it,
    so it needs retrieval; ``judge_unparsed`` counts judge replies that fell back (see evals.judges).
    """

    n: int
    rouge_l_f1: float
    rouge_l_recall: float
    key_point_coverage: float | None = None
    key_points_total: int | None = None
    advantage: Advantage | None = None
    judge_unparsed: JudgeTally | None = None


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


def evaluate_long_form(
    items: Sequence[LongFormItem], ask: Ask, retrieve: Retrieve | None, judge: Ask | None = None
) -> LongFormResult:
    """ROUGE-L of ``ask``'s answers; with ``judge`` also key-point coverage and, when ``retrieve`` is given,
    the advantage of the evidence-grounded answer over the no-evidence answer of the same model.

    Per item with a judge: the answer, key points of the reference, their contradiction flags and, with
    retrieval, the baseline answer plus two pairwise calls (positions swapped) — up to 6 LLM calls.
    """
    scores = []
    flags: list[list[bool]] = []
    recall_outcomes: list[str] = []
    precision_outcomes: list[str] = []
    tally = JudgeTally()
    for item in items:
        evidence = retrieve(item.question) if retrieve else []
        answer = ask(long_form_prompt(item, evidence))
        scores.append(rouge_l(answer, item.reference))
        if judge is None:
            continue
        points = key_points(judge, item.reference, question=item.question, tally=tally)
        flags.append(contradicted(judge, points, answer, question=item.question, tally=tally))
        if retrieve is not None:
            baseline = ask(long_form_prompt(item, []))
            recall, precision = pairwise(
                judge, item.question, answer, baseline, reference=item.reference, tally=tally
            )
            recall_outcomes.append(recall)
            precision_outcomes.append(precision)
    total_points = sum(len(f) for f in flags)
    return LongFormResult(
        len(items),
        statistics.fmean(s.f1 for s in scores) if scores else 0.0,
        statistics.fmean(s.recall for s in scores) if scores else 0.0,
        key_point_coverage=key_point_coverage(flags) if total_points else None,
        key_points_total=total_points if judge is not None else None,
        advantage=advantage_score(recall_outcomes, precision_outcomes) if recall_outcomes else None,
        judge_unparsed=tally if judge is not None else None,
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
