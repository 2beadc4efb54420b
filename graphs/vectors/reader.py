"""The evidence reader: how likely a passage or sentence answers a question (a MiniLM cross-encoder).

Why a cross-encoder beside the embedder: the embedder compresses question and passage into one vector
each, so "side effects of lisinopril" and a lisinopril *dosage* passage look alike; the reader reads both
together (``[CLS] question [SEP] passage [SEP]``) and scores whether the passage answers what was asked.
It is all-MiniLM-L6-v2 fine-tuned here on labelled question–passage pairs disjoint from every evaluation
set (``evals/train_reader.py``, ``data/reader/CARD.md``), exported to int8 ONNX and run with onnxruntime —
no torch, nothing downloaded: the weights ship in ``data/reader/`` with their sha256.

A missing or damaged weights file is a :class:`ReaderUnavailable` naming the file and the fix; callers
decide whether to fall back (ranking without the reader score) and say so in the answer.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from graphs.vectors.embedding import ASSETS_DIR, pad_encodings, session_options

SHIPPED_READER_DIR = Path(__file__).resolve().parents[2] / "data" / "reader"
"""Where the project ships the reader (``data/reader/``: weights, reader.json, CARD.md)."""
READER_MANIFEST = "reader.json"
"""``data/reader/reader.json``: the weights file's name, sha256, size, max length and logit calibration."""
MAX_QUESTION_TOKENS = 64
"""Word pieces of the question the reader reads at most (the rest of its 192 is the passage)."""
TAIL_TOKENS = 24
"""Of those, the question's last pieces: where a case vignette asks what it asks."""
_MAX_TOKENS_PER_RUN = 4096
"""Rows x padded width of one onnxruntime call (as the embedder: bigger calls only cost memory)."""


class ReaderUnavailable(RuntimeError):
    """The reader's weights are missing, damaged or unreadable; the message names the file and the fix."""


@dataclass(frozen=True)
class ReaderSpec:
    """What ``reader.json`` records about the shipped weights."""

    model_file: Path
    sha256: str
    max_length: int
    temperature: float = 1.0
    bias: float = 0.0
    name: str = "evidence reader"
    raw: dict[str, Any] | None = None
    """The whole manifest (a model may record more there, e.g. the claim checker's thresholds)."""

    @property
    def restore(self) -> str:
        """The command that puts the shipped files back."""
        return f"git checkout -- data/{self.model_file.parent.name}"

    @classmethod
    def read(
        cls, reader_dir: Path, name: str = "evidence reader", manifest_name: str = READER_MANIFEST
    ) -> ReaderSpec:
        manifest = reader_dir / manifest_name
        restore = f"git checkout -- data/{reader_dir.name}"
        try:
            raw: dict[str, Any] = json.loads(manifest.read_text(encoding="utf-8"))
            return cls(
                model_file=reader_dir / str(raw["model"]),
                sha256=str(raw["sha256"]),
                max_length=int(raw["max_length"]),
                temperature=float(raw.get("temperature", 1.0)),
                bias=float(raw.get("bias", 0.0)),
                name=name,
                raw=raw,
            )
        except FileNotFoundError as error:
            raise ReaderUnavailable(
                f"the {name}'s manifest {manifest} is missing: restore data/{reader_dir.name}/ from the "
                f"EviGraph checkout ({restore}) or reinstall"
            ) from error
        except (ValueError, KeyError, TypeError) as error:
            raise ReaderUnavailable(
                f"the {name}'s manifest {manifest} is unreadable ({error}): restore it with {restore}"
            ) from error


