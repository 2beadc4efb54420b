"""Key sentences: the few sentences of the retrieved evidence that best answer the question, LLM-free.

``select_key_sentences`` works from the question, its focus and the ranked evidence alone, so the offline
direct answer and a compact LLM answer prompt (issue 14) share it. With the evidence reader (the default):

1. the turn's reading (agent/nodes/reading.py): the sentences of the top passages, each scored by the
   trained reader for *naming the answer*, with a small passage-rank prior;
2. the best ones, in score order, within ``MAX_WORDS`` words (a longer one is skipped, not the rest), none
   below ``MIN_LOGIT`` or ``WITHIN_LOGITS`` under the turn's best, near-repeats once (MedQuAD repeats its
   pages' sentences).

On bioasq-test (held out) the key sentences hold a gold exact answer for 34/52 factoid/list questions at 49
words on average (the cosine selection before: 0.306 on bioasq-dev; the first 3 sentences of the top-3
dense passages 34/52 at 78 words; evals/reports/answer_eval_bioasq_test.md), and no sentence is embedded
during the turn any more (median turn 0.23 s on the pool KB, was 0.96 s).

Without the reader (weights missing or damaged; the answer's warnings say so), the cosine selection about
the focus as before: sentences naming a focus entity, scored by cosine to the question plus a bonus for the
asked aspect, picked by MMR over their vectors (``select_by_cosine``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from agent.nodes.asked_term import asked_sentences, on_asked_term
from agent.nodes.comparison import compared_subjects, covering_each_subject, with_each_subject_read
from agent.nodes.definition_lead import definition_first
from agent.nodes.focus import Focus
from agent.nodes.other_condition import about_other_condition, off_subject_pages, qualified_subject_passages
from agent.nodes.reading import (
    ANAPHOR,
    MAX_CHARS,
    MIN_CHARS,
    READ_PASSAGES,
    ReadSentence,
    read_evidence,
    refers_back,
    with_lists,
)
from agent.nodes.sentence_order import (
    asked_direction_first,
    general_first,
    on_asked_aspect,
    on_asked_direction,
)
from agent.nodes.sentence_text import states_something
from agent.state import EvidenceRec
from graphs.kb import KnowledgeBase
from graphs.model.labels import mentions_label
from graphs.text.abbreviations import asked_expansion, definitions
from graphs.text.drug_names import DRUG_TYPES
from graphs.text.medicine_classes import MEDICINE_WORD, TREATMENT_CLASS, rules_out_medicines

TOP_PASSAGES = 10
MAX_CANDIDATES = 40
"""Sentences embedded per turn at most (in passage rank order): bounds the on-the-fly embedding cost."""
MAX_SENTENCES = 6
ASPECT_BONUS = 0.15
LABEL_BONUS = 0.05
MMR_LAMBDA = 0.7
UNLESS_ASKED = frozenset({"research"})
"""Passage labels whose sentences are key sentences only when the question asks for that label."""
MAX_WORDS = 65
"""Words of key sentences at most (the first always shows): the answer must be read at a glance. Chosen on
bioasq-dev/dev-full (evals/reports/answer_eval_bioasq_dev*.md): 60 → 65 gains one exact answer on each, 70 no
more; the mean stays ≤ 60 words, issue 18's budget."""
MIN_LOGIT = -4.0
"""A sentence the reader scores below this is not shown as answering; chosen on bioasq-dev."""
WITHIN_LOGITS = 4.0
"""Nor one this far below the best of the turn."""
MIN_WORDS = 6
"""Shorter "sentences" are headings or list stubs ("Interval or intercritical gout."): never key sentences."""
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
            if not MIN_CHARS <= len(sentence) <= MAX_CHARS or key in seen or not states_something(sentence):
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
    max_words: int = MAX_WORDS,
    lead: Callable[[str], bool] | None = None,
) -> list[KeySentence]:
    """The 0–``max_sentences`` sentences of the top evidence that best answer ``question``, best first
    (``max_words`` in all: the offline block is read at a glance, an LLM prompt may take more); with
    ``lead``, the best sentence it holds true of comes first (``lead_first``).

    With the evidence reader (the default): the sentences it reads as answering (agent/nodes/reading.py),
    within ``MAX_WORDS``. Without it (weights missing or damaged; the answer's warnings say so): the cosine
    selection about the focus, as before the reader (see the module doc)."""
    subjects = [pattern for _, pattern in compared_subjects(question, focus)]
    if subjects:
        evidence = with_each_subject_read(evidence, subjects, READ_PASSAGES)
    read = read_evidence(kb, question, evidence)
    if read is not None:
        return [
            KeySentence(r.evidence_id, r.text, r.start, r.end, round(r.probability, 4), r.label)
            for r in pick_key_read(kb, read, focus, evidence, lead, max_sentences, max_words, question)
        ]
    return select_by_cosine(kb, question, focus, evidence, max_sentences)


