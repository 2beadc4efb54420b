"""LLM judges for long-form answers: key points of a reference, key-point contradiction (EbmKG eq. 11) and a
pairwise comparison with positions swapped (the inputs of EbmKG eq. 12–13).

Why each judge reads its reply tolerantly and retries once: a judge model wraps JSON in prose or code fences
often enough to matter, and a crashed 100-question run is worse than one counted, conservative verdict.
What a reply that still cannot be read counts as is fixed per judge and tallied in :class:`JudgeTally`, so
a report can say how much of a number rests on fallbacks:

* key points — the reference's sentences become its key points (every item stays scored);
* contradiction — every key point counts as contradicted (coverage can only be understated);
* pairwise — that order's verdict is "tie" on both dimensions (the system cannot win on it).

EbmKG decomposed its references into key points by hand; here the judge does it, so coverage is relative to
the judge's reading of the reference. The pairwise judge sees the two answers in both orders and the system
wins (loses) a dimension only when it wins (loses) in both, which cancels a judge's preference for a
position: a position-biased judge produces ties, not wins.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from prompts import render_prompt

Ask = Callable[[str], str]
"""A plain prompt-in, text-out LLM call (``evals.answers.openai_ask`` makes one; evals.answers re-exports)."""

Outcome = str
"""The system's result on one dimension: "win", "tie" or "loss"."""

T = TypeVar("T")

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_CHOICES = {
    "a": "A",
    "answer a": "A",
    "b": "B",
    "answer b": "B",
    "tie": "tie",
    "equal": "tie",
    "both": "tie",
    "neither": "tie",
}


@dataclass
class JudgeTally:
    """Judge replies that could not be read even after one retry (per judge), and how many retries ran."""

    key_points: int = 0
    contradiction: int = 0
    pairwise: int = 0
    retries: int = 0

    @property
    def total(self) -> int:
        return self.key_points + self.contradiction + self.pairwise


def first_json(reply: str, opener: str) -> Any | None:
    """The first JSON value starting with ``opener`` ("[" or "{") anywhere in ``reply``, else None.

    Scans every occurrence of the opener, so prose, code fences and a stray bracket before the JSON are
    skipped; a reply like ``{"key_points": [...]}`` yields its inner list when asked for "[".
    """
    decoder = json.JSONDecoder()
    for match in re.finditer(re.escape(opener), reply):
        try:
            value, _ = decoder.raw_decode(reply, match.start())
        except json.JSONDecodeError:
            continue
        return value
    return None


def as_data(text: str, *tags: str) -> str:
    """``text`` with any of our delimiter tags removed, so data cannot close its own section of a prompt."""
    for tag in tags:
        text = re.sub(rf"</?\s*{re.escape(tag)}\s*>", " ", text, flags=re.IGNORECASE)
    return text.strip()


def _ask_and_read(ask: Ask, prompt: str, read: Callable[[str], T | None], tally: JudgeTally) -> T | None:
    """One call, and one retry that says the reply was unreadable; None when both replies fail ``read``."""
    value = read(ask(prompt))
    if value is None:
        tally.retries += 1
        value = read(ask(render_prompt("judge_retry", prompt=prompt)))
    return value


def _read_key_points(reply: str) -> list[str] | None:
    value = first_json(reply, "[")
    if not isinstance(value, list):
        return None
    points = [" ".join(str(p).split()) for p in value if isinstance(p, str | int | float) and str(p).strip()]
    return points or None


def reference_sentences(reference: str) -> list[str]:
    """The fallback key points: the reference's sentences (at least one for a non-empty reference)."""
    sentences = [" ".join(s.split()) for s in _SENTENCE_END.split(reference.strip())]
    return [s for s in sentences if s] or [reference.strip()]


def key_points(ask: Ask, reference: str, *, question: str = "", tally: JudgeTally | None = None) -> list[str]:
    """The key points of ``reference`` as the judge lists them (the reference's sentences if unreadable)."""
    tally = tally if tally is not None else JudgeTally()
    prompt = render_prompt(
        "judge_key_points",
        question=as_data(question, "question", "reference_answer") or "(not given)",
        reference=as_data(reference, "question", "reference_answer"),
    )
    points = _ask_and_read(ask, prompt, _read_key_points, tally)
    if points is None:
        tally.key_points += 1
        return reference_sentences(reference)
    return points


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def _as_number(value: Any, default: int) -> int | None:
    if value is None:
        return default
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    digits = re.search(r"\d+", str(value))
    return int(digits.group()) if digits else None


