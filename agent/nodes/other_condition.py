"""Is a sentence about a condition next to the one asked, not the one asked?

Why: "How long does it take for hepatitis A symptoms to appear after exposure?" showed, second in its direct
answer, "When symptoms of hepatitis C occur, they can begin 1 to 3 months after coming into contact with the
virus." The reader scores a sentence for how well it answers the question's shape; a page about a sibling
condition (hepatitis C beside A, type 1 beside type 2 diabetes, lung beside breast cancer) answers the same
shape with the wrong numbers. A clinician reading it under a hepatitis A question takes it for hepatitis A.

Rule: a sentence that names neither the question's subject (any of its names) nor a broader name for it
("hepatitis" for hepatitis A, "diabetes" for type 2 diabetes), and names a KG disease that shares a
distinctive word with the subject's name ("hepatitis C", "type 1 diabetes", "lung cancer"), is about another
condition. Words every disease name shares ("disease", "syndrome", "infection" …) make no sibling: "heart
disease" is not a sibling of Lyme disease.
"""

from __future__ import annotations

import functools
import re

from agent.nodes.asked_term import asked_sentences, term_pattern, written_terms
from agent.nodes.focus import Focus, passages_on_focus
from agent.state import EvidenceRec
from graphs.kb import KnowledgeBase
from graphs.model.labels import asks_for_a_differential
from graphs.model.schema import Entity
from graphs.text.ner import Mention
from graphs.text.word_stems import word_stems

SHARED_BY_ALL = frozenset(
    {
        *("disease", "diseases", "disorder", "disorders", "syndrome", "syndromes", "infection", "infections"),
        *("deficiency", "condition", "conditions", "failure", "pain", "type", "acute", "chronic", "primary"),
        *("secondary", "viral", "bacterial", "fungal", "hereditary", "inherited", "familial", "congenital"),
        *("juvenile", "adult", "childhood", "malignant", "benign", "severe", "mild", "onset", "early"),
        *("late", "the", "and", "of", "with", "due", "to", "in", "or"),
        # who has it, and the words of a page's title: "Kidney Stones in Adults", "What I need to know
        # about Kidney Stones" are pages on kidney stones, not a qualified form of them
        *("adults", "children", "child", "kids", "teens", "adolescents", "infants", "babies", "newborns"),
        *("women", "men", "people", "older", "elderly", "what", "i", "need", "know", "about", "you"),
    }
)
"""Words that join unrelated disease names ("heart disease", "Lyme disease", "viral hepatitis A" and "viral
gastroenteritis"): sharing one makes no sibling."""
SIBLING_TYPES = frozenset({"Disease"})
PAGE_FOCUS = "FOCUS:"
"""The id prefix of a page's own subject when the KG does not know it (graphs/building/hypergraph.py
``new_focus_entity``), typed "Concept" when the source gives no semantic group: "How to prevent Parasites -
Leishmaniasis ?" is titled with one. Such a title names another subject unless it holds one of the
question's subject names ("What I need to know about Hepatitis C" under a hepatitis C question)."""
_WORD = re.compile(r"[a-z0-9]+")
ABBREVIATION = re.compile(r"\b[A-Z][A-Z0-9]{1,5}\b")
"""A short upper-case word of a question: an abbreviation it may name a condition by ("MS", "COPD")."""


def words(name: str) -> frozenset[str]:
    """The lower-cased words of a name, to compare names word by word."""
    return frozenset(_WORD.findall(name.lower()))


def about_other_condition(kb: KnowledgeBase, focus: Focus, texts: list[str]) -> list[bool]:
    """For each text, whether it is about a sibling of the question's subject (see the module doc)."""
    subject = subject_names(focus)
    distinctive = {w for ws in subject for w in ws} - SHARED_BY_ALL
    if not distinctive or not texts:
        return [False] * len(texts)
    found = kb.matcher.find_many(texts)
    ids = sorted({i for ms in found for m in ms for i in m.entity_ids} - focus.ids)
    types = {i: e.type for i, e in kb.store.get_entities(ids).items()} if ids else {}
    out: list[bool] = []
    for text, mentions in zip(texts, found, strict=True):
        related = [words(m.surface) for m in mentions if related_name(m.surface, distinctive)]
        broader = any(name <= s for name in related for s in subject)
        if focus.named_in(text) or broader:
            out.append(False)
            continue
        out.append(
            any(
                not focus.ids.intersection(m.entity_ids)
                and any(types.get(i) in SIBLING_TYPES for i in m.entity_ids)
                and related_name(m.surface, distinctive)
                for m in mentions
            )
        )
    return out


