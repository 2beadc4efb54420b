"""The claim checker: does a passage support, contradict, or not decide a claim (a MiniLM cross-encoder).

Why a model of its own beside the evidence reader: the reader scores whether a passage *answers* a
question, and a passage saying "warfarin reduced stroke far more than aspirin in atrial fibrillation"
answers "is aspirin alone adequate?" whichever way it goes — a reply check needs the direction. This model
reads ``[CLS] claim-as-question [SEP] passage [SEP]`` and gives three classes (not enough, supported,
contradicted). It is all-MiniLM-L6-v2 fine-tuned here on BioASQ yes/no and PubMedQA decisions disjoint from
every evaluation set (``evals/claim_data.py``, ``evals/train_reader.py --num-labels 3``,
``data/claims/CARD.md``), exported to int8 ONNX and run with onnxruntime; the weights ship in
``data/claims/`` with their sha256, and ``claims.json`` holds the thresholds calibrated for precision.

The runner is the evidence reader's (tokenizer, question clipping, batching, the sha256 check), so a missing
or damaged file is the same :class:`ReaderUnavailable`, naming the file and ``git checkout -- data/claims``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graphs.vectors.reader import EvidenceReader

SHIPPED_CLAIMS_DIR = Path(__file__).resolve().parents[2] / "data" / "claims"
"""Where the project ships the claim checker (``data/claims/``: weights, claims.json, CARD.md)."""
NOT_ENOUGH, SUPPORTED, CONTRADICTED = 0, 1, 2


@dataclass(frozen=True)
class ClaimThresholds:
    """The lowest aggregated probabilities at which a claim is called supported or contradicted, chosen on
    the calibration claims for held-out precision (``evals/claim_calibration.py``)."""

    supported: float = 1.01
    contradicted: float = 1.01
    """Above any probability by default: an uncalibrated model calls nothing."""


class ClaimChecker(EvidenceReader):
    """Three-class scores for (claim question, passage) pairs."""

    NAME = "claim checker"
    MANIFEST = "claims.json"

    @property
    def thresholds(self) -> ClaimThresholds:
        raw = (self.spec.raw or {}).get("thresholds", {})
        return ClaimThresholds(
            supported=float(raw.get("supported", 1.01)), contradicted=float(raw.get("contradicted", 1.01))
        )

    def class_probabilities(self, question: str, passages: Sequence[str]) -> np.ndarray:
        """Rows of (not enough, supported, contradicted) probabilities, one per passage."""
        logits = self.logit_rows(question, passages)
        if logits.shape[0] == 0:
            return np.zeros((0, 3), dtype=np.float32)
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        return (shifted / shifted.sum(axis=1, keepdims=True)).astype(np.float32)


_CHECKERS: dict[Path, ClaimChecker] = {}
_LOCK = threading.Lock()


def get_claim_checker(claims_dir: Path = SHIPPED_CLAIMS_DIR) -> ClaimChecker:
    """One checker per weights directory per process (the session is thread-safe)."""
    key = claims_dir.resolve()
    with _LOCK:
        if key not in _CHECKERS:
            _CHECKERS[key] = ClaimChecker(key)
        return _CHECKERS[key]
