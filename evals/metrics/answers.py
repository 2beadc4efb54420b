"""Answer-level metrics as pure functions: EM / PCR (HyKGE §A.2.2), ROUGE-L, key-point coverage (EbmKG
eq. 11) and the advantage score (EbmKG eq. 12–13). The LLM judges that produce the inputs of the last two
live in evals/judges.py and run (from evals/answers.py) only when an LLM is configured.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

_TOKEN = re.compile(r"[a-z0-9]+")


def exact_match(predicted: Collection[str], gold: Collection[str]) -> bool:
    """EM: the chosen option set equals the gold set exactly."""
    return bool(predicted) and set(predicted) == set(gold)


def partial_correct(predicted: Collection[str], gold: Collection[str]) -> bool:
    """PCR: a non-empty subset of the gold options with no wrong option counts as correct."""
    return bool(predicted) and set(predicted) <= set(gold)


def rate(flags: Sequence[bool]) -> float:
    """Fraction of true flags (EM or PCR over a question set, eq. 7); 0 for an empty set."""
    return sum(flags) / len(flags) if flags else 0.0


def tokens(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens (the ROUGE tokenizer's behaviour without stemming)."""
    return _TOKEN.findall(text.lower())


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence, O(|a|·|b|) time, O(|b|) memory."""
    if not a or not b:
        return 0
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if x == y else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


@dataclass(frozen=True)
class RougeL:
    precision: float
    recall: float
    f1: float


def rouge_l(candidate: str, reference: str) -> RougeL:
    """ROUGE-L (Lin 2004) with β = 1: LCS over tokens; ``recall`` is HyKGE's ROUGE-R."""
    cand, ref = tokens(candidate), tokens(reference)
    lcs = lcs_length(cand, ref)
    if lcs == 0:
        return RougeL(0.0, 0.0, 0.0)
    precision, recall = lcs / len(cand), lcs / len(ref)
    return RougeL(precision, recall, 2 * precision * recall / (precision + recall))


def key_point_coverage(contradicted: Sequence[Sequence[bool]]) -> float:
    """EbmKG eq. 11: Σ_i |{k ∈ K_i : not contradict(k)}| / Σ_i |K_i|.

    ``contradicted[i][j]`` is the judge's ``contradict`` flag for key point j of question i (True = the
    answer misses or contradicts it).
    """
    total = sum(len(points) for points in contradicted)
    if total == 0:
        raise ValueError("key-point coverage needs at least one key point")
    return sum(sum(1 for flag in points if not flag) for points in contradicted) / total


@dataclass(frozen=True)
class Advantage:
    recall_ratio: float
    precision_ratio: float
    score: float


def advantage_score(recall_outcomes: Sequence[str], precision_outcomes: Sequence[str]) -> Advantage:
    """EbmKG eq. 12–13 from pairwise judge outcomes ("win" / "tie" / "loss" for the system under test).

    ``r = r_win / (1 − r_tie)``, ``p = p_win / (1 − p_tie)``, ``a = 4rp / (r + p) − 1``: a > 0 means the
    system wins more than it loses. All ties give r (or p) = 0/0, reported as 0.5 (neither side ahead).
    """

    def ratio(outcomes: Sequence[str]) -> float:
        if not outcomes:
            raise ValueError("advantage needs judged pairs")
        bad = set(outcomes) - {"win", "tie", "loss"}
        if bad:
            raise ValueError(f"outcomes must be win/tie/loss, got {sorted(bad)}")
        win = outcomes.count("win") / len(outcomes)
        tie = outcomes.count("tie") / len(outcomes)
        return 0.5 if tie == 1.0 else win / (1.0 - tie)

    r, p = ratio(list(recall_outcomes)), ratio(list(precision_outcomes))
    score = 4 * r * p / (r + p) - 1 if r + p > 0 else -1.0
    return Advantage(r, p, score)


def gold_names(exact: Any) -> list[str]:
    """Every synonym of every gold item of a BioASQ exact answer (a name, a list of them, or a list of
    synonym lists)."""
    items = exact if isinstance(exact, list) else [exact]
    return [s for item in items for s in (item if isinstance(item, list) else [item]) if isinstance(s, str)]


def exact_hit(text: str, exact: Any) -> bool:
    """BioASQ exact answer: whether any synonym of any gold item appears in ``text`` (on word boundaries,
    case-insensitive)."""
    names = gold_names(exact)
    low = text.lower()
    return any(
        re.search(r"(?<!\w)" + re.escape(n.lower().strip()) + r"(?!\w)", low) for n in names if n.strip()
    )


def _loose(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+|_", " ", text.lower()).split())


def exact_hit_lenient(text: str, exact: Any) -> bool:
    """:func:`exact_hit` with punctuation, hyphens and spacing ignored ("95%" for "95 %", "tumor-associated
    macrophages" for "Tumor Associated Macrophages"), as SQuAD's answer normalisation does. A second column
    only: the targets are stated on the strict match."""
    names = gold_names(exact)
    low = f" {_loose(text)} "
    return any(f" {_loose(n)} " in low for n in names if _loose(n))