def related_name(surface: str, distinctive: set[str]) -> bool:
    """A name sharing a distinctive word with the subject's: a sibling ("hepatitis C", "kidney failure") or a
    broader name for the subject ("hepatitis", "kidney disease" for chronic kidney disease), which
    ``about_other_condition`` tells apart by whether all its words lie within a subject name. A sentence
    naming a broader name is about the subject: "If kidney disease progresses to kidney failure, …" stays
    under a chronic kidney disease question."""
    return bool(words(surface) & distinctive)


def off_subject_pages(
    kb: KnowledgeBase, focus: Focus, evidence_ids: list[str], texts: list[str], evidence: list[EvidenceRec]
) -> list[bool]:
    """For each sentence (``texts[i]`` of passage ``evidence_ids[i]``), whether it is off the subject: it
    names no focus entity, no retrieved passage of its page (same URL or document) is on the focus
    (agent/nodes/focus.py ``on_focus``: its keyword entity, a mention, its text or title), and its page's
    title names another disease (``titled_with_another_condition``) — a page about another condition, not a
    PubMed snippet that leaves its abstract's subject unsaid or abbreviated ("… LY6K overexpression was
    associated with poor prognosis for patients with NSCLC" under a non-small cell lung cancer question).

    Why: "How is Lyme disease diagnosed?" showed, third in its answered direct answer, "Thus, they may not be
    diagnosed unless they have heavy bleeding after surgery or some other trauma." — from "How to diagnose Von
    Willebrand Disease ?". The reader scores the question's shape (diagnosis) and the sentence has it; nothing
    in it or its page is about Lyme disease. A sentence whose page is about the subject stays ("It can last
    for years." on the shingles page). No focus (the KG knows none of the question's entities): no sentence
    is judged off the subject unless its page is titled with a condition the question does not name
    (``titled_off_question``)."""
    if not texts:
        return []
    titled = titled_off(kb, focus, evidence)
    if not focus.entities:
        # A sentence that writes the question's own term is on it, whatever its page's title: "What is
        # PSA?" showed nothing (and was insufficient for "no shown sentence names PSA") while the prostate
        # cancer page's "Prostate-specific antigen (PSA) test: A test that measures the level of PSA in the
        # blood." was read.
        terms = [term_pattern(t) for t in written_terms(asked_sentences(focus.question), [])]
        return [
            eid in titled and not any(p.search(text) for p in terms)
            for eid, text in zip(evidence_ids, texts, strict=True)
        ]
    page = {ev["id"]: ev.get("url") or ev.get("document_id") or ev["id"] for ev in evidence}
    about = {page[ev["id"]] for ev in passages_on_focus(kb, focus, evidence)}
    # A page titled with another condition only is not about the subject for naming it in passing: "What
    # are the symptoms of Sarcoidosis ?" names "lupus pernio", and its "If you have changes in your vision
    # …, call 911" was shown under "What are the symptoms of lupus?".
    title = {ev["id"]: ev.get("title", "") for ev in evidence}
    return [
        not focus.named_in(text)
        and eid in page
        and eid in titled
        and (page[eid] not in about or not focus.named_in(title[eid]))
        for eid, text in zip(evidence_ids, texts, strict=True)
    ]


