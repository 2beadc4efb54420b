"""Sentence-level reader pairs: factoid answers (stage 2 of the shipped reader) and beyond (stage 3).

Why: the reader's job at run time is sentence-level — which sentences to show, whether the best one answers
(agent/nodes/reading.py) — but its sentence training was factoid/list BioASQ questions only (a sentence
naming an exact answer). Yes/no and summary questions, and consumer questions answered by a MedQuAD page,
had no sentence-level label: "A defect in the CFTR gene causes cystic fibrosis (CF)." read at logit 1.36
for "Which disease is caused by mutations in the CFTR gene?", below the calibrated "answered" bar. Two more
labelled sources, both from ``../shared/data`` and under the same exclusions as every other pair
(evals/reader_data.py ``Exclusions``):

* ``bioasq-ideal``: BioASQ yes/no and summary questions (training questions only). A gold-snippet sentence
  most of whose word bigrams the question's ideal answer repeats (≥ ``IDEAL_SHARE``) answers it — BioASQ's
  ideal answers are largely built from those sentences; a gold-snippet sentence the ideal answer hardly
  uses (≤ ``IDEAL_UNUSED``) is a same-topic negative; sentences of BM25 snippets of other documents are
  negatives.
* ``medquad-sentence``: a MedQuAD question (foci of evaluation sets excluded whole) with the first
  sentences of its own answer (the page states its answer first) as positives; the first sentences of
  the same focus's answers to other question types (same subject, wrong aspect) and of one BM25 answer of
  another focus as negatives. Headings, pointers ("These resources address …") and questions are never
  pairs (agent/nodes/sentence_text.py ``states_something``), as they are never shown.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from agent.nodes.sentence_text import states_something
from evals.metrics.answers import exact_hit
from evals.reader_data import (
    _BM25,
    SENTENCE_OTHER_NEGATIVES,
    SENTENCE_POSITIVES,
    SENTENCE_SAME_TOPIC_NEGATIVES,
    Exclusions,
    _cut,
    _pair,
    _sentences,
    _snippet_pool,
    _training_questions,
    medquad_training_rows,
)
from graphs.model.settings import Settings

IDEAL_SHARE = 0.6
IDEAL_UNUSED = 0.15
IDEAL_POSITIVES = 3
IDEAL_SAME_TOPIC_NEGATIVES = 3
IDEAL_OTHER_NEGATIVES = 2
MEDQUAD_SENTENCE_QUESTIONS = 1200
MEDQUAD_LEAD_SENTENCES = 2
MEDQUAD_SAME_FOCUS_NEGATIVES = 2
POINTER = re.compile(
    r"^\W*these resources\b|^\W*(?:see|visit|call|contact)\b|table below|if the information is available|"
    r"human phenotype ontology",
    re.IGNORECASE,
)
"""MedQuAD boilerplate that states nothing about the question (GARD's symptom-table lead-in, a pointer)."""


def bioasq_sentence_pairs(
    settings: Settings, excluded: Exclusions, rng: random.Random
) -> Iterator[dict[str, Any]]:
    """Sentence-level pairs that teach *naming the answer*, not *being on topic* (source ``bioasq-sentence``).

    Why: the passage-level reader scored "The PolyIran trial is a pragmatic cluster randomized trial …" above
    the sentence listing the polypill's drugs for "Which drugs are included in PolyIran?" — both are gold
    snippets, so passage labels cannot tell them apart. For factoid and list questions with an exact answer,
    a sentence of a gold snippet that names an exact-answer synonym is a positive; a gold-snippet sentence
    that does not is a hard negative (same topic, no answer); sentences of the top BM25 snippets of other
    documents that do not name it are negatives too. Sentences are split by the agent's own splitter
    (``agent.nodes.focus.sentences``), so training sees what the key-sentence picker reads. The same
    exclusions as :func:`bioasq_pairs` apply.
    """
    snippets, texts, index, row_of = _snippet_pool(settings)
    for row, gold_ids, gold_pmids in _training_questions(settings, excluded):
        if row.get("type") not in ("factoid", "list") or not row.get("exact_answer"):
            continue
        gold = sorted(gold_ids & row_of.keys())
        named: list[str] = []
        unnamed: list[str] = []
        for snippet_id in gold:
            for sentence in _sentences(texts[row_of[snippet_id]]):
                (named if exact_hit(sentence, row["exact_answer"]) else unnamed).append(sentence)
        named, unnamed = sorted(set(named)), sorted(set(unnamed) - set(named))
        if not named:
            continue
        exact = row["exact_answer"]
        others = SnippetPool(snippets, texts, index).other_document_sentences(
            row,
            gold_ids | excluded.snippet_ids,
            gold_pmids,
            20,
            lambda s, exact=exact: not exact_hit(s, exact),
        )
        limits = (SENTENCE_POSITIVES, SENTENCE_SAME_TOPIC_NEGATIVES, SENTENCE_OTHER_NEGATIVES)
        yield from sentence_pairs("bioasq-sentence", row, (named, unnamed, others), limits, rng)


@dataclass
class SnippetPool:
    """The BioASQ snippets with their BM25 index (sentence negatives come from other documents' snippets)."""

    snippets: list[dict[str, Any]]
    texts: list[str]
    index: _BM25

    def other_document_sentences(
        self, row: dict[str, Any], not_ids: set[str], not_pmids: set[str], k: int, keep: Callable[[str], bool]
    ) -> list[str]:
        """Sentences of the question's top-``k`` BM25 snippets that are neither gold nor of a gold
        document (nor excluded), and that ``keep`` accepts."""
        return [
            sentence
            for i in self.index.top(row["question"], k)
            if self.snippets[i]["id"] not in not_ids and str(self.snippets[i]["pmid"]) not in not_pmids
            for sentence in _sentences(self.texts[i])
            if keep(sentence)
        ]


def sentence_pairs(
    source: str,
    row: dict[str, Any],
    sentences: tuple[list[str], list[str], list[str]],
    limits: tuple[int, int, int],
    rng: random.Random,
) -> Iterator[dict[str, Any]]:
    """(positives, same-topic negatives, other negatives) as pairs, the first two shuffled, each cut to its
    limit: one recipe for every sentence-level source."""
    positives, same_topic, others = sentences
    rng.shuffle(positives)
    rng.shuffle(same_topic)
    labelled = [(s, 1) for s in positives[: limits[0]]] + [(s, 0) for s in same_topic[: limits[1]]]
    for sentence, label in labelled + [(s, 0) for s in others[: limits[2]]]:
        yield _pair(source, row["id"], row["question"], sentence, label)


def _bigrams(text: str) -> set[tuple[str, str]]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return set(itertools.pairwise(words))


def ideal_share(sentence: str, ideal: str) -> float:
    """Share of the sentence's word bigrams that the ideal answer repeats (0 for a one-word sentence)."""
    own = _bigrams(sentence)
    return len(own & _bigrams(ideal)) / len(own) if own else 0.0


def _ideal_text(row: dict[str, Any]) -> str:
    ideal = row.get("ideal_answer") or ""
    return " ".join(ideal) if isinstance(ideal, list) else str(ideal)


def _shown(sentence: str) -> bool:
    return states_something(sentence) and not POINTER.search(sentence)


def bioasq_ideal_pairs(
    settings: Settings, excluded: Exclusions, rng: random.Random
) -> Iterator[dict[str, Any]]:
    """Yes/no and summary questions: ideal-answer sentences of the gold snippets answer (module docstring)."""
    snippets, texts, index, row_of = _snippet_pool(settings)
    for row, gold_ids, gold_pmids in _training_questions(settings, excluded):
        ideal = _ideal_text(row)
        if row.get("type") not in ("yesno", "summary") or not ideal.strip():
            continue
        sentences = sorted(
            {
                s
                for sid in sorted(gold_ids & row_of.keys())
                for s in _sentences(texts[row_of[sid]])
                if _shown(s)
            }
        )
        shares = {s: ideal_share(s, ideal) for s in sentences}
        positives = [s for s in sentences if shares[s] >= IDEAL_SHARE]
        unused = [s for s in sentences if shares[s] <= IDEAL_UNUSED]
        if not positives:
            continue
        others = SnippetPool(snippets, texts, index).other_document_sentences(
            row,
            gold_ids | excluded.snippet_ids,
            gold_pmids,
            10,
            lambda s, ideal=ideal: _shown(s) and ideal_share(s, ideal) <= IDEAL_UNUSED,
        )
        limits = (IDEAL_POSITIVES, IDEAL_SAME_TOPIC_NEGATIVES, IDEAL_OTHER_NEGATIVES)
        yield from sentence_pairs("bioasq-ideal", row, (positives, unused, others), limits, rng)


def _leads(answer: str, n: int) -> list[str]:
    return [s for s in _sentences(_cut(answer, 200)) if _shown(s)][:n]


def medquad_sentence_pairs(
    settings: Settings, excluded: Exclusions, rng: random.Random
) -> Iterator[dict[str, Any]]:
    """A page's first sentences answer its question; the same focus's other pages do not (module doc)."""
    rows, by_focus, index = medquad_training_rows(settings, excluded)
    for i in rng.sample(range(len(rows)), min(MEDQUAD_SENTENCE_QUESTIONS, len(rows))):
        row = rows[i]
        own = _leads(row["answer"], MEDQUAD_LEAD_SENTENCES)
        if not own:
            continue
        question = row["question"].replace(" ?", "?")
        for sentence in own:
            yield _pair("medquad-sentence", row["id"], question, sentence, 1)
        same_focus = [
            j
            for j in by_focus[row["focus"].lower()]
            if rows[j]["qtype"] != row["qtype"] and rows[j]["answer"] != row["answer"]
        ]
        rng.shuffle(same_focus)
        negatives = [
            s for j in same_focus[:MEDQUAD_SAME_FOCUS_NEGATIVES] for s in _leads(rows[j]["answer"], 1)
        ]
        other = next(
            (j for j in index.top(question, 10) if rows[j]["focus"].lower() != row["focus"].lower()), None
        )
        if other is not None:
            negatives += _leads(rows[other]["answer"], 1)
        for sentence in negatives:
            if sentence not in own:
                yield _pair("medquad-sentence", row["id"], question, sentence, 0)
