"""Scoring helpers shared by the text-side tools: fragments, eq. 9 attention, MMR, min–max, duplicates.

Pure numpy over L2-normalised vectors (so a dot product is a cosine), no knowledge-base access, so each
formula can be checked by hand in a test. Where the papers leave a choice open, the choice and its reason
are written next to the code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

FRAGMENT_WINDOW = 10
"""HyKGE §A.9 / implementation details: chunk window ``lc = 10`` words after stop-word removal."""
FRAGMENT_OVERLAP = 4
"""HyKGE: overlap ``oc = 4`` words, so consecutive fragments start 6 words apart."""
MMR_W_BASE = 0.1
"""KG-Rank §2.3: ``w = w_base + δ·n`` with ``w_base = 0.1``."""
MMR_W_STEP = 0.01
"""KG-Rank §2.3: ``δ = 0.01`` per already selected item."""


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text`` (keeps long word lists readable in the source)."""
    return frozenset(text.split())


STOP_WORDS: frozenset[str] = word_set(
    """
    a about above after again against all am an and any are aren't as at be because been before being below
    between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during
    each either else etc ever every few for from further get gets got had hadn't has hasn't have haven't
    having he he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've
    if in into is isn't it it's its itself just let's may me might more most must mustn't my myself neither
    no nor not now of off on once only or other ought our ours ourselves out over own per same shall shan't
    she she'd she'll she's should shouldn't so some such than that that's the their theirs them themselves
    then there there's these they they'd they'll they're they've this those though through thus to too under
    until up upon us very via was wasn't we we'd we'll we're we've were weren't what what's when when's
    where where's whether which while who who's whom whose why why's will with within without won't would
    wouldn't yet you you'd you'll you're you've your yours yourself yourselves also among amongst
    """
)
"""English function words removed before chunking (HyKGE removes stop words first, §4.3). Negation words
("no", "not", "without") are stop words here on purpose: fragments feed similarity, where negation is
invisible to the encoder anyway; the linking tool keeps negation as a flag on mentions instead."""

_WORD = re.compile(r"[\w][\w'’\-/.+]*[\w+]|[\w]", re.UNICODE)


def content_words(text: str, stop_words: frozenset[str] = STOP_WORDS) -> list[str]:
    """Word tokens of ``text`` without stop words (case kept: the encoder is case-insensitive anyway)."""
    return [w for w in _WORD.findall(text) if w.lower().replace("’", "'") not in stop_words]


MAX_FRAGMENTS = 24
"""Fragments embedded per call: ~140 content words of ``Q ⊕ HO``; a longer hypothesis is cut with a note."""


def fragments(
    text: str,
    window: int = FRAGMENT_WINDOW,
    overlap: int = FRAGMENT_OVERLAP,
    max_fragments: int | None = None,
) -> list[str]:
    """HyKGE eq. 3: ``Chunk(Q ⊕ HO)`` — windows of ``window`` content words, ``overlap`` words shared.

    A text shorter than one window is one fragment; the last window is aligned to the end so no tail is
    left as a sliver of one or two words. Empty text gives no fragment.
    """
    if not 0 <= overlap < window:
        raise ValueError("overlap must be >= 0 and smaller than window")
    words = content_words(text)
    if not words:
        return []
    step = window - overlap
    starts = list(range(0, max(len(words) - window, 0) + 1, step))
    if starts[-1] + window < len(words):
        starts.append(len(words) - window)
    chunks = [" ".join(words[s : s + window]) for s in starts]
    return chunks[:max_fragments] if max_fragments is not None else chunks