def titled_with_another_condition(kb: KnowledgeBase, focus: Focus, evidence: list[EvidenceRec]) -> set[str]:
    """Ids of the passages whose page title names a KG disease that is neither the subject nor a broader
    name of it ("How to diagnose Von Willebrand Disease ?" under a Lyme disease question; not "PubMed 123",
    nor "What is (are) Muscular Dystrophy ?" under a Duchenne muscular dystrophy one), or another page's own
    subject (``PAGE_FOCUS``): "How can I prevent malaria when travelling?" was answered from "How to prevent
    Parasites - Leishmaniasis ?" — "No vaccines or drugs to prevent infection are available." """
    found, conditions = title_conditions(kb, evidence)
    subject = subject_names(focus)
    other = {
        i
        for i, e in conditions.items()
        if i not in focus.ids
        and (
            (e.type in SIBLING_TYPES and not any(words(e.name) <= name for name in subject))
            or (
                i.startswith(PAGE_FOCUS)
                and not any(words(e.name) <= name or name <= words(e.name) for name in subject)
            )
        )
    }
    return {
        ev["id"] for ev, ms in zip(evidence, found, strict=True) if any(other & set(m.entity_ids) for m in ms)
    }


def titled_off(kb: KnowledgeBase, focus: Focus, evidence: list[EvidenceRec]) -> set[str]:
    """Ids of the passages whose page title names a condition other than the question's: another than the
    linked subject (``titled_with_another_condition``), or, when the KG links no subject, one the question
    does not name (``titled_off_question``)."""
    if focus.entities:
        return titled_with_another_condition(kb, focus, evidence)
    return titled_off_question(kb, focus.question, evidence)


def title_conditions(
    kb: KnowledgeBase, evidence: list[EvidenceRec]
) -> tuple[list[list[Mention]], dict[str, Entity]]:
    """Each passage's page-title mentions, and the conditions among the entities they name: KG diseases
    (``SIBLING_TYPES``) and pages' own subjects (``PAGE_FOCUS``). The two title rules
    (``titled_with_another_condition``, ``titled_off_question``) differ only in which of them are the
    question's."""
    found = kb.matcher.find_many([ev.get("title", "") for ev in evidence])
    ids = sorted({i for ms in found for m in ms for i in m.entity_ids})
    known = kb.store.get_entities(ids) if ids else {}
    return found, {i: e for i, e in known.items() if e.type in SIBLING_TYPES or i.startswith(PAGE_FOCUS)}


def titled_off_question(kb: KnowledgeBase, question: str, evidence: list[EvidenceRec]) -> set[str]:
    """Ids of the passages whose page title names a condition (a KG disease or a page's own subject,
    ``PAGE_FOCUS``) and only conditions the question does not name, for a question the KG links no
    subject of. A title's condition is named when every distinctive word of one of its names (not
    ``SHARED_BY_ALL``) is a word of the question, compared by five-letter stems (graphs/text/word_stems.py:
    "anemic" names "Anemia"), or when the question writes one of its short upper-case abbreviations ("MS"
    for multiple sclerosis, which the linker leaves unlinked as too short). A differential ("What could
    that be?") asks for a condition it does not name, so none of its pages is off by this rule.

    Why: "What is the treatment for a broken wrist?" links no KG entity, so no sentence was off its subject,
    and it was *answered* with "Initial treatment is aimed at improving blood flow to the heart …" from
    "What are the treatments for Broken Heart Syndrome ?" and a carpal tunnel splint from "What are the
    treatments for Carpal Tunnel Syndrome ?": the reader scores the question's shape (a treatment), and
    nothing told it that the pages were about other conditions. A page titled with no condition ("PubMed
    123", a drug page) is never off by this rule."""
    if not evidence or asks_for_a_differential(question):
        return set()
    asked = word_stems(question, min_chars=3)
    abbreviations = set(ABBREVIATION.findall(question))
    found, conditions = title_conditions(kb, evidence)
    names = {i: [e.name, *e.synonyms] for i, e in conditions.items()}

    def named(surface: str, entity_ids: list[str]) -> bool:
        candidates = [surface, *(n for i in entity_ids for n in names.get(i, []))]
        return any(names_condition(asked, n) or n in abbreviations for n in candidates)

    out = set()
    for ev, mentions in zip(evidence, found, strict=True):
        titled = [m for m in mentions if names.keys() & set(m.entity_ids)]
        if titled and not any(named(m.surface, m.entity_ids) for m in titled):
            out.add(ev["id"])
    return out