def pick_key_read(
    kb: KnowledgeBase,
    read: list[ReadSentence],
    focus: Focus,
    evidence: list[EvidenceRec],
    lead: Callable[[str], bool] | None = None,
    max_sentences: int = MAX_SENTENCES,
    max_words: int = MAX_WORDS,
    question: str = "",
) -> list[ReadSentence]:
    """The read sentences shown as the direct answer: those that may be shown (``shown_read``) and, when
    ``question`` asks about a term the KG does not know, from passages that name it (``on_asked_term``), the
    one naming the asked detail first (``lead_first``), each that opens on a reference back with the sentence
    it refers to (``with_antecedent``), picked within the budget (``pick_read``)."""
    passages = {ev["id"]: ev.get("text", "") for ev in evidence}
    shown = on_asked_term(
        shown_read(kb, read, focus, evidence), asked_sentences(question), focus.entities, passages
    )
    if rules_out_medicines(question):
        shown = [
            r
            for r, named in zip(shown, names_medicines(kb, [r.text for r in shown]), strict=True)
            if not named
        ]
    shown = [with_antecedent(r, passages) for r in lead_first(shown, lead)]
    shown = [r for r in shown if not UNRESOLVED_PERSON.match(r.text)]
    # Too short to show (``pick_read`` skips them) before the aspect check, whose first sentence is kept
    # whatever it says: "Malaria can be prevented." took that place and was then dropped, and every sentence
    # after it lacked a prevention cue — an "answered" reply with no key sentence.
    shown = on_asked_aspect([r for r in shown if len(r.text.split()) >= MIN_WORDS], focus.asked)
    picked = pick_read(shown, max_sentences, max_words, passages)
    subjects = [pattern for _, pattern in compared_subjects(question, focus)]
    if subjects:  # "How is Crohn's disease different from ulcerative colitis?": a sentence on each
        best = max((r.score for r in shown), default=0.0)
        picked = covering_each_subject(
            picked, shown, subjects, lambda r: not below_floor(r, best) and len(r.text.split()) >= MIN_WORDS
        )
    defining = defining_sentence(read, question)
    if defining is not None:  # "Runt related factor-2 (Runx2)": the answer, however short or verbless
        return [
            defining,
            *[r for r in picked if (r.evidence_id, r.start) != (defining.evidence_id, defining.start)],
        ]
    if lead is not None and picked and lead(picked[0].text):
        return picked  # the sentence naming the asked detail leads, whatever it opens on
    ordered = general_first(asked_direction_first(picked, focus.asked, question, focus.word_pattern()))
    return definition_first(shown, ordered, question, focus.pattern, max_words, focus.asked)


def defining_sentence(read: list[ReadSentence], question: str) -> ReadSentence | None:
    """For a question asking what an abbreviation stands for, the best-scored read sentence that gives its
    long form (graphs/text/abbreviations.py), or ``None``.

    Why it bypasses the filters: "What does RUNX2 stand for?" read the snippet "Runt related factor-2
    (Runx2)" first, and it was never shown — four words without a verb look like a heading
    (``states_something``) and are under ``MIN_WORDS`` — so the answer showed sentences that use RUNX2 and
    the asked-detail check called the turn insufficient."""
    short = asked_expansion(asked_sentences(question) or question) if question else None
    if not short:
        return None
    defining = [r for r in read if definitions(short, r.text)]
    return max(defining, key=lambda r: r.score) if defining else None


