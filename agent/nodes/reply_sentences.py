"""The sentences shown under a checked reply: what the evidence says about each claim, read claim by claim.

Why: the block under "What the evidence says about the reply's subject" was the key sentences of the whole
reply read as one question, about every entity the reply names. For "for a patient with atrial fibrillation
and CHA2DS2-VASc of 3, aspirin alone is adequate stroke prevention" it led with "Your doctor can tell you
whether taking aspirin is right for you" and "However, aspirin is not safe for everyone" — from a diabetes
prevention page — while the atrial-fibrillation pages retrieved in the same turn say that warfarin and the
newer blood thinners prevent stroke in AF (issue 22). A clinician checking a reply needs what the evidence
says about *that claim*, for *that condition*.

How: for each of the first checked claims, the sentences of the turn's passages about the condition it
names (a passage whose keyword entity is that disease or whose title names it; the passages about the most
of the claim's conditions) that name something the claim asserts besides its condition (``bears_on``) are
read by the claim checker (graphs/vectors/claim_checker.py) against the claim's question, and ordered by
its probability that the sentence decides the claim either way (1 − P(not enough)). That is what the
checker does well — one-vs-rest AUC of "not enough" 0.972 on its training dev split — while which way a
sentence decides is what it does not yet do at a verdict's precision (data/claims/CARD.md); so the
sentences are shown as evidence about the claims, never as a verdict. Each claim's best sentences are
interleaved, claim 1's best first, within ``REPLY_WORDS`` words. The evidence reader is not used here: it
was trained on questions that ask for a name, and scores every croup sentence alike (~0.77) for "Is croup
caused by bacteria?".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import zip_longest

from agent.nodes.claim_kg import link_claim
from agent.nodes.key_sentences import MIN_WORDS, KeySentence, near_repeat
from agent.nodes.reading import MAX_CHARS, MIN_CHARS, with_lists
from agent.nodes.sentence_text import states_something
from agent.state import ConsultState, EvidenceRec
from graphs.kb import KnowledgeBase
from graphs.text.word_stems import word_stems
from graphs.vectors.claim_checker import NOT_ENOUGH, ClaimChecker, get_claim_checker
from graphs.vectors.reader import ReaderUnavailable
from tools.ranking import content_words

REPLY_WORDS = 80
"""Words of evidence sentences under a checked reply at most: the verdict lines above are short, and a claim
about a choice of treatment needs the sentence on each option (aspirin for lower risk; warfarin and the
newer blood thinners for stroke prevention)."""
PER_CLAIM = 3
"""Sentences per claim at most."""
CLAIMS_READ = 3
"""Claims whose sentences are read (the first ones): the budget holds three or four sentences anyway."""
PASSAGES_READ = 3
"""Passages read per claim, and at most ``MAX_SENTENCES_READ`` of their sentences: reading costs ~3 ms a
sentence, and a five-claim reply must stay ≤ 1.5 s (issue 22). evals/bench_reply_check.py, interleaved
with the commit before this block on the same KB (load 1.2–2.0): 1.21 / 1.15 s against 0.98 / 1.07 s;
reading every sentence of six passages for every claim took 1.6 s."""
MAX_SENTENCES_READ = 16
SENTENCE_ENDS = (".", "!", ")", '"', "'", "]")
MIN_CONTENT_CHARS = 4


def condition_passages(
    kb: KnowledgeBase, question: str, evidence: list[EvidenceRec]
) -> list[EvidenceRec] | None:
    """The passages most about the diseases ``question`` names, best first (possibly none); ``None`` when
    it names no disease the linker knows.

    A passage has a disease as its subject when its keyword entity is that disease or its document title
    names it, and mentions it when its text names it; the passages with the most of the claim's diseases as
    subjects, then mentioned, are kept. Why: "aspirin alone is adequate stroke prevention in atrial
    fibrillation" names stroke too — a diabetes prevention page and a TIA page name stroke (the TIA page
    atrial fibrillation as well) in passing, while the atrial-fibrillation-and-stroke pages are about both.
    """
    diseases = [e for e in link_claim(kb, question).entities if e.type == "Disease"]
    if not diseases:
        return None
    matchers = {
        e.id: re.compile(r"\b(?:" + "|".join(re.escape(s) for s in surfaces) + r")\b", re.I)
        if (surfaces := sorted({m.surface for m in e.mentions if len(m.surface) >= MIN_CONTENT_CHARS}))
        else None
        for e in diseases
    }

    def about(ev: EvidenceRec) -> tuple[int, int]:
        subject = mentioned = 0
        for entity_id, names in matchers.items():
            named = names is not None and bool(names.search(ev.get("title", "")))
            subject += ev.get("keyword_entity", "") == entity_id or named
            mentioned += names is not None and bool(names.search(ev.get("text", "")))
        return subject, mentioned

    scores = [about(ev) for ev in evidence]
    best = max(scores, default=(0, 0))
    return [ev for ev, n in zip(evidence, scores, strict=True) if best != (0, 0) and n == best]


GENERIC_CLAIM_WORDS = frozenset(
    {"patient", "patients", "people", "person", "disease", "condition", "treatment", "doctor", "colleague"}
)


def claim_stems(claim: str, conditions: list[str]) -> set[str]:
    """What the claim asserts besides its subject: its content words' stems without the words of the
    ``conditions``' names ("aspir", "adequ", "strok", "preve" for the AF/aspirin claim)."""
    condition_words = frozenset(w.lower() for c in conditions for w in content_words(c))
    skip = condition_words | GENERIC_CLAIM_WORDS
    return {s for w in content_words(claim) if len(w) >= MIN_CONTENT_CHARS for s in word_stems(w, 1, skip)}