def _flag_reader(count: int) -> Callable[[str], list[bool] | None]:
    """Reads a contradiction reply: a verdict for every key point 1..count, or None."""

    def read(reply: str) -> list[bool] | None:
        value = first_json(reply, "[")
        if not isinstance(value, list):
            return None
        flags: dict[int, bool] = {}
        for position, entry in enumerate(value, start=1):
            flag: bool | None = None
            number: int | None = position
            if isinstance(entry, bool):  # a bare list of flags, in key-point order
                flag = entry
            elif isinstance(entry, dict):
                flag = _as_bool(entry.get("contradict"))
                number = _as_number(entry.get("keypoint_number"), position)
            if flag is None or number is None:
                return None
            flags[number] = flag
        if not set(range(1, count + 1)) <= set(flags):
            return None
        return [flags[n] for n in range(1, count + 1)]

    return read


def contradicted(
    ask: Ask, key_points: list[str], answer: str, *, question: str = "", tally: JudgeTally | None = None
) -> list[bool]:
    """EbmKG's ``contradict`` flag per key point (True = ``answer`` misses or contradicts it).

    A reply without a readable verdict for every key point, even after a retry, counts them all as
    contradicted.
    """
    if not key_points:
        return []
    tally = tally if tally is not None else JudgeTally()
    tags = ("question", "golden_answer_key_points", "ai_response")
    prompt = render_prompt(
        "judge_contradiction",
        question=as_data(question, *tags) or "(not given)",
        key_points="\n".join(f"{i}. {as_data(p, *tags)}" for i, p in enumerate(key_points, start=1)),
        answer=as_data(answer, *tags),
    )
    flags = _ask_and_read(ask, prompt, _flag_reader(len(key_points)), tally)
    if flags is None:
        tally.contradiction += 1
        return [True] * len(key_points)
    return flags


def _choice(value: Any) -> str | None:
    if isinstance(value, dict):  # EbmKG's shape: {"answer": ..., "exp": ...}
        value = value.get("answer")
    return _CHOICES.get(value.strip().lower()) if isinstance(value, str) else None


def _read_verdict(reply: str) -> tuple[str, str] | None:
    """("A"|"B"|"tie", "A"|"B"|"tie") for (recall, precision), or None."""
    value = first_json(reply, "{")
    if not isinstance(value, dict):
        return None
    recall, precision = _choice(value.get("recall")), _choice(value.get("precision"))
    return (recall, precision) if recall is not None and precision is not None else None


def _outcome(choice: str, system_position: str) -> Outcome:
    """The system's outcome when the judge chose ``choice`` ("A"/"B"/"tie") and the system stood at
    ``system_position``."""
    return "tie" if choice == "tie" else "win" if choice == system_position else "loss"


def combine(first: Outcome, second: Outcome) -> Outcome:
    """A win (loss) only when both orders agree on it; anything else is a tie."""
    return first if first == second and first in ("win", "loss") else "tie"


def pairwise(
    ask: Ask,
    question: str,
    system_answer: str,
    baseline_answer: str,
    *,
    reference: str = "",
    tally: JudgeTally | None = None,
) -> tuple[Outcome, Outcome]:
    """The system's (recall, precision) outcome against the baseline, judged in both positions.

    Order 1 puts the system answer in position A, order 2 in position B; an unreadable reply makes that
    order a tie on both dimensions (and is tallied once per reply).
    """
    tally = tally if tally is not None else JudgeTally()
    tags = ("question", "reference_answer", "answer_a", "answer_b")
    orders = ((system_answer, baseline_answer, "A"), (baseline_answer, system_answer, "B"))
    per_order: list[tuple[Outcome, Outcome]] = []
    for answer_a, answer_b, system_position in orders:
        prompt = render_prompt(
            "judge_pairwise",
            question=as_data(question, *tags),
            reference=as_data(reference, *tags) or "(not given)",
            answer_a=as_data(answer_a, *tags),
            answer_b=as_data(answer_b, *tags),
        )
        verdict = _ask_and_read(ask, prompt, _read_verdict, tally)
        if verdict is None:
            tally.pairwise += 1
            per_order.append(("tie", "tie"))
            continue
        recall, precision = verdict
        per_order.append((_outcome(recall, system_position), _outcome(precision, system_position)))
    (recall_1, precision_1), (recall_2, precision_2) = per_order
    return combine(recall_1, recall_2), combine(precision_1, precision_2)
