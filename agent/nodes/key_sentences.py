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

Vectors are computed on the fly for at most ``MAX_CANDIDATES`` sentences per turn; a sentence that is its
whole passage (BioASQ snippets often are) reuses the stored passage vector. The on-the-fly cost is measured
in evals/reports/answer_eval.md; build-time sentence vectors (shipped in the embedding cache) are the next
step if it dominates a turn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from agent.nodes.focus import Focus, sentences
from agent.state import EvidenceRec
from graphs.kb import KnowledgeBase
from graphs.model.labels import mentions_label

TOP_PASSAGES = 10
MAX_CANDIDATES = 40
"""Sentences embedded per turn at most (in passage rank order): bounds the on-the-fly embedding cost."""
MAX_SENTENCES = 6
MIN_CHARS = 25
MAX_CHARS = 500
"""Longer "sentences" are flattened lists or tables: worth a passage, not a key sentence."""
ASPECT_BONUS = 0.15
LABEL_BONUS = 0.05
MMR_LAMBDA = 0.7
UNLESS_ASKED = frozenset({"research"})
"""Passage labels whose sentences are key sentences only when the question asks for that label."""
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


def with_lists(text: str) -> list[tuple[int, int]]:
    """The sentences of ``text``, a list's lead-in joined with the list items after it.

    Why: MedQuAD writes "Some common symptoms of hypothyroidism are" and then the symptoms as "- fatigue
    - weight gain …"; split apart, the key sentence shown was the bare lead-in and the items (too short,
    not naming the focus) were never candidates. A lead-in ending in ":" with no items after it (the list
    fell into the next passage) says nothing and is dropped.
    """
    spans = sentences(text)
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(spans):
        s, e = spans[i]
        lead = text[s:e].rstrip()
        j = i + 1
        if not lead.endswith((".", "!", "?", ")", '"', "'")):
            while j < len(spans) and text[spans[j][0]] in "-•*" and spans[j][1] - s <= MAX_CHARS:
                e = spans[j][1]
                j += 1
            if j == i + 1 and lead.endswith(":"):
                i = j
                continue
        out.append((s, e))
        i = j
    return out


LIST_ITEM = re.compile(r"\s*\n+\s*[-•*]\s+|\s{2,}[-•*]\s+")


def readable(sentence: str) -> str:
    """A key sentence on one line; a lead-in with list items reads "… are fatigue, weight gain, …"."""
    parts = [p.strip() for p in LIST_ITEM.split(sentence) if p.strip()]
    if len(parts) > 1:
        joint = ": " if parts[0].endswith(":") else " "
        return parts[0].rstrip(":") + joint + ", ".join(p.lstrip("-•* ").strip() for p in parts[1:])
    return " ".join(sentence.split())


def candidates(focus: Focus, evidence: list[EvidenceRec]) -> list[tuple[EvidenceRec, int, int]]:
    """(passage, start, end) of every sentence of the top passages that is about the focus.

    A passage about research ("Researchers hope to identify biomarkers … novel therapeutics") is left out
    unless research is asked: it carries treatment words but says what is being studied, not what to do.
    """
    out: list[tuple[EvidenceRec, int, int]] = []
    seen: set[str] = set()
    for ev in evidence[:TOP_PASSAGES]:
        if ev.get("label") in UNLESS_ASKED and ev.get("label") not in focus.asked:
            continue
        text = ev.get("text", "")
        keyword_is_focus = ev.get("keyword_entity", "") in focus.ids
        for s, e in with_lists(text):
            sentence = text[s:e]
            key = " ".join(re.findall(r"[a-z0-9]+", sentence.lower()))  # "- X." repeats "X"
            if not MIN_CHARS <= len(sentence) <= MAX_CHARS or key in seen:
                continue
            if keyword_is_focus or focus.named_in(sentence):
                seen.add(key)
                out.append((ev, s, e))
                if len(out) >= MAX_CANDIDATES:
                    return out
    return out


def sentence_vectors(kb: KnowledgeBase, cands: list[tuple[EvidenceRec, int, int]]) -> np.ndarray:
    """Vectors of the candidate sentences: a sentence that is its whole passage reuses the passage's stored
    vector (same model; the builder embedded it under its document title); the others are embedded now."""
    whole = [ev["id"] for ev, s, e in cands if ev["text"][s:e] == ev["text"].strip()]
    stored = kb.vectors.get_vectors("evidence", whole) if whole else {}
    fresh = [
        i
        for i, (ev, s, e) in enumerate(cands)
        if not (ev["text"][s:e] == ev["text"].strip() and ev["id"] in stored)
    ]
    embedded = (
        dict(
            zip(fresh, kb.embed([cands[i][0]["text"][cands[i][1] : cands[i][2]] for i in fresh]), strict=True)
        )
        if fresh
        else {}
    )
    return np.stack(
        [embedded[i] if i in embedded else stored[ev["id"]] for i, (ev, _, _) in enumerate(cands)]
    )


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
    if asked:
        # A question that asks one aspect gets sentences of that aspect when there are any: "how is Fabry
        # disease treated?" listed its cause and its signs after the treatment sentences.
        carrying = [
            i
            for i, (ev, _, _) in enumerate(cands)
            if ev.get("label") in asked or any(mentions_label(texts[i], label) for label in asked)
        ]
        if carrying:
            cands = [cands[i] for i in carrying]
            texts = [texts[i] for i in carrying]
    vecs = sentence_vectors(kb, cands)
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