def bears_on(stems: set[str], sentence: str) -> bool:
    """Whether ``sentence`` names something the claim asserts (see ``claim_stems``): "Croup is more common
    in the fall and winter" names neither bacteria, antibiotics nor steroids, so it says nothing about a
    reply that croup is bacterial and needs antibiotics, not steroids."""
    return bool(stems & word_stems(sentence))


@dataclass(frozen=True)
class BearingSentence:
    """A sentence of a passage with the claim checker's probability that it decides the claim."""

    evidence_id: str
    text: str
    start: int
    end: int
    bearing: float
    label: str


def candidate_sentences(passages: list[EvidenceRec], stems: set[str]) -> list[tuple[EvidenceRec, int, int]]:
    """(passage, start, end) of the readable sentences of ``passages`` that bear on the claim's words."""
    out: list[tuple[EvidenceRec, int, int]] = []
    seen: set[str] = set()
    for ev in passages:
        text = ev.get("text", "")
        for s, e in with_lists(text):
            sentence = text[s:e]
            key = " ".join(sentence.lower().split())
            if (
                key in seen
                or not MIN_CHARS <= len(sentence) <= MAX_CHARS
                or len(sentence.split()) < MIN_WORDS
                or not states_something(sentence)
                or not bears_on(stems, sentence)
                or not (sentence.rstrip().endswith(SENTENCE_ENDS) or "\n" in sentence)
            ):  # the last test: a list's lead-in whose items fell into the next passage ("you may have")
                continue
            seen.add(key)
            out.append((ev, s, e))
    return out[:MAX_SENTENCES_READ]


def claim_sentences(
    kb: KnowledgeBase, checker: ClaimChecker, question: str, claim: str, evidence: list[EvidenceRec]
) -> list[BearingSentence]:
    """One claim's best sentences, most likely to decide it first (see the module doc)."""
    about = condition_passages(kb, question, evidence)
    passages = evidence if about is None else about
    # A claim about one condition asserts something of it: its name is not what a sentence must share. A
    # claim naming two asserts their relation ("aspirin is adequate stroke prevention in atrial
    # fibrillation": "warfarin … reduces the rate of stroke for those who have AF" bears on it).
    conditions = {
        m.surface.lower()
        for e in link_claim(kb, question).entities
        if e.type == "Disease"
        for m in e.mentions
    }
    stems = claim_stems(claim, sorted(conditions) if len(conditions) == 1 else [])
    cands = candidate_sentences(passages[:PASSAGES_READ], stems)
    if not cands:
        return []
    probs = checker.class_probabilities(question, [ev["text"][s:e] for ev, s, e in cands])
    bearing = 1.0 - probs[:, NOT_ENOUGH]
    ranked = sorted(range(len(cands)), key=lambda i: (-float(bearing[i]), i))
    out: list[BearingSentence] = []
    words = 0
    for i in ranked[:PER_CLAIM]:
        ev, s, e = cands[i]
        n = len(ev["text"][s:e].split())
        if out and words + n > REPLY_WORDS:
            continue
        out.append(
            BearingSentence(ev["id"], ev["text"][s:e], s, e, round(float(bearing[i]), 4), ev.get("label", ""))
        )
        words += n
    return out


def reply_key_sentences(kb: KnowledgeBase, state: ConsultState) -> list[KeySentence] | None:
    """The sentences to show under a checked reply, claim by claim (see the module doc); ``None`` when the
    claim checker is unavailable or the reply has no checked claim (the caller keeps the key sentences)."""
    claims = state.get("reply_check", {}).get("claims", [])
    if not claims:
        return None
    try:
        checker = get_claim_checker()
    except ReaderUnavailable:
        return None  # the reply check names the damaged checker; the key sentences stand in
    evidence = state.get("evidence", [])
    per_claim = [
        claim_sentences(kb, checker, claim.get("question", ""), claim.get("text", ""), evidence)
        for claim in claims[:CLAIMS_READ]
    ]
    out: list[KeySentence] = []
    words = 0
    for row in zip_longest(*per_claim):
        for r in row:
            if r is None or any(near_repeat(r.text, o.text) for o in out):
                continue  # twin passages (overlapping chunks) repeat a sentence; claims may share one
            n = len(r.text.split())
            if out and words + n > REPLY_WORDS:
                continue
            out.append(KeySentence(r.evidence_id, r.text, r.start, r.end, r.bearing, r.label))
            words += n
    return out