def minmax(values: np.ndarray) -> np.ndarray:
    """Rescale to [0, 1] (BCG hybrid ranking); a constant vector maps to zeros (it carries no order)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return values
    low, high = float(values.min()), float(values.max())
    if high - low <= 1e-12:
        return np.zeros_like(values)
    return (values - low) / (high - low)


def idep_scores(evidence: np.ndarray, features: np.ndarray, usefulness: np.ndarray) -> np.ndarray:
    """EbmKG eq. 9: ``Score(e) = Σ_i u_i · exp(cos(e, f_i)) / Σ_j exp(cos(e, f_j))``.

    ``evidence`` is (M, d), ``features`` (F, d), both L2-normalised; ``usefulness`` (F,) in [0, 10].
    Exactly the paper's softmax, no temperature: cosines lie in [-1, 1], so the attention is soft and the
    score is a usefulness-weighted average that leans towards the features an evidence unit resembles most.
    Two consequences the caller must know: equal usefulness makes every score equal (no ranking signal), and
    the score says *which* feature an evidence unit is about, not *how relevant* it is — the paper applies it
    to evidence of already located topics, so it should be combined with a relevance score.
    """
    if features.shape[0] == 0 or evidence.shape[0] == 0:
        return np.zeros(evidence.shape[0], dtype=np.float64)
    sims = np.asarray(evidence, dtype=np.float64) @ np.asarray(features, dtype=np.float64).T
    weights = np.exp(sims - sims.max(axis=1, keepdims=True))  # same softmax, numerically safe
    weights /= weights.sum(axis=1, keepdims=True)
    return np.asarray(weights @ np.asarray(usefulness, dtype=np.float64))


def fragment_matrix(evidence: np.ndarray, fragment_vectors: np.ndarray) -> np.ndarray:
    """HyKGE §A.9: the K×M similarity matrix of fragments against candidates (returned as M×K)."""
    if fragment_vectors.shape[0] == 0:
        return np.zeros((evidence.shape[0], 0), dtype=np.float64)
    return np.asarray(evidence, dtype=np.float64) @ np.asarray(fragment_vectors, dtype=np.float64).T


def fragment_scores(matrix: np.ndarray) -> np.ndarray:
    """Aggregate the M×K fragment matrix per candidate: ``1 + max_k (S[e, k] − max_e' S[e', k])``.

    A candidate scores 1.0 when it is the best match of some fragment, and less by how far it falls short of
    the best match of its closest fragment. HyKGE does not spell out the aggregation, only its purpose: use
    several chunks so no single one dominates and chains relevant to *any* part of ``Q ⊕ HO`` survive
    (§A.9). Measured on a long two-aspect question (gout history + one sentence on another disease), the
    plain max over fragments and the mean both let the aspect with more and stronger fragments win (the
    second aspect's best evidence ranked 4–28 with max, 33–58 with mean, 0–20 with whole-query cosine);
    taking each fragment relative to its own best candidate ranked it 1–7 — every aspect gets its top
    evidence near the top, which is the diversity the paper is after. Within a fragment the cosine gaps are
    kept (no rescaling), so a candidate far behind stays far behind.
    """
    if matrix.shape[1] == 0:
        return np.zeros(matrix.shape[0], dtype=np.float64)
    return np.asarray(1.0 + (matrix - matrix.max(axis=0, keepdims=True)).max(axis=1))


def mmr_order(
    relevance: np.ndarray,
    vectors: np.ndarray,
    limit: int,
    tie_keys: Sequence[str],
    w_base: float = MMR_W_BASE,
    w_step: float = MMR_W_STEP,
) -> tuple[list[int], list[float]]:
    """KG-Rank MMR: greedily pick ``argmax rel(r) − w · mean_sim(r, selected)``, ``w = w_base + w_step·n``.

    Returns the picked indices (up to ``limit``) and the penalty each had when picked. The first pick has
    no penalty. Ties break on ``tie_keys`` (ids) so the order is deterministic.
    """
    count = len(relevance)
    limit = min(limit, count)
    if limit <= 0:
        return [], []
    rel = np.asarray(relevance, dtype=np.float64)
    vecs = np.asarray(vectors, dtype=np.float64)
    sim_sum = np.zeros(count, dtype=np.float64)
    available = np.ones(count, dtype=bool)
    rank_of_key = np.argsort(np.argsort(np.array(tie_keys, dtype=object)))  # smaller id wins a tie
    picked: list[int] = []
    penalties: list[float] = []
    for n in range(limit):
        penalty = (w_base + w_step * n) * (sim_sum / n) if n else np.zeros(count)
        score = np.where(available, rel - penalty, -np.inf)
        best = float(score.max())
        tied = np.flatnonzero(np.isclose(score, best, rtol=0.0, atol=1e-12) & available)
        choice = int(tied[np.argmin(rank_of_key[tied])])
        picked.append(choice)
        penalties.append(float(penalty[choice]))
        available[choice] = False
        sim_sum += vecs @ vecs[choice]
    return picked, penalties


def spans_overlap_heavily(a: tuple[int, int], b: tuple[int, int], min_fraction: float = 0.5) -> bool:
    """True when two character spans share at least ``min_fraction`` of the shorter one.

    Why not "any overlap": the chunker repeats one sentence between neighbouring units of a document on
    purpose, and those neighbours carry different content; a unit re-emitted with shifted boundaries (an
    incremental update, a second chunking) shares most of its span and is the duplicate to drop.
    """
    shared = min(a[1], b[1]) - max(a[0], b[0])
    shorter = min(a[1] - a[0], b[1] - b[0])
    return shorter > 0 and shared >= min_fraction * shorter


def near_duplicates(
    order: Sequence[int], places: Sequence[tuple[str, int, int]], vectors: np.ndarray, max_cosine: float
) -> tuple[list[int], list[tuple[int, int, str]]]:
    """Walk ``order`` (best first) and drop an item that repeats one kept before it.

    ``places[i]`` is (document id, start, end) of item ``i``. A repeat is a heavily overlapping span of the
    same document (:func:`spans_overlap_heavily`) or a cosine above ``max_cosine``. Returns the kept
    indices in order and ``(dropped, kept twin, reason)`` triples.
    """
    similarity = np.asarray(vectors) @ np.asarray(vectors).T
    kept: list[int] = []
    kept_by_document: dict[str, list[int]] = {}
    dropped: list[tuple[int, int, str]] = []
    for i in order:
        document, start, end = places[i]
        twin = next(
            (
                j
                for j in kept_by_document.get(document, [])
                if spans_overlap_heavily((start, end), places[j][1:])
            ),
            None,
        )
        reason = "same document, overlapping span"
        if twin is None and kept:
            row = similarity[i, kept]
            best = int(row.argmax())
            if row[best] > max_cosine:
                twin, reason = kept[best], f"cosine > {max_cosine}"
        if twin is not None:
            dropped.append((i, twin, reason))
            continue
        kept.append(i)
        kept_by_document.setdefault(document, []).append(i)
    return kept, dropped
