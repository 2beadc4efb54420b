"""Reading the evidence: which sentences of the retrieved passages answer the question (the trained reader).

Why: the embedder says a sentence is *about* the question; the evidence reader (graphs/vectors/reader.py, a
cross-encoder trained here, data/reader/CARD.md) reads question and sentence together and scores whether
the sentence *names the answer* — it was trained on BioASQ sentences that name the gold exact answer
against sentences of the same gold snippets that do not. One reading per turn serves three decisions: the
key sentences shown (agent/nodes/key_sentences.py), the candidate answer named before them
(agent/nodes/answer_candidates.py) and the "answered" verdict (agent/nodes/sufficiency.py).

How: the sentences of the top ``READ_PASSAGES`` passages (MedQuAD's list lead-ins joined with their items;
25–500 characters; exact repeats once), at most ``MAX_READ``, are read in one call;
``score = logit − RANK_PENALTY · passage rank``: the fused ranking knows things the reader does not (the
question index, rare-token BM25), so a sentence of the first passage needs a smaller logit than one of the
eighth. ``RANK_PENALTY`` was chosen on bioasq-dev only (exact answer in the key sentences and their first
sentence from a gold snippet; evals/reports/answer_eval_bioasq_dev.md).

A turn reads each sentence once: sufficiency and the answer node ask for the same (question, passages) and
get the same reading, and a later round reads only the sentences its new passages add (both remembered by
graphs/vectors/batch_memo.BatchMemo; dynamic int8 quantisation moves a score by ≤ ~0.13 logit with its batch
companions, so a sentence read in an earlier round keeps that round's score). When the reader is unavailable
(weights missing or damaged) this returns ``None`` and callers fall back to the cosine rule, which
``KnowledgeBase.warnings`` says in the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent.nodes.focus import sentences
from agent.state import EvidenceRec
from graphs.kb import KnowledgeBase
from graphs.vectors.batch_memo import BatchMemo
from graphs.vectors.reader import EvidenceReader

READ_PASSAGES = 6
MAX_READ = 36
"""Sentences read per turn at most (in passage rank order): bounds the reader's cost (~2–7 ms a sentence).
Six passages, not eight: on bioasq-dev the key sentences were as good (34/49 exact either way) and reading
took median 53 ms instead of 74 ms."""
MIN_CHARS = 25
MAX_CHARS = 500
"""Longer "sentences" are flattened lists or tables: worth a passage, not a key sentence."""
RANK_PENALTY = 0.25
"""Logits subtracted per passage rank (0 for the first passage); chosen on bioasq-dev."""
ANAPHOR = re.compile(
    r"^(?:(?:This|These|Such)\s+[a-z]+\b|(?:It|They|Others)\s|(?:He|She) or (?:she|he)\s|"
    r"(?:In|For)\s+others\b|(?:However|Thus|Therefore|Hence|For example|For instance|Likewise|Similarly),\s|"
    r"That(?:'s|’s|s|\s+is)\s+(?:why|because)\b|"
    r"(?:In|For|At|By|With|Without)\s[^,.]{1,40},\s+(?:this|these|it|they)\s)"
)
"""A sentence that opens on a reference back ("This treatment is simple, inexpensive, and safe.", "It can
last for years."), on a contrast with the sentence before ("However, you can still get other kinds of
hepatitis.") or on a conclusion from it ("Thus, they may not be diagnosed unless …"), on "Others" ("Others
require oral medications or insulin", said of people with type 2 diabetes), on an example of the sentence
before ("For example, if you have a bleeding ulcer, …"), on "he or she" (a doctor, named before), or on
"this" after a short opening phrase ("In most people, this raises blood sugar."), or on "That is why" /
"Likewise," ("That is why early diagnosis is important." led the answer to "How is glaucoma diagnosed?";
"Likewise, having these symptoms doesn't always mean that you have asthma." that to asthma's symptoms):
shown alone, it does not say what it is about."""
REFERS_BACK = re.compile(
    r"\b(?:these|those)\s+(?:[a-z-]+\s+){0,2}?[a-z]+s\b(?![^:]*:)",
)
"""A plural "these …"/"those …" inside a sentence, with no list after it in the same sentence: "If you
don't eat *these foods* regularly, … you're more likely to develop iron-deficiency anemia." was the second
key sentence for "What should I eat to keep my iron up?", and the foods were in the sentence before it
("The best sources of iron are meat, poultry, fish, and iron-fortified foods"). Quoted with that sentence
(key_sentences.with_antecedent). Not a reference back when a colon follows in the sentence ("these
include: …"), which lists what it means, nor when the sentence names the thing earlier itself ("Most people
who have known risk factors do not get leukemia, while many … have none of these risk factors"); a sentence
*opening* on "These …" is ``ANAPHOR``'s."""


def refers_back(text: str) -> bool:
    """Whether a sentence, shown alone, leans on the sentence before it: it opens on a reference back
    (``ANAPHOR``) or names "these …"/"those …" things it does not list (``REFERS_BACK``)."""
    if ANAPHOR.match(text):
        return True
    for match in REFERS_BACK.finditer(text):
        noun = match.group().split()[-1].lower()
        if noun.rstrip("s") not in text[: match.start()].lower():  # not "risk factors … these risk factors"
            return True
    return False


READ_WITH_ANTECEDENT = True
"""Read a sentence opening on a reference back with the sentence before it (:func:`with_antecedents`).
A module switch, not a setting: evals/consumer_key_sentences.py turns it off to measure both readings in
one run."""
_MEMO_SIZE = 64
"""Questions whose sentence logits are remembered (at ``MAX_READ`` sentences each)."""


@dataclass(frozen=True)
class ReadSentence:
    """A sentence of a retrieved passage with the reader's verdict on it.

    ``text`` is ``passage text[start:end]``; ``probability`` is the reader's calibrated probability that the
    sentence answers the question; ``score`` adds the passage-rank prior and orders the sentences."""

    evidence_id: str
    text: str
    start: int
    end: int
    rank: int
    logit: float
    probability: float
    score: float
    label: str


def is_list_item(text: str, start: int) -> bool:
    """Whether the sentence starting at ``start`` is a list item: it starts with a bullet, or the split
    before it was one — MedQuAD's flattened lists ("you may have       - A fever    - A headache") are split
    at " - " (agent/nodes/focus.py ``SENTENCE_END``), which leaves the items without their marker."""
    return text[start] in "-•*" or text[:start].rstrip().endswith(("-", "•", "*"))


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
            while j < len(spans) and is_list_item(text, spans[j][0]) and spans[j][1] - s <= MAX_CHARS:
                e = spans[j][1]
                j += 1
            if j == i + 1 and lead.endswith(":"):
                i = j
                continue
        out.append((s, e))
        i = j
    return out


def with_antecedents(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` with each sentence that opens on a reference back (``ANAPHOR``) widened to start at the
    sentence just before it, when that one ends where it begins and the two fit in ``MAX_CHARS``.

    Why: read alone, "It usually spreads through contact with infected blood." does not say what spreads, and
    the reader scored it 0.29 for "How is hepatitis C transmitted?" while "There is no vaccine for HCV." got
    0.68 and led an "answered" reply. Read as it is shown (key_sentences.with_antecedent quotes the
    sentence before it anyway), the reader sees what "it" is."""
    if not READ_WITH_ANTECEDENT:
        return spans
    out: list[tuple[int, int]] = []
    for i, (s, e) in enumerate(spans):
        if i and ANAPHOR.match(text[s:e]):
            ps, pe = spans[i - 1]
            if not text[pe:s].strip() and e - ps <= MAX_CHARS:
                s = ps
        out.append((s, e))
    return out


def candidate_sentences(evidence: list[EvidenceRec]) -> list[tuple[EvidenceRec, int, int, int]]:
    """(passage, start, end, passage rank) of every readable sentence of the top passages, repeats once."""
    out: list[tuple[EvidenceRec, int, int, int]] = []
    seen: set[str] = set()
    for rank, ev in enumerate(evidence[:READ_PASSAGES]):
        text = ev.get("text", "")
        for s, e in with_antecedents(text, with_lists(text)):
            key = " ".join(re.findall(r"[a-z0-9]+", text[s:e].lower()))
            if not MIN_CHARS <= e - s <= MAX_CHARS or key in seen:
                continue
            seen.add(key)
            out.append((ev, s, e, rank))
            if len(out) >= MAX_READ:
                return out
    return out


_LOGITS: BatchMemo[tuple[str, str, str], float] = BatchMemo(_MEMO_SIZE * MAX_READ)
"""(KB version, question, sentence) → logit: a turn's later rounds re-rank mostly the same passages, so only
sentences not read yet for this question are read (a turn has 2.4 rounds on average offline)."""
_READINGS: BatchMemo[tuple[str, str, tuple[str, ...]], list[ReadSentence]] = BatchMemo(_MEMO_SIZE)
"""(KB version, question, top passage ids) → the reading: sufficiency and the answer node get the same one."""


def read_evidence(kb: KnowledgeBase, question: str, evidence: list[EvidenceRec]) -> list[ReadSentence] | None:
    """The readable sentences of the top passages, best first; ``None`` when the reader is unavailable."""
    reader = kb.reader
    if reader is None:
        return None
    key = (kb.version, question, tuple(ev["id"] for ev in evidence[:READ_PASSAGES]))
    return _READINGS.get_many([key], lambda _: [_read(kb, reader, question, evidence)])[0]


def _read(
    kb: KnowledgeBase, reader: EvidenceReader, question: str, evidence: list[EvidenceRec]
) -> list[ReadSentence]:
    """One reading: every candidate sentence scored, best first (the logits read before are reused)."""
    cands = candidate_sentences(evidence)
    texts = [ev["text"][s:e] for ev, s, e, _ in cands]
    # Unread sentences go to the reader in one fixed (sorted) batch: a dynamic-int8 score moves with its batch
    # companions, and the order it had before the shared memo keeps every score bit for bit.
    ordered = sorted(set(texts))
    keys = [(kb.version, question, t) for t in ordered]
    known = _LOGITS.get_many(
        keys, lambda new: [float(x) for x in reader.logits(question, [t for *_, t in new])]
    )
    logit_of = dict(zip(ordered, known, strict=True))
    logits = [logit_of[t] for t in texts]
    probabilities = reader.probabilities_of(logits)
    read = [
        ReadSentence(
            evidence_id=ev["id"],
            text=text,
            start=s,
            end=e,
            rank=rank,
            logit=round(float(logit), 4),
            probability=round(float(p), 4),
            score=round(float(logit) - RANK_PENALTY * rank, 4),
            label=str(ev.get("label", "")),
        )
        for (ev, s, e, rank), text, logit, p in zip(cands, texts, logits, probabilities, strict=True)
    ]
    read.sort(key=lambda r: (-r.score, r.rank, r.start))
    return read


def forget() -> None:
    """Drop every memoised reading (benchmarks time a cold read; tests swap the reader)."""
    _READINGS.clear()
    _LOGITS.clear()