class EvidenceReader:
    """Scores (question, passage) pairs; higher means the passage more likely answers the question."""

    NAME = "evidence reader"
    MANIFEST = READER_MANIFEST

    def __init__(self, reader_dir: Path, num_threads: int | None = None) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        self.spec = ReaderSpec.read(reader_dir, self.NAME, self.MANIFEST)
        verify_weights(self.spec)
        self._tokenizer = Tokenizer.from_file(str(ASSETS_DIR / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=self.spec.max_length, strategy="only_second")
        self._tokenizer.no_padding()
        self._question_tokenizer = Tokenizer.from_file(str(ASSETS_DIR / "tokenizer.json"))
        self._question_tokenizer.no_truncation()
        self._question_tokenizer.no_padding()
        self._pad_id = self._tokenizer.token_to_id("[PAD]") or 0
        options = session_options(num_threads or 2)
        try:
            self._session = onnxruntime.InferenceSession(
                str(self.spec.model_file), options, providers=["CPUExecutionProvider"]
            )
        except Exception as error:  # onnxruntime raises its own Fail/InvalidProtobuf types
            raise ReaderUnavailable(
                f"the {self.spec.name} {self.spec.model_file} cannot be loaded ({error}): restore it with "
                f"{self.spec.restore}"
            ) from error
        width = self._session.get_outputs()[0].shape[-1]
        self._outputs = int(width) if isinstance(width, int) else 1
        """How many logits the model gives per pair: 1 for the reader, one per class for a classifier."""

    def logits(self, question: str, passages: Sequence[str], *, batch_size: int = 32) -> np.ndarray:
        """Raw scores, one per passage, in the passages' order. An empty question or list gives zeros."""
        return self.logit_rows(question, passages, batch_size=batch_size)[:, 0]

    def logit_rows(self, question: str, passages: Sequence[str], *, batch_size: int = 32) -> np.ndarray:
        """Every output logit per passage (rows in the passages' order): one column for the reader, one per
        class for a classifier such as the claim checker."""
        if isinstance(passages, str):
            raise TypeError("logits() takes a sequence of passages")
        if not passages:
            return np.zeros((0, self._outputs), dtype=np.float32)
        question = self._clip_question(question or " ")
        encodings = self._tokenizer.encode_batch([(question, p or " ") for p in passages])
        lengths = np.array([len(e.ids) for e in encodings])
        order = np.argsort(-lengths, kind="stable")
        out = np.empty((len(passages), self._outputs), dtype=np.float32)
        start = 0
        while start < len(passages):
            width = int(lengths[order[start]])
            rows = max(1, min(batch_size, _MAX_TOKENS_PER_RUN // width))
            chosen = order[start : start + rows]
            out[chosen] = self._run([encodings[i] for i in chosen])
            start += rows
        return out

    def _clip_question(self, question: str) -> str:
        """The question cut to ``MAX_QUESTION_TOKENS`` word pieces: its opening and its last sentence.

        Why: the passage is truncated, never the question — so a 10,000-word pasted case left no room for
        any passage and the tokenizer raised "Sequence to truncate too short". A case vignette asks its
        question at the end ("… Which drug is first-line?"), so the last ``TAIL_TOKENS`` pieces are kept
        with the opening, joined by " … "."""
        pieces = self._question_tokenizer.encode(question, add_special_tokens=False)
        limit = min(MAX_QUESTION_TOKENS, self.spec.max_length // 2)
        if len(pieces.ids) <= limit:
            return question
        head_end = pieces.offsets[limit - TAIL_TOKENS - 1][1]
        tail_start = pieces.offsets[len(pieces.ids) - TAIL_TOKENS][0]
        return question[:head_end] + " … " + question[tail_start:]

    def probabilities(self, question: str, passages: Sequence[str]) -> np.ndarray:
        """Calibrated probability that each passage answers the question (Platt scaling from reader.json)."""
        return self.probabilities_of(self.logits(question, passages))

    def probabilities_of(self, logits: Sequence[float] | np.ndarray) -> np.ndarray:
        """The calibrated probabilities of raw ``logits`` (when a caller keeps both)."""
        scores = np.asarray(logits, dtype=np.float32) / self.spec.temperature + self.spec.bias
        return (1.0 / (1.0 + np.exp(-scores))).astype(np.float32)

    def _run(self, encodings: Sequence[Any]) -> np.ndarray:
        input_ids, attention, types = pad_encodings(encodings, self._pad_id)
        feeds = {"input_ids": input_ids, "attention_mask": attention, "token_type_ids": types}
        return np.asarray(self._session.run(["logits"], feeds)[0], dtype=np.float32)


def verify_weights(spec: ReaderSpec) -> None:
    """The weights must be the ones the manifest pins: a damaged file would quietly change what is shown."""
    if not spec.model_file.is_file():
        raise ReaderUnavailable(
            f"the {spec.name} {spec.model_file} is missing: restore it with {spec.restore}"
        )
    digest = hashlib.sha256(spec.model_file.read_bytes()).hexdigest()
    if digest != spec.sha256:
        raise ReaderUnavailable(
            f"the {spec.name} {spec.model_file} is damaged (sha256 {digest[:12]}…, expected "
            f"{spec.sha256[:12]}…): restore it with {spec.restore}"
        )


_READERS: dict[Path, EvidenceReader] = {}
_LOCK = threading.Lock()


def get_reader(reader_dir: Path) -> EvidenceReader:
    """One reader per weights directory per process (loading costs ~0.2 s; the session is thread-safe)."""
    key = reader_dir.resolve()
    with _LOCK:
        if key not in _READERS:
            _READERS[key] = EvidenceReader(key)
        return _READERS[key]
