"""The offline MCQ gate's arithmetic: pick, coverage/accuracy with a Wilson interval, and calibration.

Kept apart from :mod:`evals.mcq_offline` (which scores items and writes the report) so that the rule that
decides what a clinician is told can be read, and tested, on its own.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from scipy.stats import binomtest

from agent.nodes import mcq

REQUIRED_LIFT = 0.05
"""The calibration gate must show accuracy ≥ chance + 5 points at the 95 % Wilson lower bound."""
MIN_ANSWERED = 20
WEIGHT_GRID: list[dict[str, float]] = [
    {"kg": kg, "ir": ir, "dense": dense}
    for kg in (0.0, 1.0)
    for ir in (0.0, 10.0)
    for dense in (0.0, 10.0)
    if kg or ir or dense
]


@dataclass
class Row:
    """One item's cached signals: what the judge computed for each option, and the gold."""

    set: str
    id: str
    gold: str
    options: list[dict[str, Any]]
    negated: bool
    parsed: bool
    product_choice: str | None
    seconds: float


def pick(row: Row, weights: dict[str, float]) -> tuple[str | None, float, float]:
    """The top option under ``weights``, its lead over the runner-up (the product's own arithmetic), and the
    un-gated credit: 1/t when the gold is among t options tied at the top (a tie broken by option order
    would score the sets' gold-letter imbalance, not the evidence)."""
    if not row.options:
        return None, 0.0, 0.0
    scores = [mcq.OptionScore(o["letter"], "", kg=o["kg"], ir=o["ir"], dense=o["dense"]) for o in row.options]
    mcq.combine(scores, weights)
    ranked = sorted(scores, key=lambda s: -s.score)
    tied = [s.letter for s in ranked if s.score == ranked[0].score]
    credit = (row.gold in tied) / len(tied)
    return ranked[0].letter, ranked[0].score - ranked[1].score, credit


def wilson(k: int, n: int) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    ci = binomtest(k, n).proportion_ci(0.95, method="wilson")
    return float(ci.low), float(ci.high)


def gate_stats(rows: list[Row], weights: dict[str, float], margin: float) -> dict[str, Any]:
    """Coverage, accuracy among answered (Wilson 95 %), chance and the un-gated accuracy of ``rows``."""
    answered = correct = 0
    ungated = 0.0
    for row in rows:
        letter, lead, credit = pick(row, weights)
        ungated += credit
        if letter is not None and not row.negated and lead > 0 and lead >= margin:
            answered += 1
            correct += letter == row.gold
    n = len(rows)
    low, high = wilson(correct, answered)
    return {
        "n": n,
        "answered": answered,
        "coverage": answered / n if n else 0.0,
        "accuracy": correct / answered if answered else None,
        "ci": (low, high),
        "chance": sum(1.0 / max(len(r.options), 1) for r in rows) / n if n else 0.0,
        "ungated": ungated / n if n else 0.0,
        "ungated_ci": wilson(round(ungated), n),
        "majority_letter": max(Counter(r.gold for r in rows).values()) / n if n else 0.0,
        "negated": sum(r.negated for r in rows),
        "parse_failures": sum(not r.parsed for r in rows),
    }


def calibrate(rows: list[Row]) -> tuple[dict[str, float], float] | None:
    """The qualifying gate with the highest coverage (ties: the larger margin), or None (abstain always).

    Every distinct lead is tried as a threshold, so the calibration bound is optimistic (many looks at the
    same items): the held-out split is the honest check, and the report gives both."""
    best: tuple[float, float, dict[str, float]] | None = None
    chance = sum(1.0 / max(len(r.options), 1) for r in rows) / len(rows) if rows else 0.0
    for weights in WEIGHT_GRID:
        picks = [pick(r, weights) for r in rows if not r.negated]
        scored = sorted(
            (
                (lead, letter == r.gold)
                for r, (letter, lead, _) in zip([r for r in rows if not r.negated], picks, strict=True)
                if lead > 0
            ),
            reverse=True,
        )
        answered = correct = 0
        for i, (lead, hit) in enumerate(scored):
            answered += 1
            correct += hit
            if i + 1 < len(scored) and scored[i + 1][0] == lead:
                continue  # a threshold admits every item with the same lead
            if answered >= MIN_ANSWERED and wilson(correct, answered)[0] >= chance + REQUIRED_LIFT:
                key = (answered / len(rows), lead)
                if best is None or key > best[:2]:
                    best = (key[0], lead, weights)
    return None if best is None else (best[2], best[1])


def closest_gate(rows: list[Row]) -> tuple[dict[str, float], float, dict[str, Any]] | None:
    """The gate with the highest Wilson lower bound on calibration (≥ MIN_ANSWERED answered), qualifying or
    not: shows how near the rule came, and whether that near-miss holds up on held-out items."""
    best: tuple[float, dict[str, float], float] | None = None
    for weights in WEIGHT_GRID:
        kept = [r for r in rows if not r.negated]
        scored = sorted(
            ((lead, letter == r.gold) for r in kept for letter, lead, _ in [pick(r, weights)] if lead > 0),
            reverse=True,
        )
        correct = 0
        for i, (lead, hit) in enumerate(scored):
            correct += hit
            if (i + 1 < len(scored) and scored[i + 1][0] == lead) or i + 1 < MIN_ANSWERED:
                continue
            low = wilson(correct, i + 1)[0]
            if best is None or low > best[0]:
                best = (low, weights, lead)
    if best is None:
        return None
    return best[1], best[2], gate_stats(rows, best[1], best[2])
