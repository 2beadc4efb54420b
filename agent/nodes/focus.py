"""What a question is about (its focus entities) and which retrieved passages actually answer it.

Why a module of its own: sufficiency ("answered" needs enough answering passages), the key-sentence
selection and the KG facts of the direct answer must agree on one definition, or the answer could show
sentences that the verdict did not count. The definition (issue 10):

* the **focus** is the question's affirmed entities of this turn, minus those that only name the asked
  aspect ("medicines" in "first-line medicine for type 2 diabetes", "Drug Reactions" linked from "side
  effects"): their surface is a cue word of a label, so they say *what* is asked, not *about what*;
* a passage is **on focus** when its keyword entity is a focus entity, or it mentions one (the hypergraph's
  ``f(e)``), or its text names one (name or synonym, on word boundaries);
* a passage **answers** when it is on focus and carries an asked aspect: its label is one asked for, or one
  of its sentences names a focus entity *and* carries a cue of the asked label ("metformin … side effects"
  in one sentence, not a side-effects passage that lists metformin elsewhere).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agent.nodes.mcq_parse import parse_mcq
from agent.state import ConsultState, EntityRec, EvidenceRec
from graphs.kb import KnowledgeBase
from graphs.model.labels import labels_asked, mentions_label, specific_labels_asked, without_cue_words
from graphs.vectors.batch_memo import BatchMemo
from tools.candidate_terms import is_generic
from tools.ner_link import DEFAULT_DELTA
from tools.ranking import content_words, word_set

SENTENCE_END = re.compile(
    r"(?<![A-Z]\.[A-Z]\.)(?<!\b[Dd]r\.)(?<!\bvs\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<=[.!?])\s+(?=[A-Z0-9(\"'])"
    r"|\n+|\s+-\s+(?=[A-Z])|\s{2,}"
)
"""Where a passage splits into sentences: after ./!/? before a capital, at line breaks, at MedQuAD's inline
bullets (" - Item") and at runs of spaces (its flattened lists); not after "U.S.", "Dr.", "e.g.", "i.e.".
Good enough for consumer health text; a trained splitter would add a model to load for little gain."""
MIN_NAME_CHARS = 3
"""Shorter names and synonyms ("MI", "AS") match too much ordinary text to count as a mention."""
MIN_WORD_CHARS = 4
"""Shorter words of a name ("of", "A") say nothing of which subject is meant (``Focus.word_pattern``)."""
KIND_WORDS = word_set(
    """cancer cancers tumor tumors tumour tumours neoplasm neoplasms neoplasia carcinoma carcinomas
    malignant malignancy benign primary secondary chronic acute type infection infections disorder
    disorders condition conditions"""
)
"""Words of a name that say what kind of condition it is, not which one ("cancer" of "breast cancer",
"malignant neoplasm of breast"): not distinctive (``Focus.word_pattern``). With them, "Breast cancer is the
second leading cause of death from cancer in American women." read as naming breast cancer as its effect,
and led "What causes breast cancer?"."""


@dataclass
class Focus:
    """The focus entities of a question, the labels it asks about and a matcher for their names."""

    entities: list[EntityRec]
    asked: list[str]
    names: dict[str, list[str]] = field(default_factory=dict)
    pattern: re.Pattern[str] | None = None
    question: str = ""
    """The question's own words: what a question with no focus entity is about
    (agent/nodes/other_condition.py ``titled_off_question``)."""

    @property
    def ids(self) -> set[str]:
        return {e["id"] for e in self.entities}

    def named_in(self, text: str) -> bool:
        """Whether ``text`` names a focus entity (name or synonym, whole words, case-insensitive)."""
        return bool(self.pattern and self.pattern.search(text))

    def word_pattern(self) -> re.Pattern[str] | None:
        """:attr:`pattern`, or a distinctive word of a name at a word start ("Parkinson" of "Parkinson's
        disease", ≥ 4 letters, not a category word): a looser "is the subject meant?" — "the movement
        problems of people with Parkinson's" is about Parkinson's disease."""
        words = {
            w
            for names in self.names.values()
            for name in names
            for w in re.findall(r"[A-Za-z0-9]+", name)
            if len(w) >= MIN_WORD_CHARS and not is_generic(w) and w.lower() not in KIND_WORDS
        }
        if self.pattern is None or not words:
            return self.pattern
        loose = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
        return re.compile(rf"{self.pattern.pattern}|\b(?:{loose})", re.IGNORECASE)


def is_tentative(entity: EntityRec) -> bool:
    """A link made below the calibrated embedding threshold (the offline planner's relaxed second try).

    Why it is not a subject: about 60 % of links between 0.70 and 0.80 are wrong (tools/ner_link.py
    ``DEFAULT_DELTA``; "3-Hz spike-and-wave discharges" → vaginal discharge). Such a link may seed a walk
    (a wrong seed costs only a few candidates the ranking judges), but it must not decide what the question
    is about, count passages as answering, or be named to the clinician as missing.
    """
    return entity.get("method") == "embedding" and float(entity.get("score", 1.0)) < DEFAULT_DELTA


def is_aspect_word(entity: EntityRec) -> bool:
    """An entity linked from a word naming the asked aspect ("medicine", "side effects", "genetic disease"),
    not a subject. A disease name that says more than the cue is a subject: "hereditary hemochromatosis"
    holds the inheritance cue "hereditary", and reading it as an aspect word left "Which gene is mutated in
    hereditary hemochromatosis?" with no subject (no passage counted as about it, an empty supporting list).
    """
    surface = entity.get("surface") or entity.get("name", "")
    if not labels_asked(surface) or entity.get("type", "") in ("Compound", "Gene"):
        return False
    if entity.get("type", "") != "Disease":
        return True
    rest = content_words(without_cue_words(surface))
    return not any(len(word) >= MIN_NAME_CHARS and not is_generic(word) for word in rest)


def question_focus(kb: KnowledgeBase, state: ConsultState) -> Focus:
    """The focus of the current turn (see module doc); ``names`` holds each entity's names for matching."""
    turn_ids = set(state.get("turn_entity_ids", []))
    ents = [e for e in state.get("entities", []) if e["id"] in turn_ids and not e.get("negated")]
    focus = [e for e in ents if not is_aspect_word(e) and not is_tentative(e)]
    question = state.get("question", "")
    if state.get("task") == "mcq":
        # An exam question is about its stem; the options are what is being weighed, not its subject
        # (otherwise "Drugs the KG lists for Ibuprofen" heads the answer to a gout question).
        stem = parse_mcq(question).stem.lower()
        focus = [e for e in focus if str(e.get("surface") or e.get("name") or "").lower() in stem]
        question = parse_mcq(question).stem
    return focus_of(kb, focus, question, list(state.get("candidates", {})))


def focus_of(
    kb: KnowledgeBase, focus: list[EntityRec], question: str, candidate_ids: list[str] | None = None
) -> Focus:
    """The focus on ``focus`` entities: their names and synonyms to match, the labels ``question`` asks
    (with a stand-in label the ``candidate_ids`` say the KB holds instead: ``standing_in_labels``)."""
    known = kb.store.get_entities([e["id"] for e in focus])
    names: dict[str, list[str]] = {}
    for e in focus:
        rec = known.get(e["id"])
        cands = [e.get("name", ""), e.get("surface", ""), *(rec.synonyms if rec else ())]
        cands += defined_abbreviations(question, [c for c in cands if c])
        names[e["id"]] = sorted({n.strip() for n in cands if len(n.strip()) >= MIN_NAME_CHARS}, key=len)
    all_names = sorted({n for ns in names.values() for n in ns}, key=len, reverse=True)
    pattern = (
        re.compile(r"\b(?:" + "|".join(re.escape(n) for n in all_names) + r")\b", re.IGNORECASE)
        if all_names
        else None
    )
    asked = standing_in_labels(kb, specific_labels_asked(question), list(names), pattern, candidate_ids or [])
    return Focus(focus, asked, names, pattern, question)


STANDS_IN: dict[str, str] = {"causes": "risk factors"}
"""An asked aspect the KB may hold under another label: what raises the risk of a disease is what is known
of its causes when no page says what causes it."""


def standing_in_labels(
    kb: KnowledgeBase,
    asked: list[str],
    subject_ids: list[str],
    subject: re.Pattern[str] | None,
    candidate_ids: list[str],
) -> list[str]:
    """``asked`` with the label that stands in for an asked one (:data:`STANDS_IN`) when neither the
    subject's topics nor a candidate page about it carries the asked label and one carries the stand-in
    (:func:`labels_about`). A page is about the subject when its keyword entity is a subject or its title
    names one (a MedQuAD page's keyword entity may be another node than the one the question links:
    "Leukemia, Lymphocytic, Chronic, B-Cell" for CLL).

    Why: "What causes chronic lymphocytic leukemia?" — MedQuAD has a "Who is at risk" page for it and no
    "What causes" page — was *answered* with "This may cause infection, anemia, and easy bleeding." and
    "Usually CLL does not cause any symptoms.": its overview pages say "cause" only of what the disease
    does. A subject's own topics say what its pages are when the walk reached none of them (osteoporosis's
    "Who is at risk" pages were not among its candidates). 124 of the default KB's MedQuAD topics (mostly
    cancers) have risk-factor pages and no cause page; with the stand-in their risk-factor passages are
    boosted, read and counted as answering."""
    wanted = [label for label in STANDS_IN if label in asked and STANDS_IN[label] not in asked]
    if not wanted or not candidate_ids or not (subject_ids or subject):
        return asked
    labels = labels_about(kb, tuple(sorted(candidate_ids)), frozenset(subject_ids), subject)
    return [
        *asked,
        *(STANDS_IN[label] for label in wanted if label not in labels and STANDS_IN[label] in labels),
    ]


LABELS_CHECKED = frozenset({*STANDS_IN, *STANDS_IN.values()})
_LABELS_ABOUT: BatchMemo[tuple[str, tuple[str, ...], frozenset[str], str], frozenset[str]] = BatchMemo(64)
"""(KB version, candidates, subjects, subject pattern) → labels: a turn asks for its focus a dozen times
over the same candidates."""


def labels_about(
    kb: KnowledgeBase,
    candidate_ids: tuple[str, ...],
    subject_ids: frozenset[str],
    subject: re.Pattern[str] | None,
) -> frozenset[str]:
    """The labels the KB holds about the subject: of its own topics (those :func:`standing_in_labels` weighs)
    and of the candidate passages whose page is about it (memoised in ``_LABELS_ABOUT``)."""

    def compute(_: object) -> list[frozenset[str]]:
        found = kb.store.get_evidence(list(candidate_ids))
        docs = kb.store.get_documents(sorted({ev.document_id for ev in found.values()}))
        titles = {i: d.title for i, d in docs.items()}
        topics = kb.store.get_topics([f"T:{i}|{label}" for i in subject_ids for label in LABELS_CHECKED])
        about = {
            ev.label
            for ev in found.values()
            if ev.keyword_entity in subject_ids
            or (subject is not None and subject.search(titles.get(ev.document_id, "")))
        }
        return [frozenset(t.label for t in topics.values()) | about]

    key = (kb.version, candidate_ids, subject_ids, subject.pattern if subject else "")
    return _LABELS_ABOUT.get_many([key], compute)[0]


def defined_abbreviations(question: str, names: list[str]) -> list[str]:
    """Abbreviations the question defines for one of ``names`` ("irritable bowel syndrome (IBS)"): the
    evidence writes "IBS", and the KG's synonyms may not hold it ("loci for IBS" was not read as naming the
    subject)."""
    out = []
    for name in names:
        found = re.search(re.escape(name) + r"\s*\(([A-Za-z][A-Za-z0-9-]{1,9})\)", question, re.IGNORECASE)
        if found:
            out.append(found.group(1))
    return out


SECTION_LABEL = re.compile(r"Summary\s*:\s+")
"""The label MedQuAD puts before each MedlinePlus health-topic answer ("Summary : Blood sugar, or glucose,
is the main sugar …", all 295 of them in the default KB): not part of the first sentence, and shown it read
"Summary : Antidepressants are medicines that treat depression." as the answer's first line."""


def without_section_label(text: str) -> str:
    """``text`` without a leading :data:`SECTION_LABEL` (a passage shown as a snippet)."""
    opening = text.lstrip()
    label = SECTION_LABEL.match(opening)
    return opening[label.end() :] if label else text


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) character offsets of the sentences of ``text``, stripped of surrounding space and of a
    section label before the first (:data:`SECTION_LABEL`)."""
    out: list[tuple[int, int]] = []
    start = 0
    for m in [*SENTENCE_END.finditer(text), None]:
        end = m.start() if m else len(text)
        seg = text[start:end]
        lead = len(seg) - len(seg.lstrip())
        s, e = start + lead, start + len(seg.rstrip())
        if not out and (label := SECTION_LABEL.match(text, s, e)):
            s = label.end()
        if e > s:
            out.append((s, e))
        if m:
            start = m.end()
    return out


def on_focus(focus: Focus, passage: EvidenceRec, mentioned: list[str]) -> bool:
    """Whether the passage is about a focus entity (keyword entity, a mention, or its text or its document's
    title names one).

    Why the title: "My mum has macular degeneration, is there anything she can take to slow it down?" was
    told "0 passages are about the question's subject" above three passages of "What are the treatments for
    Age-related Macular Degeneration ?" — their text says "AMD", and their keyword entity is the subtype."""
    ids = focus.ids
    if passage.get("keyword_entity", "") in ids or ids.intersection(mentioned):
        return True
    return focus.named_in(passage.get("text", "")) or focus.named_in(passage.get("title", ""))


def carries_aspect(focus: Focus, passage: EvidenceRec) -> bool:
    """Whether the passage says something of the asked kind about the focus (see module doc).

    "overview" (a plain "what is X?") is carried by any passage on the focus; no asked label at all
    likewise. Otherwise the passage's label must be asked, or a sentence must carry an asked cue and either
    name the focus or sit in a passage whose keyword entity is the focus (it may say "its symptoms").
    """
    asked = [label for label in focus.asked if label != "overview"]
    if not asked or passage.get("label") in asked:
        return True
    keyword_is_focus = passage.get("keyword_entity", "") in focus.ids
    text = passage.get("text", "")
    for s, e in sentences(text):
        sentence = text[s:e]
        if (keyword_is_focus or focus.named_in(sentence)) and any(
            mentions_label(sentence, label) for label in asked
        ):
            return True
    return False


def answering_passages(
    kb: KnowledgeBase, focus: Focus, evidence: list[EvidenceRec]
) -> tuple[list[EvidenceRec], list[EvidenceRec]]:
    """(passages on the focus, those of them that also carry the asked aspect), in rank order."""
    about = passages_on_focus(kb, focus, evidence)
    return about, [e for e in about if carries_aspect(focus, e)]


def passages_on_focus(kb: KnowledgeBase, focus: Focus, evidence: list[EvidenceRec]) -> list[EvidenceRec]:
    """The passages of ``evidence`` that are about a focus entity (``on_focus``), in rank order."""
    if not focus.entities or not evidence:
        return []
    mentioned = kb.store.evidence_entities([e["id"] for e in evidence])
    return [e for e in evidence if on_focus(focus, e, mentioned.get(e["id"], []))]