ONGOING_RESEARCH = re.compile(
    r"^(?:[\w,'-]+\s+){0,6}?(?:researchers|scientists|investigators)\b[^.;]{0,60}?\b(?:continue to|hope to|"
    r"plan to|are (?:now |currently |also |still )?"
    r"(?:studying|evaluating|investigating|testing|exploring|looking|working|trying|developing))\b"
    r"|^clinical trials (?:are|is) (?:underway|ongoing|under way)\b"
    r"|\b(?:is|are) (?:seeking|searching for|looking for) (?:better|new) ways\b",
    re.IGNORECASE,
)
"""A sentence about research under way ("Researchers continue to evaluate medications to treat refractory
celiac disease.") says what is being studied, not what is done: it led the answer to "How is celiac disease
treated?" above the gluten-free diet. Shown only when research is asked. The researchers must be the
sentence's subject: a finding ("Researchers have found …") is not research under way, nor a sentence that
goes on to a fact ("The drug is being investigated … and in June 2017 received approval in the USA"). Up to
six words may come first, for a section title run into the sentence ("New Diagnostic Methods Being Studied
Researchers are exploring new ways …", shown for "What are the early signs of Alzheimer's disease?"). An
institute "seeking better ways" is research too ("Through studies …, NEI is seeking better ways to detect,
treat, and prevent vision loss in people with glaucoma." led "How is glaucoma treated?")."""


UNRESOLVED_PERSON = re.compile(r"^(?:He|She) or (?:she|he)\b")
"""A sentence still opening on "he or she" after ``with_antecedent`` has no sentence before it to say
who: "He or she can find out whats causing these problems." was shown for the early signs of Alzheimer's
disease."""


def names_medicines(kb: KnowledgeBase, texts: list[str]) -> list[bool]:
    """For each text, whether it names a class of medicine (``TREATMENT_CLASS``), medicines in general
    (``MEDICINE_WORD``) or a drug the KG knows: what a question asking for a way without medicines does not
    want shown ("Statins work well at lowering LDL cholesterol." for "What is the best way to lower
    cholesterol without drugs?")."""
    if not texts:
        return []
    mentions = kb.matcher.find_many(texts)
    ids = sorted({i for ms in mentions for m in ms for i in m.entity_ids})
    drugs = {i for i, e in kb.store.get_entities(ids).items() if e.type in DRUG_TYPES}
    return [
        bool(TREATMENT_CLASS.search(text) or MEDICINE_WORD.search(text))
        or any(drugs.intersection(m.entity_ids) for m in ms)
        for text, ms in zip(texts, mentions, strict=True)
    ]


def with_antecedent(r: ReadSentence, passages: dict[str, str], mid_sentence: bool = False) -> ReadSentence:
    """``r`` with the passage's sentence before it when ``r`` opens on a reference back (``ANAPHOR``) — or,
    with ``mid_sentence``, names "these …" it does not list (``reading.refers_back``) — so the quote says
    what "this treatment" is ("Phlebotomy rids the body of extra iron. This treatment is simple,
    inexpensive, and safe."); the span stays an exact slice of the passage. Unchanged when the passage has
    no sentence just before it."""
    text = passages.get(r.evidence_id, "")
    if not text or not (refers_back(r.text) if mid_sentence else ANAPHOR.match(r.text)):
        return r
    before = [(s, e) for s, e in with_lists(text) if e <= r.start]
    if not before or text[before[-1][1] : r.start].strip():
        return r
    start = before[-1][0]
    if not ANAPHOR.match(r.text) and r.end - start > MAX_CHARS:
        return r  # "these foods" after a whole flattened list: the list is a passage, not a quote
    return replace(r, start=start, text=text[start : r.end])


def shown_read(
    kb: KnowledgeBase, read: list[ReadSentence], focus: Focus, evidence: list[EvidenceRec]
) -> list[ReadSentence]:
    """The read sentences that may be shown as answering: not those of a passage about research ("Researchers
    hope to identify biomarkers …") unless research is asked — the reader scored that sentence above Fabry
    disease's symptoms, because it names the disease and the word "signs"; no heading or pointer to another
    page (``states_something``); none about a sibling of the subject ("hepatitis C" under a hepatitis A
    question; agent/nodes/other_condition.py); none from a page about a qualified form of the subject when
    pages on the subject itself were found (pulmonary hypertension under a hypertension question); and none
    off the subject, from a page about something else that names the subject nowhere (a von Willebrand
    disease sentence under a Lyme disease question); and, for "what causes X?", none saying what X causes
    instead (agent/nodes/sentence_order.py ``on_asked_direction``)."""
    research_asked = "research" in focus.asked
    kept = [
        r
        for r in read
        if (r.label not in UNLESS_ASKED or research_asked)
        and states_something(r.text)
        and (research_asked or not ONGOING_RESEARCH.search(r.text))
    ]
    qualified = qualified_subject_passages(kb, focus, evidence)
    kept = [r for r in kept if r.evidence_id not in qualified]
    texts = [r.text for r in kept]
    other = about_other_condition(kb, focus, texts)
    off = off_subject_pages(kb, focus, [r.evidence_id for r in kept], texts, evidence)
    kept = [r for r, o, f in zip(kept, other, off, strict=True) if not (o or f)]
    return on_asked_direction(kept, focus.asked, focus.question, focus.word_pattern())


