"""Is the question answered? A calibrated logistic model over the reader's reading and the rule's features.

Why a model, not the rule alone: the offline rule (agent/nodes/sufficiency_rule.py) answers only when a
question entity is linked to the KG *and* a passage about it carries the asked aspect — so a drug or target
the KG does not know ("lenacapavir", most BioASQ questions) could never be answered, even when the top
passage states the answer. The evidence reader (agent/nodes/reading.py) reads whether a sentence answers;
the rule's features say whether the passages are about the question's KG subject; how similar the best
passage is and how many of the question's own words the top passages contain say whether the KB holds the
topic at all. A logistic model weighs them, fitted on labelled questions disjoint from every evaluation set
and its threshold chosen for precision of "answered" ≥ 0.95 on the calibration half
(``python -m evals.answered_calibration``; evals/reports/answered_calibration.md has held-out precision and
recall, MedQuAD-style and BioASQ-style questions separately).

The weights ship in ``data/reader/answered.json`` (features, standardisation, weights, threshold, what it
was fitted on). A missing or unreadable file means the rule decides alone, and the answer's warnings say so.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.nodes.reading import ReadSentence
from agent.state import EvidenceRec, NamedAnswerRec
from graphs.vectors.reader import SHIPPED_READER_DIR
from tools.ranking import content_words

ANSWERED_FILE = SHIPPED_READER_DIR / "answered.json"
FEATURES = (
    "read_best",
    "read_first_passage",
    "read_answering",
    "best_cosine",
    "best_answering",
    "answering",
    "focus",
    "rule",
    "word_coverage",
    "named",
)
ANSWERING_LOGIT = 0.0
"""A sentence the reader scores above this (p > 0.5 uncalibrated) counts in ``read_answering``."""
COVERAGE_PASSAGES = 3


class AnsweredModelUnavailable(RuntimeError):
    """``answered.json`` is missing or unreadable; the message names the file and the fix."""


@dataclass(frozen=True)
class AnsweredModel:
    """Standardised logistic regression: ``p = σ(b + Σ w_i · (x_i − μ_i) / s_i)``, answered at ``p ≥ t``."""

    features: tuple[str, ...]
    means: tuple[float, ...]
    scales: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    threshold: float

    @classmethod
    def from_fields(cls, raw: dict[str, Any], threshold: float | None = None) -> AnsweredModel:
        """The model from ``answered.json``'s fields (the calibration script fits them before a threshold
        exists, and passes one)."""
        return cls(
            features=tuple(raw["features"]),
            means=tuple(float(x) for x in raw["means"]),
            scales=tuple(float(x) for x in raw["scales"]),
            weights=tuple(float(x) for x in raw["weights"]),
            bias=float(raw["bias"]),
            threshold=float(raw["threshold"]) if threshold is None else threshold,
        )

    @classmethod
    def load(cls, path: Path = ANSWERED_FILE) -> AnsweredModel:
        try:
            model = cls.from_fields(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError as error:
            raise AnsweredModelUnavailable(
                f"{path} is missing: restore it with git checkout -- data/reader"
            ) from error
        except (ValueError, KeyError, TypeError) as error:
            raise AnsweredModelUnavailable(
                f"{path} is unreadable ({error}): restore it with git checkout -- data/reader"
            ) from error
        if not len(model.features) == len(model.means) == len(model.scales) == len(model.weights):
            raise AnsweredModelUnavailable(f"{path} has mismatched feature lists: restore it")
        return model

    def probability(self, features: dict[str, float]) -> float:
        z = self.bias + sum(
            w * (float(features.get(name, 0.0)) - m) / (s or 1.0)
            for name, m, s, w in zip(self.features, self.means, self.scales, self.weights, strict=True)
        )
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


_MODEL: AnsweredModel | None = None
_ERROR: str | None = None


def answered_model() -> AnsweredModel | None:
    """The shipped model, loaded once; ``None`` (and :func:`answered_model_error` says why) when unusable."""
    global _MODEL, _ERROR
    if _MODEL is None and _ERROR is None:
        try:
            _MODEL = AnsweredModel.load()
        except AnsweredModelUnavailable as exc:
            _ERROR = f"the answered/insufficient verdict used the offline rule alone: {exc}"
    return _MODEL


def answered_model_error() -> str | None:
    return _ERROR


def use_answered_model(model: AnsweredModel | None, why: str | None = None) -> None:
    """Set the active model explicitly: ``None`` with a reason makes the rule decide alone (the calibration
    script collects its features that way, before a model exists); ``None`` without one reloads the file."""
    global _MODEL, _ERROR
    _MODEL, _ERROR = model, (why if model is None else None)


def word_coverage(question: str, evidence: list[EvidenceRec]) -> float:
    """Share of the question's content words (≥ 4 letters) that the top passages contain.

    Why: a question about something the KB lacks ("lenacapavir") still retrieves passages on its other
    words; its own rare word is missing from all of them."""
    words = {w.lower() for w in content_words(question) if len(w) >= 4}
    if not words:
        return 1.0
    text = " ".join(ev.get("text", "") for ev in evidence[:COVERAGE_PASSAGES]).lower()
    found = sum(1 for w in words if re.search(r"(?<!\w)" + re.escape(w), text))
    return found / len(words)


def answered_features(
    question: str,
    evidence: list[EvidenceRec],
    read: list[ReadSentence],
    rule: dict[str, float | int],
    rule_sufficient: bool,
    named: list[NamedAnswerRec] | None = None,
) -> dict[str, float]:
    """The model's inputs for one turn (also what the calibration script records per question).

    ``named`` is the answer's name as the evidence gives it (agent/nodes/direct_answer.name_the_answer): a
    name the reader's best sentences clearly vote for. (Whether a KG edge also joins it to the question was
    tried as a feature too: it fired on none of the 341 calibration questions, so it could not be weighed.)"""
    first = [r.logit for r in read if r.rank == 0]
    return {
        "read_best": max((r.logit for r in read), default=-10.0),
        "read_first_passage": max(first, default=-10.0),
        "read_answering": float(sum(1 for r in read if r.logit > ANSWERING_LOGIT)),
        "best_cosine": float(rule.get("best", 0.0)),
        "best_answering": float(rule.get("best_answering", 0.0)),
        "answering": float(rule.get("answering", 0)),
        "focus": float(rule.get("focus", 0)),
        "rule": float(rule_sufficient),
        "word_coverage": word_coverage(question, evidence),
        "named": float(bool(named)),
    }
