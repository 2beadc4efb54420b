"""ROUGE-2 and ROUGE-SU4, as BioASQ phase B scores ideal answers (ROUGE-1.5.5 ``-2 4 -u``), without stemming.

Why hand-written: the maintained PyPI package (``rouge-score``) has ROUGE-1/2/L but no skip-bigram ROUGE-SU4,
and the reference implementation is a Perl script. Both are counts with clipping over lower-cased
alphanumeric tokens (``evals.metrics.answers.tokens``):

* ROUGE-2: bigrams;
* ROUGE-SU4: skip-bigrams whose words are at most 4 tokens apart (``j - i ≤ 5``) plus unigrams.

Returned as (precision, recall, F1) of the candidate against the reference.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from evals.metrics.answers import tokens

MAX_SKIP = 4


class Rouge(NamedTuple):
    precision: float
    recall: float
    f1: float


def _score(cand: Counter[tuple[str, ...]], ref: Counter[tuple[str, ...]]) -> Rouge:
    overlap = sum((cand & ref).values())
    p = overlap / sum(cand.values()) if cand else 0.0
    r = overlap / sum(ref.values()) if ref else 0.0
    return Rouge(p, r, 2 * p * r / (p + r) if p + r else 0.0)


def bigrams(toks: Sequence[str]) -> Counter[tuple[str, ...]]:
    return Counter(itertools.pairwise(toks))


def skip_bigrams_and_unigrams(toks: Sequence[str], max_skip: int = MAX_SKIP) -> Counter[tuple[str, ...]]:
    grams: Counter[tuple[str, ...]] = Counter((t,) for t in toks)
    for i, a in enumerate(toks):
        for b in toks[i + 1 : i + 2 + max_skip]:
            grams[(a, b)] += 1
    return grams


def rouge_2(candidate: str, reference: str) -> Rouge:
    return _score(bigrams(tokens(candidate)), bigrams(tokens(reference)))


def rouge_su4(candidate: str, reference: str) -> Rouge:
    return _score(skip_bigrams_and_unigrams(tokens(candidate)), skip_bigrams_and_unigrams(tokens(reference)))
