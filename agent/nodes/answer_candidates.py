"""The answer itself, where the evidence names it: candidate answers voted from the reader's best sentences.

Why: a factoid question ("Which gene is mutated in cystic fibrosis?", "Which drugs are in the PolyIran
polypill?") is answered by a name; a clinician should read the name first and the sentences as its
support. How (issue 18):

* only for questions that ask for a name (:func:`asks_for_a_name`: which/what/who … not yes/no, not "how")
  *and* say which kind of thing (:func:`wanted_types`: "which drugs", "what nerve", "list … disorders");
  "What is the cause of …" or "Where is … expressed" are answered by a sentence, not a name;
* candidates are the KG-dictionary mentions (graphs/text/ner.py) in the reader's top ``VOTING_SENTENCES``
  sentences, minus what the question already names (its entities and words) and category words
  ("disease", "gene": tools/candidate_terms.py);
* each sentence votes for its candidates with the reader's probability that it answers; candidates of
  another KG type than the one asked are dropped, and so are names of the question's own subject under
  another name ("FABP2" for "fatty acid binding protein 2");
* with the KG: a candidate joined to one of the question's entities by a KG edge gets ``KG_SUPPORT`` extra
  votes, and the edge is cited as a chain ``[C:…]`` (measured with and without this, evals/answer_eval.py);
* a candidate is shown only when its votes reach ``MIN_VOTES`` and lead the next by ``MIN_LEAD`` (list
  questions show every candidate within ``LIST_SHARE`` of the best, at most ``MAX_NAMED``), with the sentence
  that names it cited. Thresholds chosen on bioasq-dev; precision in evals/reports/answer_eval_bioasq_*.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agent.nodes.reading import ReadSentence
from graphs.kb import KnowledgeBase
from graphs.model.schema import Entity
from graphs.stores.kg_facts import KGFact, kg_facts
from graphs.text.ner import normalise_term
from tools.candidate_terms import is_generic

VOTING_SENTENCES = 5
KG_SUPPORT = 0.5
MIN_VOTES = 1.0
MIN_LEAD = 1.5
"""The best candidate's votes over the next one's, for a factoid question."""
LIST_SHARE = 0.6
MAX_NAMED = 5
MIN_SURFACE = 3
MODIFIES_NEXT = re.compile(
    r"[\s-]*(?:agonists?|antagonists?|receptors?|inhibitors?|blockers?|analogu?e?s?|transporters?|producing|"
    r"levels?|deficiency|signall?ing|pathways?|metabolism|precursors?)\b",
    re.IGNORECASE,
)
"""A mention that names what the next word is about ("dopamine agonists", "dopamine-producing cells",
"vitamin D levels") does not name the thing itself: "Which drugs treat Parkinson's disease?" was answered
"dopamine; bromocriptine; …", its votes coming from "direct dopamine agonists"."""
ASKS_NAME = re.compile(
    r"^\s*(which|what|who|whom|where|name|list|identify)\b(?!\s+(?:is|are)\s+the\s+(?:role|function|"
    r"mechanism|effect|difference|prognosis|purpose|association|relationship|relation|impact)\b)",
    re.IGNORECASE,
)
YES_NO = re.compile(r"^\s*(is|are|does|do|did|can|could|should|was|were|has|have|will)\b", re.IGNORECASE)
WANTED_TYPES: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (
        re.compile(
            r"\b(drugs?|medications?|medicines?|compounds?|agents?|inhibitors?|antibod(?:y|ies))\b", re.I
        ),
        frozenset({"Compound", "Drug"}),
    ),
    (
        re.compile(r"\b(genes?|proteins?|enzymes?|receptors?|kinases?|transcription factors?)\b", re.I),
        frozenset({"Gene", "Protein"}),
    ),
    (
        re.compile(r"\b(diseases?|disorders?|syndromes?|conditions?|cancers?|indications?)\b", re.I),
        frozenset({"Disease"}),
    ),
    (
        re.compile(r"\b(nerves?|organs?|tissues?|muscles?|arter(?:y|ies)|veins?|glands?)\b", re.I),
        frozenset({"Anatomy", "CellOrTissue"}),
    ),
    (
        re.compile(r"\b(symptoms?|signs?|manifestations?|side effects?|adverse effects?)\b", re.I),
        frozenset({"Symptom", "Phenotype", "Finding", "SideEffect"}),
    ),
)


@dataclass
class AnswerCandidate:
    """A name the evidence gives as the answer, with its votes and where it is said."""

    name: str
    entity_ids: list[str]
    entity_type: str
    votes: float = 0.0
    evidence_ids: list[str] = field(default_factory=list)
    sentences: list[str] = field(default_factory=list)
    """The read sentences that name it (one per vote)."""
    facts: list[KGFact] = field(default_factory=list)
    """KG edges joining the candidate to a question entity (cited as one-hop chains)."""


def asks_for_a_name(question: str) -> bool:
    """Whether the question wants a name (factoid or list), not a yes/no or an explanation."""
    return bool(ASKS_NAME.search(question)) and not YES_NO.search(question)


def is_list_question(question: str) -> bool:
    """A question that wants several names ("Which drugs …", "List …"): its answer may show more than one."""
    head = question.split()[:4]
    return bool(re.match(r"\s*(list|name)\b", question, re.I)) or any(
        w.lower().rstrip("?,") in PLURAL_KINDS for w in head
    )


PLURAL_KINDS = frozenset(
    {
        *("drugs", "medications", "medicines", "compounds", "agents", "inhibitors", "genes", "proteins"),
        *("enzymes", "receptors", "kinases", "diseases", "disorders", "syndromes", "conditions"),
        *("symptoms", "signs", "mutations", "factors", "cells"),
    }
)


def wanted_types(question: str) -> frozenset[str]:
    """The KG types the question asks for, or empty when it names no kind of thing.

    The kind must follow the question word closely ("Which drugs …", "What nerve is …", "List Mcl-1
    inhibitors", "What are the symptoms of …"): in "Where is fatty acid binding protein 2 expressed?" the word
    "protein" is the subject, not what is asked."""
    for head in (KIND_AFTER.match(question), KIND_AFTER_PREPOSITION.search(question)):
        if head:
            for pattern, types in WANTED_TYPES:
                if pattern.search(head.group(1)):
                    return types
    return frozenset()


KIND_AFTER = re.compile(r"^\s*(?:which|what|list|name)\b((?:\s+[\w'-]+){1,4})", re.IGNORECASE)
"""The four words after the question word: where the asked kind is named ("What are the classic signs …")."""
KIND_AFTER_PREPOSITION = re.compile(
    r"\b(?:of|for|in|to|against|with|by)\s+(?:which|what)\b((?:\s+[\w'-]+){1,2})", re.IGNORECASE
)
"""The kind after "of/for … which" ("Dasatinib and Blinatumomab are used for treatment of which disease?",
"Febrifugine could be repositioned for what diseases?")."""


def vote(
    kb: KnowledgeBase,
    question: str,
    question_entity_ids: set[str],
    read: list[ReadSentence],
    use_kg: bool = True,
) -> list[AnswerCandidate]:
    """Every candidate of the top sentences with its votes, most voted first (see the module doc)."""
    top = read[:VOTING_SENTENCES]
    if not top:
        return []
    asked = normalise_term(question)
    mentions = kb.matcher.find_many([r.text for r in top])
    found: dict[str, AnswerCandidate] = {}
    ids_seen: set[str] = set()
    for r, ms in zip(top, mentions, strict=True):
        counted: set[str] = set()
        for m in ms:
            key = normalise_term(m.surface)
            if (
                len(key) < MIN_SURFACE
                or is_generic(key)
                or MODIFIES_NEXT.match(r.text, m.end)
                or question_entity_ids.intersection(m.entity_ids)
                or in_question(key, asked)
            ):
                continue
            cand = found.setdefault(key, AnswerCandidate(m.surface, list(m.entity_ids), ""))
            ids_seen.update(m.entity_ids)
            if key not in counted:
                cand.votes += r.probability
                cand.evidence_ids.append(r.evidence_id)
                cand.sentences.append(r.text)
                counted.add(key)
    if not found:
        return []
    entities = kb.store.get_entities(sorted(ids_seen))
    for cand in found.values():
        types = [entities[i].type for i in cand.entity_ids if i in entities]
        cand.entity_type = types[0] if types else ""
    wanted = wanted_types(question)
    if not wanted:
        return []  # "What is the cause of …", "Where is … expressed": a sentence answers, not a name
    cands = [
        c
        for c in found.values()
        if c.entity_type in wanted
        and not restates_question(c.entity_ids, entities, asked)
        and not abbreviates_question(c.name, asked)
    ]
    if use_kg and question_entity_ids:
        linked = kg_links(kb, question_entity_ids, {i for c in cands for i in c.entity_ids})
        for cand in cands:
            cand.facts = [f for i in cand.entity_ids for f in linked.get(i, [])][:2]
            if cand.facts:
                cand.votes += KG_SUPPORT
    # Ties keep the order the evidence names them in ("fatigue, weight gain, …, depression"): a source lists
    # the common ones first, and an alphabetical tie-break led hypothyroidism's answer with "depression".
    return sorted(cands, key=lambda c: -c.votes)


def in_question(key: str, asked: str) -> bool:
    """Whether the normalised term ``key`` occurs as whole words in the normalised question ``asked``."""
    return bool(key) and re.search(r"(?<!\w)" + re.escape(key) + r"(?!\w)", asked) is not None


def restates_question(entity_ids: list[str], entities: dict[str, Entity], asked: str) -> bool:
    """Whether a mention is the question's own subject under another name ("FABP2" for "fatty acid
    binding protein 2"): any name or synonym of its entities is in the question."""
    return any(
        len(key := normalise_term(name)) >= MIN_SURFACE and in_question(key, asked)
        for i in entity_ids
        if (entity := entities.get(i))
        for name in (entity.name, *entity.synonyms)
    )


def abbreviates_question(surface: str, asked: str) -> bool:
    """Whether ``surface`` is an acronym of consecutive words of the question: "FAP" for "familial adenomatous
    polyposis" (which the KG also knows as a gene, fibroblast activation protein) restates the subject,
    it does not answer "Which gene is mutated in familial adenomatous polyposis?"."""
    letters = re.sub(r"[^a-z]", "", surface.lower())
    if not 2 <= len(letters) <= 6 or not surface.isupper():
        return False
    initials = "".join(w[0] for w in re.findall(r"[a-z0-9]+", asked))  # consecutive words' first letters
    return letters in initials


def kg_links(kb: KnowledgeBase, question_ids: set[str], candidate_ids: set[str]) -> dict[str, list[KGFact]]:
    """Candidate id → the KG facts (one-hop edges, any relation type) joining it to a question entity."""
    out: dict[str, list[KGFact]] = {}
    for fact in kg_facts(kb.store, sorted(question_ids), kb.store.relation_types()):
        if fact.entity_id in candidate_ids:
            out.setdefault(fact.entity_id, []).append(fact)
    return out


LIST_ITEM_BREAK = re.compile(r",|;|:|\n\s*[-•*]\s|\s[-•]\s")
ENUMERATION_ITEMS = 3
LIST_ITEM_WORDS = 6
"""A sentence lists things when, after its lead-in, at least ``ENUMERATION_ITEMS`` of the parts its commas,
semicolons, colons or bullets make are short (≤ ``LIST_ITEM_WORDS`` words): "Itepekimab treatment improved
asthma control and quality of life, as compared with placebo, and led to …" is a clause with commas."""


def enumerates(sentence: str) -> bool:
    """Whether ``sentence`` lists several things ("… are: being very thirsty, frequent urination, feeling very
    hungry or tired, losing weight …, having sores that heal slowly, …")."""
    parts = [p.split() for p in LIST_ITEM_BREAK.split(sentence)[1:]]
    return sum(1 for p in parts if 0 < len(p) <= LIST_ITEM_WORDS) >= ENUMERATION_ITEMS


def named_answers(cands: list[AnswerCandidate], list_question: bool) -> list[AnswerCandidate]:
    """The candidates to show as the answer: a clear winner, or for a list question the leading few — but
    not one item of a list the evidence spells out: "What are the symptoms of diabetes?" was answered
    "Answer (as the evidence names it): sores", the one item of the page's list of eight the KG knows as a
    symptom (the key sentence below shows the whole list)."""
    if not cands or cands[0].votes < MIN_VOTES:
        return []
    if list_question:
        named = [c for c in cands if c.votes >= LIST_SHARE * cands[0].votes][:MAX_NAMED]
        return [] if len(named) == 1 and any(enumerates(s) for s in named[0].sentences) else named
    runner_up = cands[1].votes if len(cands) > 1 else 0.0
    return [cands[0]] if cands[0].votes >= MIN_LEAD * max(runner_up, 1e-9) or runner_up == 0 else []
