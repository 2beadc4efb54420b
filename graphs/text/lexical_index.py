"""BM25 over the KB's evidence (title + passage) and over its documents' questions (the question index).

Why a lexical index beside the dense one: MiniLM does not know rare literal tokens — drug and gene codes
("BI 1015550", "IL-6", "TNF-α"), numbers — and BM25 wins on exactly those questions (issue 11). Why a
question index: a MedQuAD document is the answer to a question (its title), so a consumer question can be
matched to the question a passage answers (question entailment, the LiveQA-2017 line of work), which the
passage text alone often does not share words with.

Storage: ``lexical/`` in the build directory, two ``bm25s`` indexes saved with ``bm25s``'s own
``save``/``load`` (``evidence/``, ``questions/``) plus ``ids.json`` (row → evidence id; row → document id;
document → its evidence ids) and the tokenizer version. It is derived from the KB's tables alone
(:func:`build_from_db`), so a build writes it after the tables and an incremental add/remove rewrites it
from the updated tables: the index can never drift from the evidence it describes (16k units: ~2 s).

A KB built before this index existed, or with another tokenizer version, opens with a warning and the index
built in memory from the same tables (:func:`open_lexical`); `evigraph kb build` writes it for good.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import sqlite3
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import bm25s
import numpy as np

LEXICAL_DIR = "lexical"
"""The index's directory inside a build (register it with the manifest's integrity checks)."""
TOKENIZER_VERSION = 1
K1 = 1.2
B = 0.75
MAX_QUERY_TOKENS = 256
"""A 50,000-character question is cut to its first 256 content tokens: BM25 cost grows with query terms."""

GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ζ": "zeta", "η": "eta",
    "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lambda", "μ": "mu", "ν": "nu", "ξ": "xi",
    "ο": "omicron", "π": "pi", "ρ": "rho", "σ": "sigma", "ς": "sigma", "τ": "tau", "υ": "upsilon",
    "φ": "phi", "χ": "chi", "ψ": "psi", "ω": "omega",
}  # fmt: skip
"""Greek letters spelled out, so "TNF-α" in a question matches "TNF-alpha" in a passage and vice versa."""
_GREEK_RE = re.compile("|".join(GREEK))
_TOKEN = re.compile(r"[^\W_]+(?:[-/.'][^\W_]+)*", re.UNICODE)
_PART = re.compile(r"[^\W_]+", re.UNICODE)
_STOP_TEXT = """
    a about after all also am an and any are as at be been being both but by can could did do does doing
    during each for from had has have having he her his how i if in into is it its itself may me might
    more most must my no nor not of off on once only or other our out over own same she should so some
    such than that the their them then there these they this those through to too under until up very
    was we were what when where which while who whom why will with would you your
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
"""English function words (the BM25 reference list plus pronouns); negation is dropped too: BM25 cannot
use it, and the linking tool keeps negation as a flag."""


def _fold_plural(word: str) -> str:
    """A minimal plural fold (symptoms → symptom, therapies → therapy) so lay and clinical wording meet.

    Why not a stemmer: PyStemmer is not installed, and Porter stemming merges biomedical terms that must
    stay apart (e.g. "organism"/"organ"); the plural is the variation that costs consumer questions most.
    """
    if len(word) <= 4 or not word.isalpha():
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us", "is", "sis")):
        return word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    """Biomedical BM25 tokens: NFKC, Greek spelled out, lower case, compounds kept whole *and* split.

    "IL-6" gives ``il-6``, ``il6``, ``il``, ``6``; "BI 1015550" gives ``bi``, ``1015550``; "TNF-α" gives
    ``tnf-alpha``, ``tnfalpha``, ``tnf``, ``alpha``. The whole form rewards the exact code, the parts match
    a passage that writes it another way. Non-ASCII scripts tokenise by Unicode word characters.
    """
    text = _GREEK_RE.sub(lambda m: GREEK[m.group(0)], unicodedata.normalize("NFKC", text)).lower()
    out: list[str] = []
    for token in _TOKEN.findall(text):
        parts = _PART.findall(token)
        if len(parts) > 1:
            out.append(token)
            out.append("".join(parts))
            out.extend(_fold_plural(p) for p in parts if p not in STOP_WORDS)
        elif token not in STOP_WORDS:
            out.append(_fold_plural(token))
    return out


