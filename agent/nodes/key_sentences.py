"""Key sentences: the few sentences of the retrieved evidence that best answer the question, LLM-free.

``select_key_sentences`` works from the question, its focus and the ranked evidence alone, so the offline
direct answer and a compact LLM answer prompt (issue 14) can share it. How:

1. split the top ``TOP_PASSAGES`` passages into sentences with offsets (``agent.nodes.focus.sentences``);
2. keep sentences about the focus: they name a focus entity (name or synonym), or their passage's keyword
   entity is the focus ("Its symptoms include …" in the Fabry disease passage);
3. score = cosine(sentence, question) + ``ASPECT_BONUS`` if the sentence carries a cue of the asked aspect
   + ``LABEL_BONUS`` if its passage carries the asked label (the question's wording alone under-weights
   the aspect: "first-line medicine" is one word of ten);
4. pick by MMR (λ = ``MMR_LAMBDA``) over the sentence vectors, so five near-identical sentences from
   MedQuAD's repeated pages do not fill the block; exact repeats are dropped outright.

Vectors are computed on the fly for the candidate sentences (a few dozen per turn): measured in
evals/reports/answer_eval.md against looking them up in the shipped embedding cache, which holds passages,
not sentences — so build-time sentence vectors would double the shipped cache for a gain of tens of ms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agent.nodes.focus import Focus, sentences
from agent.state import EvidenceRec
from graphs.kb import KnowledgeBase
from graphs.labels import mentions_label

TOP_PASSAGES = 10
MAX_SENTENCES = 6
MIN_CHARS = 25
MAX_CHARS = 500
"""Longer "sentences" are flattened lists or tables: worth a passage, not a key sentence."""
ASPECT_BONUS = 0.15
LABEL_BONUS = 0.05
MMR_LAMBDA = 0.7
MIN_SCORE = 0.30
"""A sentence scoring below this (cosine + bonuses) is not shown as answering, whatever MMR says."""


@dataclass(frozen=True)
class KeySentence:
    """A sentence of a retrieved passage, cited by the passage's id and its offsets into the passage text."""

    evidence_id: str
    text: str
    start: int
    end: int
    score: float
    label: str


def candidates(focus: Focus, evidence: list[EvidenceRec]) -> list[tuple[EvidenceRec, int, int]]:
    """(passage, start, end) of every sentence of the top passages that is about the focus."""
    out: list[tuple[EvidenceRec, int, int]] = []
    seen: set[str] = set()
    for ev in evidence[:TOP_PASSAGES]:
        text = ev.get("text", "")
        keyword_is_focus = ev.get("keyword_entity", "") in focus.ids
        for s, e in sentences(text):
            sentence = text[s:e]
            key = " ".join(sentence.lower().split())
            if not MIN_CHARS <= len(sentence) <= MAX_CHARS or key in seen:
                continue
            if keyword_is_focus or focus.named_in(sentence):
                seen.add(key)
                out.append((ev, s, e))
    return out


def mmr(scores: np.ndarray, vectors: np.ndarray, k: int, lam: float) -> list[int]:
    """Maximal marginal relevance: indices picked greedily by λ·score − (1−λ)·max cosine to those picked."""
    picked: list[int] = []
    left = list(range(len(scores)))
    while left and len(picked) < k:
        redundancy = (vectors[left] @ vectors[picked].T).max(axis=1) if picked else np.zeros(len(left))
        gains = lam * scores[left] - (1 - lam) * redundancy
        best = left[int(np.argmax(gains))]
        picked.append(best)
        left.remove(best)
    return picked


def select_key_sentences(
    kb: KnowledgeBase,
    question: str,
    focus: Focus,
    evidence: list[EvidenceRec],
    max_sentences: int = MAX_SENTENCES,
) -> list[KeySentence]:
    """The 0–``max_sentences`` sentences of the top evidence that best answer ``question`` about ``focus``,
    best first (see the module doc). Empty when the question has no focus or no sentence is about it."""
    if not focus.entities:
        return []
    cands = candidates(focus, evidence)
    if not cands:
        return []
    asked = [label for label in focus.asked if label != "overview"]
    texts = [ev["text"][s:e] for ev, s, e in cands]
    vecs = kb.embed(texts)
    qvec = kb.embed([question])[0]
    scores = vecs @ qvec
    for i, (ev, _, _) in enumerate(cands):
        if any(mentions_label(texts[i], label) for label in asked):
            scores[i] += ASPECT_BONUS
        if ev.get("label") in asked:
            scores[i] += LABEL_BONUS
    order = mmr(scores, vecs, max_sentences, MMR_LAMBDA)
    return [
        KeySentence(
            evidence_id=cands[i][0]["id"],
            text=texts[i],
            start=cands[i][1],
            end=cands[i][2],
            score=round(float(scores[i]), 4),
            label=str(cands[i][0].get("label", "")),
        )
        for i in order
        if scores[i] >= MIN_SCORE
    ]