def lead_first(read: list[ReadSentence], lead: Callable[[str], bool] | None) -> list[ReadSentence]:
    """``read`` with the best sentence that names the asked detail (``lead``: a duration or a code;
    agent/nodes/asked_detail.detail_lead) moved to the front, when ``pick_read`` would show one by score
    (above ``MIN_LOGIT``, within ``WITHIN_LOGITS`` of the best, ``MIN_WORDS`` long); unchanged otherwise."""
    if lead is None or not read:
        return read
    best = max(r.score for r in read)
    for i, r in enumerate(read):
        if below_floor(r, best):
            break
        if len(r.text.split()) >= MIN_WORDS and lead(r.text):
            return [r, *read[:i], *read[i + 1 :]]
    return read


def below_floor(r: ReadSentence, best: float) -> bool:
    """Whether the reader scores ``r`` too low to show as answering: below ``MIN_LOGIT``, or more than
    ``WITHIN_LOGITS`` below the turn's best sentence (``pick_read`` stops there; ``lead_first`` too)."""
    return r.logit < MIN_LOGIT or r.score < best - WITHIN_LOGITS


def pick_read(
    read: list[ReadSentence],
    max_sentences: int = MAX_SENTENCES,
    max_words: int = MAX_WORDS,
    passages: dict[str, str] | None = None,
) -> list[ReadSentence]:
    """The best-scored read sentences that fit in ``max_words`` (a longer one is skipped, not the rest),
    none below ``MIN_LOGIT`` nor more than ``WITHIN_LOGITS`` below the best, near-repeats once.

    With ``passages``, then, a picked sentence naming "these …" it does not list is quoted with the
    sentence before it (``with_antecedent(mid_sentence=True)``) in the words the pick left unspent, when
    that sentence is not shown already. Why afterwards, not as a candidate's wider form: widened in the
    pick, "Two of these variants are located in the HMG domain …" outgrew the budget and was skipped, and a
    widened first sentence pushed out the one naming the mast cell's mediators — two BioASQ test answers
    lost; the antecedent must never change which sentences are shown."""
    picked: list[ReadSentence] = []
    words = 0
    best = max((r.score for r in read), default=0.0)
    for r in read:
        if len(picked) >= max_sentences:
            break
        if below_floor(r, best):
            break
        n = len(r.text.split())
        if n < MIN_WORDS or (picked and words + n > max_words):
            continue
        if any(near_repeat(r.text, p.text) for p in picked):
            continue
        picked.append(r)
        words += n
    return with_antecedents_within(picked, passages, max_words - words) if passages else picked


def with_antecedents_within(
    picked: list[ReadSentence], passages: dict[str, str], spare_words: int
) -> list[ReadSentence]:
    """``picked`` with each sentence naming "these …" it does not list widened to the sentence before it
    while ``spare_words`` last, unless that sentence is already shown (see :func:`pick_read`)."""
    out: list[ReadSentence] = []
    for r in picked:
        wide = with_antecedent(r, passages, mid_sentence=True)
        added = len(wide.text.split()) - len(r.text.split())
        before = wide.text[: r.start - wide.start]
        if wide is not r and added <= spare_words and not any(near_repeat(before, p.text) for p in picked):
            spare_words -= added
            r = wide
        out.append(r)
    return out


def near_repeat(a: str, b: str) -> bool:
    """Two sentences sharing ≥ 80 % of the shorter one's words (MedQuAD repeats its pages' sentences)."""
    x, y = set(re.findall(r"[a-z0-9]+", a.lower())), set(re.findall(r"[a-z0-9]+", b.lower()))
    return bool(x and y) and len(x & y) >= 0.8 * min(len(x), len(y))


def select_by_cosine(
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