def query_tokens(text: str) -> list[str]:
    """Distinct query tokens, in order, at most :data:`MAX_QUERY_TOKENS`."""
    return list(dict.fromkeys(tokenize(text)))[:MAX_QUERY_TOKENS]


@dataclass
class _Field:
    """One bm25s index and the token → document-frequency table used for query features."""

    model: bm25s.BM25
    size: int

    @classmethod
    def build(cls, corpus: Sequence[list[str]]) -> _Field:
        model = bm25s.BM25(k1=K1, b=B)
        model.index([tokens or [""] for tokens in corpus] or [[""]], show_progress=False)
        return cls(model, len(corpus))

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        known = [t for t in tokens if t in self.model.vocab_dict]
        if not known or not self.size:
            return np.zeros(self.size, dtype=np.float64)
        return np.asarray(self.model.get_scores(known), dtype=np.float64)[: self.size]

    def idf(self, token: str) -> float:
        """BM25 (Lucene) IDF of ``token``; an unseen token gets the IDF of a single occurrence."""
        column = self.model.vocab_dict.get(token)
        indptr = self.model.scores["indptr"]
        known = column is not None and column + 1 < len(indptr)  # bm25s appends "" after the matrix
        df = int(indptr[column + 1] - indptr[column]) if known else 1
        return math.log(1.0 + (self.size - df + 0.5) / (df + 0.5))


@dataclass
class LexicalIndex:
    """BM25 over evidence (title + text) and over document titles (the questions documents answer)."""

    evidence_ids: list[str]
    document_ids: list[str]
    evidence_of_document: dict[str, list[str]]
    evidence: _Field
    questions: _Field
    warnings: list[str] = field(default_factory=list)

    def search(self, text: str, k: int) -> list[tuple[str, float]]:
        """Evidence ids by BM25 over title + passage, best first, positive scores only."""
        return _top(self.evidence_ids, self.evidence.scores(query_tokens(text)), k)

    def scores_for(self, text: str, ids: Sequence[str]) -> np.ndarray:
        """BM25 of ``text`` against the given evidence ids (0 for an id the index does not hold)."""
        scores = self.evidence.scores(query_tokens(text))
        row = self._row
        return np.array([scores[row[i]] if i in row else 0.0 for i in ids], dtype=np.float64)

    def question_search(self, text: str, k: int) -> list[tuple[str, float]]:
        """Documents whose question (title) matches ``text``: (document id, BM25), best first."""
        return _top(self.document_ids, self.questions.scores(query_tokens(text)), k)

    def question_scores_for(self, text: str, document_ids: Sequence[str]) -> np.ndarray:
        """BM25 of ``text`` against the question (title) of each given document (0 when unknown)."""
        scores = self.questions.scores(query_tokens(text))
        row = self._document_row
        return np.array([scores[row[d]] if d in row else 0.0 for d in document_ids], dtype=np.float64)

    def rarity(self, text: str) -> float:
        """Highest IDF among the query's tokens over the largest possible IDF: 1.0 = a token seen once.

        A query feature for fusion: a rare literal token (a code, a gene name) is what BM25 finds and the
        encoder does not know; a lay question made of common words has a low value.
        """
        tokens = [t for t in query_tokens(text) if t in self.evidence.model.vocab_dict]
        if not tokens or self.evidence.size < 2:
            return 0.0
        top = math.log(1.0 + (self.evidence.size - 0.5) / 1.5)
        return min(1.0, max(self.evidence.idf(t) for t in tokens) / top)

    @property
    def _row(self) -> dict[str, int]:
        cached = getattr(self, "_row_cache", None)
        if cached is None:
            cached = {evidence_id: n for n, evidence_id in enumerate(self.evidence_ids)}
            self._row_cache = cached
        return cached

    @property
    def _document_row(self) -> dict[str, int]:
        cached = getattr(self, "_document_row_cache", None)
        if cached is None:
            cached = {document_id: n for n, document_id in enumerate(self.document_ids)}
            self._document_row_cache = cached
        return cached

    def save(self, build_dir: Path) -> Path:
        """Write ``build_dir/lexical`` (replacing an older one)."""
        target = build_dir / LEXICAL_DIR
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        self.evidence.model.save(str(target / "evidence"))
        self.questions.model.save(str(target / "questions"))
        meta = {
            "tokenizer_version": TOKENIZER_VERSION,
            "evidence_ids": self.evidence_ids,
            "document_ids": self.document_ids,
            "evidence_of_document": self.evidence_of_document,
        }
        (target / "ids.json").write_text(json.dumps(meta), encoding="utf-8")
        return target