def names_condition(asked: set[str], name: str) -> bool:
    """Whether every distinctive word of ``name`` (three letters or more) is among the ``asked`` stems."""
    distinctive = distinctive_stems(name)
    return bool(distinctive) and distinctive <= asked


@functools.lru_cache(maxsize=65536)
def distinctive_stems(name: str) -> frozenset[str]:
    """The stems of ``name``'s words that are not ``SHARED_BY_ALL`` (memoised: a turn compares every
    synonym of every condition in its pages' titles, and the same few hundred names recur)."""
    return frozenset(word_stems(name, min_chars=3, skip=SHARED_BY_ALL))


def subject_names(focus: Focus) -> list[frozenset[str]]:
    """The words of each name of the question's subject (its focus entities' names and synonyms)."""
    return [words(n) for e in focus.entities for n in [e.get("name", ""), *focus.names.get(e["id"], [])]]


def qualified_subject_passages(kb: KnowledgeBase, focus: Focus, evidence: list[EvidenceRec]) -> set[str]:
    """Ids of the passages about a qualified form of the subject, when passages about the subject itself
    were retrieved too: the passage's keyword entity is a KG disease whose name holds a subject name and a
    distinctive word more ("pulmonary hypertension" under a hypertension question).

    Why: "What are the treatments for hypertension?" was answered with "Pulmonary hypertension (PH) has no
    cure.", "Oxygen therapy. …" and "Blood-thinning medicines. …" from "What are the treatments for
    Pulmonary Hypertension ?", above the high blood pressure page: the sentences name "hypertension" (inside
    "pulmonary hypertension"), so no sibling rule saw another condition. The ontology files pulmonary
    hypertension under hypertension, but its treatment is another one. Only when a retrieved passage is
    keyed to the subject itself: a question on diabetes mellitus whose pages are all keyed to type 2 diabetes
    keeps them."""
    keyed = {ev["id"]: ev.get("keyword_entity", "") for ev in evidence}
    if not focus.ids & set(keyed.values()):
        return set()
    subject = subject_names(focus)
    others = sorted(set(keyed.values()) - focus.ids - {""})
    qualified = {
        i
        for i, e in kb.store.get_entities(others).items()
        if e.type in SIBLING_TYPES and any(qualifies(name, e.name) for name in subject if name)
    }
    return {eid for eid, key in keyed.items() if key in qualified}


def qualifies(subject: frozenset[str], name: str) -> bool:
    """Whether ``name`` is a qualified form of the subject named by the words ``subject``: it holds them all
    and a distinctive word more ("pulmonary hypertension" of hypertension), not only who has it or a page
    title's words ("Kidney Stones in Adults", "What I need to know about Kidney Stones": the pages on
    kidney stones, whose sentences "Why do people get kidney stones?" could then not show)."""
    other = words(name)
    return subject < other and bool(other - subject - SHARED_BY_ALL)


def closest_first(
    kb: KnowledgeBase, focus: Focus, evidence: list[EvidenceRec], on_subject: list[EvidenceRec]
) -> list[EvidenceRec]:
    """The evidence in the order an insufficient answer lists its closest passages: those about the subject
    first, then the rest in rank order; pages titled with another condition last, and left out when any
    passage is about the subject.

    Why: "How is Lyme disease treated?" (insufficient) listed "Treatment for von Willebrand disease (VWD) is
    based on the type of VWD you have …" among its closest passages; the reader had scored the sentence's
    shape (treatment), not its subject. "What causes a stye?" led with two proctitis passages ("STDs … are a
    common cause of proctitis") above the eye-infection page that names styes."""
    if not evidence:
        return []
    subject = {e["id"] for e in on_subject}
    off = titled_off(kb, focus, evidence)
    rest = [e for e in evidence if e["id"] not in subject]
    return [
        *(e for e in evidence if e["id"] in subject),
        *(e for e in rest if e["id"] not in off),
        *(e for e in rest if e["id"] in off and not subject),
    ]
