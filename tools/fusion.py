"""Query-dependent fusion weights for evidence_rank: how much BM25 and the question index count.

Why not one global weight: BM25 wins on questions with rare literal tokens (drug and gene codes the encoder
does not know) and loses on lay questions whose words rarely occur in the passages (issue 11: a global RRF
with BM25 raised BioASQ recall@10 by 0.04 and cost MedQuAD consumer questions 0.05–0.09). So the lexical
weight grows with a measurable query feature — the rarity of the query's rarest token in the KB (its BM25
IDF over the largest possible one, graphs/text/lexical_index.py ``rarity``) — and the question index counts
when the KB's documents carry questions that share words with the query.

The constants were chosen on the dev sets only with ``python -m evals.tune_fusion`` (every grid point's
scores: evals/reports/fusion_dev_bioasq-dev.md, fusion_dev_medquad-consumer.md; pubmedqa checked in its
retrieval report); bioasq-test and the full pool were scored once, after the choice. What the dev sets said
(recall@10 / success@1, twins as one slot):

* bioasq-dev: no BM25 0.829 / 0.920 → BM25 0.3 0.860 / 0.960 → + rarity slope 0.15 0.851 / 0.970 (chosen
  for success@1); fragments always 0.829 / 0.920 vs never 0.802 / 0.910 (BioASQ questions are one fragment:
  the stop-word-free question embeds better than the raw one).
* medquad-consumer: no BM25 0.701 / 0.556; BM25 0.3 0.665 / 0.542; question index 0.2 0.676 / 0.458,
  0.35 0.601 / 0.375. Lay questions share few words with the passages, and MedQuAD's question titles
  share template words ("What are the treatments for …") with every question: so BM25 is off when the
  query matches some KB question (LEXICAL_WHEN_QUESTIONS was 0; 0.5 with the dense question index, below)
  and the BM25 question index brings candidates but no score (QUESTION_WEIGHT = 0).

The second pass of issue 11 added the dense question index (graphs/vectors/question_index.py: the encoder's
vector of each document's question) and re-chose the last two constants on the same dev sets (every point:
evals/reports/fusion_dev_bioasq-dev_medquad-consumer_pubmedqa.md). medquad-consumer recall@10 / success@1
with BM25 factor 0 / 0.5 / 1 when a question matches, by dense question weight 0 → 0.3: factor 0
0.702 / 0.556 → 0.733 / 0.625; **factor 0.5: 0.727 / 0.542 → 0.737 / 0.653 (chosen)**; factor 1
0.665 / 0.542 → 0.695 / 0.542. bioasq-dev and pubmedqa do not move (their titles are not questions).
A two-fold check (weight chosen on one half of medquad-consumer, scored on the other) keeps the gain on
held-out halves: recall@10 0.735 vs 0.727, success@1 0.597 vs 0.542 without it.

Known weakness: "matches some KB question" is any shared token with any document title, so on a KB whose
titles are real article titles it will often switch BM25 off; on the evaluated KBs it is a per-KB switch
(BioASQ and PubMedQA titles are "PubMed <pmid>": never; MedQuAD: 71 of 72 questions).
"""

from __future__ import annotations

from dataclasses import dataclass

LEXICAL_BASE = 0.3
"""Lexical weight of a query whose tokens are all common (rarity 0)."""
LEXICAL_SLOPE = 0.15
"""Added per unit of rarity above :data:`RARITY_PIVOT` (a token seen once in the KB has rarity 1)."""
RARITY_PIVOT = 0.5
LEXICAL_MAX = 0.5
QUESTION_WEIGHT = 0.0
"""Weight of the question-index score (BM25 of the query against the question a document answers)."""
QUESTION_DENSE_WEIGHT = 0.3
"""Weight of the dense question score (cosine of the query to the question a document answers,
graphs/vectors/question_index.py); 0 on a KB whose documents answer no written question."""
LEXICAL_WHEN_QUESTIONS = 0.5
"""Factor on the BM25 weight when the query matches some document's question (a consumer-style KB whose
documents answer questions: the question index then carries the lexical signal, and passage BM25 on lay
wording mostly matches the wrong passages)."""
DIFFERENTIAL_QUESTION_INDEX = False
"""Whether the question index scores a differential ("What is it likely to be?", graphs/model/labels.py
``asks_for_a_differential``). It does not: a page's question names its subject ("What is (are) Croup?"),
and a differential's subject is what is unknown, so the index matched the pages of the findings it names
("What are the treatments for Cough?" 0.51 against croup's 0.14) and a child's barking cough and stridor
never reached the croup page. On the 33 MedQA-USMLE differential items whose correct diagnosis has a page in
the default KB (``python -m evals.differential_retrieval``, evals/reports/differential_retrieval.md), turning
it off for them raised success@10 from 10 to 14 (each half of the items gained: 3 → 5 of 17, 7 → 9 of 16);
success@1 went 5 → 4. Questions that are not differentials are unchanged."""
MIN_FRAGMENTS = 1
"""The fragment rerank joins the semantic score only when the query has at least this many fragments:
a one-fragment query is the whole question minus stop words, which only adds noise to its cosine."""


@dataclass(frozen=True)
class QueryFeatures:
    """What the fusion looks at: measurable without an LLM, before ranking."""

    rarity: float
    tokens: int
    entities: int
    fragments: int
    has_questions: bool
    has_question_vectors: bool = False
    differential: bool = False


@dataclass(frozen=True)
class FusionWeights:
    lexical: float
    question: float
    use_fragments: bool
    question_dense: float = 0.0


def fusion_weights(features: QueryFeatures) -> FusionWeights:
    """The weights of BM25 and the question index for one query (the rest goes to the semantic score).

    Reads the module constants at call time, so the dev-set tuner (evals/tune_fusion.py) can try others.
    """
    use_fragments = features.fragments >= MIN_FRAGMENTS
    if features.tokens == 0:
        return FusionWeights(0.0, 0.0, use_fragments)
    rise = max(0.0, features.rarity - RARITY_PIVOT) / (1.0 - RARITY_PIVOT)
    lexical = min(LEXICAL_MAX, max(0.0, LEXICAL_BASE + LEXICAL_SLOPE * rise))
    if features.has_questions:
        lexical *= LEXICAL_WHEN_QUESTIONS
    question = QUESTION_WEIGHT if features.has_questions else 0.0
    dense = QUESTION_DENSE_WEIGHT if features.has_question_vectors else 0.0
    if features.differential and not DIFFERENTIAL_QUESTION_INDEX:
        question = dense = 0.0
    return FusionWeights(lexical, question, use_fragments, dense)