def _top(ids: Sequence[str], scores: np.ndarray, k: int) -> list[tuple[str, float]]:
    if k <= 0 or not len(ids):
        return []
    positive = np.flatnonzero(scores > 0)
    if positive.size > k:
        positive = positive[np.argpartition(-scores[positive], k - 1)[:k]]
    order = sorted(positive.tolist(), key=lambda i: (-scores[i], ids[i]))
    return [(ids[i], float(scores[i])) for i in order]


def build(evidence: Iterable[tuple[str, str, str]], titles: dict[str, str]) -> LexicalIndex:
    """Index ``(evidence id, document id, text)`` rows; ``titles`` maps document id → title (question)."""
    evidence_ids: list[str] = []
    corpus: list[list[str]] = []
    by_document: dict[str, list[str]] = {}
    for evidence_id, document_id, text in evidence:
        evidence_ids.append(evidence_id)
        corpus.append(tokenize(f"{titles.get(document_id, '')}\n{text}"))
        by_document.setdefault(document_id, []).append(evidence_id)
    document_ids = sorted(by_document)
    questions = [tokenize(titles.get(d, "")) for d in document_ids]
    return LexicalIndex(
        evidence_ids, document_ids, by_document, _Field.build(corpus), _Field.build(questions)
    )


def build_from_db(conn: sqlite3.Connection) -> LexicalIndex:
    """The index of everything in a KB's tables (evidence joined to its document's title)."""
    titles = dict(conn.execute("SELECT id, title FROM documents"))
    rows = conn.execute("SELECT id, document_id, text FROM evidence ORDER BY id")
    return build(((str(i), str(d), str(t)) for i, d, t in rows), {str(k): str(v) for k, v in titles.items()})


def load(build_dir: Path) -> LexicalIndex:
    """Load ``build_dir/lexical``; raises ``FileNotFoundError`` or ``ValueError`` when absent or stale."""
    source = build_dir / LEXICAL_DIR
    meta = json.loads((source / "ids.json").read_text(encoding="utf-8"))
    if meta.get("tokenizer_version") != TOKENIZER_VERSION:
        raise ValueError(
            f"lexical index tokenizer version {meta.get('tokenizer_version')} != {TOKENIZER_VERSION}"
        )
    evidence = bm25s.BM25.load(str(source / "evidence"))
    questions = bm25s.BM25.load(str(source / "questions"))
    return LexicalIndex(
        list(meta["evidence_ids"]),
        list(meta["document_ids"]),
        {str(k): list(v) for k, v in meta["evidence_of_document"].items()},
        _Field(evidence, len(meta["evidence_ids"])),
        _Field(questions, len(meta["document_ids"])),
    )


def open_lexical(build_dir: Path, db_file: Path) -> LexicalIndex:
    """The build's lexical index; for a KB built before it existed, built in memory with a warning."""
    try:
        return load(build_dir)
    except (OSError, ValueError, KeyError) as exc:
        reason = (
            "has no lexical index"
            if isinstance(exc, FileNotFoundError)
            else f"lexical index unusable ({exc})"
        )
        conn = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, check_same_thread=False)
        try:
            index = build_from_db(conn)
        finally:
            conn.close()
        index.warnings.append(
            f"This KB {reason}: BM25 was built in memory for this session. Run `evigraph kb build` to "
            "store it with the KB."
        )
        return index
