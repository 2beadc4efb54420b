"""The direct-answer block: a short answer (≤ ~8 lines) shown before any passage, from what was retrieved.

Two parts (issue 10, item 1):

* **KG facts for the asked relation** — the asked aspect maps to typed relations (``graphs.model.labels.
  RELATIONS_FOR_LABEL``); the entities the KG links to the focus by them are listed with their one-hop chain
  citations and source datasets, ranked by how many retrieved passages mention them (then by name), at most
  ``MAX_FACTS`` shown. The KG says "metformin treats type 2 diabetes" even when no passage does. From a list
  longer than ``LONG_LIST`` only what the passages also name is shown (or no line).
* **Key sentences** — ``agent.nodes.key_sentences.select_key_sentences``, only when the verdict is
  sufficient: on insufficient evidence no sentence is presented as an answer.

The block is data (``DirectAnswerRec`` on the answer and in state) plus its Markdown ``lines``; the answer
text starts with those lines, and the renderers may lay the fields out themselves.
"""

from __future__ import annotations

import re
from dataclasses import asdict
from functools import lru_cache
from typing import cast

from agent.nodes.answer_candidates import YES_NO, asks_for_a_name, is_list_question, named_answers, vote
from agent.nodes.asked_detail import detail_lead
from agent.nodes.asked_intervention import names_the_asked_intervention
from agent.nodes.asked_term import asked_about, asks_about_unlinked, on_asked_term
from agent.nodes.count_disagreement import count_disagreements
from agent.nodes.definition_lead import asks_what_it_is
from agent.nodes.focus import Focus
from agent.nodes.key_sentences import select_key_sentences, shown_read
from agent.nodes.reading import read_evidence
from agent.nodes.reply_sentences import reply_key_sentences
from agent.nodes.retrieval import search_question
from agent.nodes.sentence_text import readable
from agent.nodes.treatment_lead import treatment_lead
from agent.state import (
    ChainRec,
    ConsultState,
    DirectAnswerRec,
    EvidenceRec,
    KeySentenceRec,
    KGFactRec,
    NamedAnswerRec,
)
from graphs.building.hypergraph import DISEASE_TYPES
from graphs.kb import KnowledgeBase
from graphs.model.labels import RELATIONS_FOR_LABEL, asks_for_a_differential, relations_for
from graphs.stores.kg_facts import KGFact, kg_facts, without_label_mined_on_categories
from graphs.text.abbreviations import asked_expansion, most_given
from graphs.text.organism_names import looks_like_organism

MAX_FACTS = 6
NAMES_A_CONDITION = re.compile(
    r"\b(?:infections?|diseases?|disorders?|syndromes?|cancers?|tumou?rs?|[a-z]{3,}itis|pain|fevers?|failure"
    r"|pregnan\w*)\b",
    re.I,
)
"""Words that name a condition the question is about even when the linker finds no entity for it
("a bladder infection", "her arthritis")."""
ASKS_WHICH_CONDITION = re.compile(
    r"\b(?:which|what|any|other)\s+(?:\w+\s+)?(?:infections?|diseases?|disorders?|syndromes?|cancers?"
    r"|tumou?rs?|conditions?)\b",
    re.I,
)
"""A condition word that is the answer asked for ("… used for treatment of which disease?"), not one named."""
LONG_LIST = 20
"""A KG list longer than this is cut to the entities the retrieved passages also name, or left out: six of
494 genes in name order is not an answer a clinician can use."""
LONG_LISTS = {"causes": MAX_FACTS}
"""Tighter cuts by asked aspect. Gene associations (mostly Hetionet's GWAS-derived ones) are many and
unranked: six of gout's 19 (ABCG2; ALDH16A1; BCKDHA; CASP1 …) led "What causes gout?" above the passages'
uric acid. Drug lists stay at :data:`LONG_LIST`: gout's seven curated drugs include allopurinol, which
MedQuAD's gout page spells "allupurinol", so a passage cut would drop it."""
SENTENCE_CHARS = 300
DATASET_NAMES = {
    "pharmacotherapydb": "PharmacotherapyDB",
    "labeledin": "LabeledIn",
    "hetionet-v1.0": "Hetionet",
    "disease-ontology-2015": "Disease Ontology",
}
HEADINGS = {
    ("treatment", "in"): "Drugs the KG lists for {focus}",
    ("treatment", "out"): "Conditions the KG lists {focus} for",
    ("symptoms", "out"): "Signs and phenotypes the KG lists for {focus}",
    ("causes", "out"): "Genes and causes the KG links to {focus}",
    ("inheritance", "out"): "Inheritance the KG lists for {focus}",
    ("complications", "out"): "What the KG says {focus} results in",
    ("contraindications", "in"): "Drugs the KG lists as not indicated for {focus}",
    ("contraindications", "out"): "Conditions the KG lists {focus} as not indicated for",
    ("mechanism", "out"): "Genes the KG lists {focus} as binding (targets)",
}


def dataset_names(source: str) -> list[str]:
    """Readable dataset names of a relation's ``datasets`` field ("hetionet-v1.0|pharmacotherapydb")."""
    parts = [p for chunk in source.split("|") for p in chunk.split("+") if p]
    return [DATASET_NAMES.get(p, p) for p in parts]


def rank_facts(
    kb: KnowledgeBase,
    facts: list[KGFact],
    evidence: list[EvidenceRec],
    mentioned: dict[str, list[str]] | None = None,
) -> list[KGFactRec]:
    """One record per linked entity name (its chains and datasets merged), most-supported first.

    By name, not id: the unified KG holds the same concept under several ids ("Pain" from UMLS and from
    HPO), and a clinician read "Pain [1] (LabeledIn); Pain [2] (LabeledIn)" as a glitch.
    """
    if mentioned is None:
        mentioned = kb.store.evidence_entities([e["id"] for e in evidence])
    by_entity: dict[tuple[str, str], KGFactRec] = {}
    ids: dict[tuple[str, str], set[str]] = {}
    for f in facts:
        key = (f.focus_id, " ".join(f.entity_name.lower().split()))
        ids.setdefault(key, set()).add(f.entity_id)
        rec = by_entity.setdefault(
            key,
            {
                "entity_id": f.entity_id,
                "entity_name": f.entity_name,
                "entity_type": f.entity_type,
                "relation": f.relation,
                "focus_id": f.focus_id,
                "focus_name": f.focus_name,
                "chain_ids": [],
                "sources": [],
                "support": 0,
            },
        )
        rec["chain_ids"].append(f.chain_id)
        rec["relations"] = list(dict.fromkeys([*rec.get("relations", []), f.relation]))
        rec["sources"] = list(dict.fromkeys([*rec["sources"], *dataset_names(f.source)]))
    for key, rec in by_entity.items():
        said = name_pattern(rec["entity_name"])
        rec["support"] = sum(
            1
            for ev in evidence
            if ids[key].intersection(mentioned.get(ev["id"], []))
            or (said is not None and said.search(ev.get("text", "")) is not None)
        )
    return sorted(by_entity.values(), key=lambda r: (-r["support"], r["entity_name"].lower()))


@lru_cache(maxsize=4096)
def name_pattern(name: str) -> re.Pattern[str] | None:
    """How a passage names a KG entity by its name: as a whole word, and a symbol in capitals ("REN",
    "ACT") only in capitals. Why: a substring test counted "ren" in "children", "act" in "impact" and "sts"
    in "tests", so Hetionet's genes REN, ACT and STS led "What causes high blood pressure in young adults?"
    as genes "the passages also name". Cached: a disease's facts (496 genes for hypertension) are ranked
    again on every turn about it."""
    flat = " ".join(name.split())
    if len(flat) < 3:
        return None
    symbol = flat.isupper() and len(flat) <= 6
    return re.compile(
        rf"(?<![\w-]){re.escape(flat if symbol else flat.lower())}(?![\w-])", 0 if symbol else re.I
    )


def subject_support(evidence: list[EvidenceRec], mentioned: dict[str, list[str]]) -> dict[str, int]:
    """Entity id → how many retrieved passages are about it (keyword entity or a mention)."""
    counts: dict[str, int] = {}
    for ev in evidence:
        for entity_id in {ev.get("keyword_entity", ""), *mentioned.get(ev["id"], [])} - {""}:
            counts[entity_id] = counts.get(entity_id, 0) + 1
    return counts


def fact_heading(focus_name: str, label: str, direction: str) -> str:
    return HEADINGS[(label, direction)].format(focus=focus_name)


def conditions_asked_about(state: ConsultState, focus: Focus) -> set[str] | None:
    """``None`` when the question asks about a drug in general ("what is ciprofloxacin used for?"); else
    the ids of the conditions the turn linked (maybe none), because the question names a condition or a
    situation — an infection, a disease, pregnancy — and asks whether the drug fits *that* one.

    Why: a drug's list of indications answers only the general question. Above "we prescribed ciprofloxacin
    for a bladder infection at 10 weeks' pregnancy — was that right?" it read "Conditions the KG lists
    Ciprofloxacin for: chronic obstructive pulmonary disease; dyspepsia; heartburn", the first thing a
    clinician saw and nothing to do with the decision."""
    turn = set(state.get("turn_entity_ids", []))
    linked = {
        e["id"] for e in state.get("entities", []) if e["id"] in turn and e.get("type") in DISEASE_TYPES
    }
    question = ASKS_WHICH_CONDITION.sub(" ", search_question(state))
    if linked or NAMES_A_CONDITION.search(question) or "pregnancy" in focus.asked:
        return linked
    return None


def answers_the_aspect(label: str, fact: KGFact, conditions: set[str] | None) -> bool:
    """Whether a fact of the focus answers the asked ``label``: its direction has a heading, and a drug's
    indication is one of ``conditions`` when the question names some (:func:`conditions_asked_about`)."""
    if (label, "out" if fact.focus_is_head else "in") not in HEADINGS:
        return False
    if label == "treatment" and fact.focus_is_head and conditions is not None:
        return fact.entity_id in conditions
    return True


def facts_for(
    kb: KnowledgeBase, focus: Focus, evidence: list[EvidenceRec], conditions: set[str] | None = None
) -> tuple[str, list[KGFactRec]]:
    """(heading, ranked fact records) for the first asked aspect that has KG facts for the focus; a drug's
    indications only for ``conditions`` when the question names some (:func:`conditions_asked_about`)."""
    for label in focus.asked:
        rels = relations_for([label])
        # Only the directions that answer the asked aspect: "X -has_phenotype-> hypothyroidism" names
        # diseases that present with hypothyroidism, not its symptoms (it headed "symptoms of
        # hypothyroidism" with 17-beta hydroxysteroid dehydrogenase 3 deficiency).
        facts = without_label_mined_on_categories(
            kb.store,
            [
                f
                for f in kg_facts(kb.store, [e["id"] for e in focus.entities], rels)
                if answers_the_aspect(label, f, conditions)
            ],
        )
        if facts:
            # One heading fits one focus entity in one direction ("Drugs the KG lists for gout" must not
            # list what another focus entity, a drug, is indicated for): keep the focus entity most of the
            # retrieved passages are about (a reply to check names drugs, but it is about gout), then the
            # best-supported pair.
            mentioned = kb.store.evidence_entities([e["id"] for e in evidence])  # read once, used twice
            ranked = rank_facts(kb, facts, evidence, mentioned)
            head_of = {(f.focus_id, f.entity_id): f.focus_is_head for f in facts}
            about = subject_support(evidence, mentioned)
            lead = max(ranked, key=lambda r: about.get(r["focus_id"], 0))  # the first of equals: best support
            lead_head = head_of[(lead["focus_id"], lead["entity_id"])]
            ranked = [
                f
                for f in ranked
                if f["focus_id"] == lead["focus_id"] and head_of[(f["focus_id"], f["entity_id"])] == lead_head
            ]
            heading = fact_heading(lead["focus_name"], label, "out" if lead_head else "in")
            if len(ranked) > LONG_LISTS.get(label, LONG_LIST):
                # "Genes and causes the KG links to hypertension: ACT; CLU; INS … and 490 more" named no
                # particular gene: from a long list only what the retrieved passages also name is shown.
                # A disease's material basis (Disease Ontology: gout -> uric acid crystal deposits) defines
                # it, so it stays whether or not a passage words it the same way.
                named = [f for f in ranked if f["support"] > 0 or f["relation"] == "has_material_basis_in"]
                if not named:
                    continue
                heading += (
                    f" (those the passages also name or the ontology defines, of {len(ranked)} in the KG)"
                )
                ranked = named
            return heading, ranked
    return "", []


def fact_chains(kb: KnowledgeBase, facts: list[KGFactRec]) -> list[ChainRec]:
    """The shown facts as one-hop chain records, so their ``[C:…]`` ids are retrieved, citable chains."""
    # Every typed relation, not only the records' own: one record merges an entity's edges of several
    # relations (treats + indicated_for), and each of its chain ids must become a retrieved chain.
    relations = sorted({rel for rels in RELATIONS_FOR_LABEL.values() for rel in rels})
    rel_facts = kg_facts(kb.store, sorted({f["focus_id"] for f in facts}), relations)
    wanted = {c for f in facts for c in f["chain_ids"]}
    return [one_hop_chain(f) for f in rel_facts if f.chain_id in wanted]


def one_hop_chain(fact: KGFact) -> ChainRec:
    """A KG fact as a retrieved, citable one-hop chain record."""
    return {
        "id": fact.chain_id,
        "type": "one_hop",
        "text": fact.text,
        "length": 1,
        "relation_ids": [fact.relation_id],
        "node_ids": [fact.focus_id, fact.entity_id],
    }


SYMPTOMATIC_ONLY = "symptom relief only"
"""Said of a drug whose only edge to the disease is ``palliates`` (PharmacotherapyDB's symptomatic
category): "Drugs the KG lists for gout: … Acetylsalicylic acid" read as a treatment of gout to a newcomer
asking what their father could take for the pain, while the curated edge only says it eases symptoms."""


def fact_line(heading: str, facts: list[KGFactRec], total: int) -> str:
    items = [
        f"{f['entity_name']} {''.join(f'[{c}]' for c in f['chain_ids'][:2])}"
        + (f" ({'; '.join(fact_notes(f))})" if fact_notes(f) else "")
        for f in facts
    ]
    more = f", and {total - len(facts)} more" if total > len(facts) else ""
    return f"- **{heading}:** {'; '.join(items)}{more}"


RELATION_NOTES = {"transmitted_by": "vector, spreads it", "has_material_basis_in": "pathogen"}
"""What a "causes" fact is, when it is not a gene: "Genes and causes the KG links to Lyme disease:
blacklegged tick" read as if the tick were a gene or the cause."""
DISEASE_BASIS = "what the disease arises from"
"""The note of a material basis that is not an organism ("uric acid crystal deposits" for gout, "mast cells"
for mastocytosis): the KG types them all as pathogens (graphs/text/organism_names.py)."""


def fact_notes(fact: KGFactRec) -> list[str]:
    """What the parentheses after a fact say: "symptom relief only" when that is all the KG says, or what
    kind of cause it is (a vector, a pathogen), then the datasets."""
    relations = fact.get("relations", [fact.get("relation", "")])
    notes = {**RELATION_NOTES}
    if not looks_like_organism(fact.get("entity_name", "")):
        notes["has_material_basis_in"] = DISEASE_BASIS
    kind = (
        SYMPTOMATIC_ONLY
        if relations == ["palliates"]
        else ", ".join(dict.fromkeys(notes[r] for r in relations if r in notes))
    )
    sources = ", ".join(fact.get("sources", []))
    return [note for note in (kind, sources) if note]


def sentence_line(s: KeySentenceRec) -> str:
    text = readable(s["text"])
    if len(text) > SENTENCE_CHARS:
        text = text[:SENTENCE_CHARS].rsplit(" ", 1)[0] + "…"
    return f"- {text} [{s['evidence_id']}]"


def compose_direct_answer(
    kb: KnowledgeBase, state: ConsultState, focus: Focus, sufficient: bool
) -> tuple[DirectAnswerRec, list[ChainRec]]:
    """The direct-answer record and the chain records of its facts (to merge into the consult's chains)."""
    evidence = state.get("evidence", [])
    question = search_question(state)
    no_facts = asks_for_a_differential(question) or asks_about_unlinked(state, question)
    heading, ranked = (
        ("", []) if no_facts else facts_for(kb, focus, evidence, conditions_asked_about(state, focus))
    )
    if not names_the_asked_intervention(state, asked_about(state, question), ranked):
        heading, ranked = "", []  # "… take hormone replacement therapy?": breast cancer's drugs are not asked
    shown = ranked[:MAX_FACTS]
    # A checked reply shows what the evidence says about each of its claims, whatever the reply read as a
    # question would be judged (its verdicts lead the answer; agent/nodes/reply_sentences.py).
    picked = reply_key_sentences(kb, state) if state.get("task") == "check_reply" else None
    lead = detail_lead(kb, question, linked_ids(state))
    if picked is None and sufficient:
        # Failing an asked detail, a treatment question leads with a sentence naming a drug the KG lists.
        sentence_lead = lead or treatment_lead(kb, question, focus, ranked)
        picked = select_key_sentences(kb, question, focus, evidence, lead=sentence_lead)
    # KeySentence has exactly KeySentenceRec's fields: the record is the dataclass as a dict.
    sentences = [cast(KeySentenceRec, asdict(k)) for k in picked or []]
    named, named_chains = name_the_answer(kb, state, focus) if sufficient else ([], [])
    lines: list[str] = [named_line(named)] if named else []
    facts = [fact_line(heading, shown, len(ranked))] if shown else []
    subjects = [e["name"] for e in focus.entities] + [n for names in focus.names.values() for n in names]
    said = [sentence_line(s) for s in sentences] + count_disagreements(sentences, subjects)
    # A yes/no question is answered by a sentence ("There is no known cure for Alzheimer's disease"), not
    # by the KG's drug list, which led "Is there a cure for Alzheimer's disease?" and read as a yes; so is a
    # question for a duration or a code ("how long until hepatitis A symptoms appear" led with its symptoms).
    sentence_first = said and (lead is not None or YES_NO.search(question))
    lines += [*said, *facts] if sentence_first else [*facts, *said]
    record: DirectAnswerRec = {
        "focus": [e["name"] for e in focus.entities],
        "aspect": list(focus.asked),
        "fact_heading": heading,
        "facts": shown,
        "facts_total": len(ranked),
        "sentences": sentences,
        "named": named,
        "lines": lines,
    }
    return record, (fact_chains(kb, shown) if shown else []) + named_chains


def name_the_answer(
    kb: KnowledgeBase, state: ConsultState, focus: Focus
) -> tuple[list[NamedAnswerRec], list[ChainRec]]:
    """The answer's name(s) for a factoid or list question, where the reader's best sentences give them,
    with the KG edges that join them to the question as citable chains (agent/nodes/answer_candidates.py)."""
    question = state.get("question", "")
    expanded = asked_expansion(asked_about(state, question))  # not of a checked reply or a long case
    if expanded:
        return named_expansion(expanded, state.get("evidence", [])), []
    if not asks_for_a_name(question) or asks_what_it_is(question):
        # "What is cancer chemotherapy?" asks for a definition, not a name: it was "answered" with "Answer
        # (as the evidence names it): side effects", the entity its best sentences named most.
        return [], []
    read = read_evidence(kb, search_question(state), state.get("evidence", []))
    if not read:
        return [], []
    evidence = state.get("evidence", [])
    passages = {ev["id"]: ev.get("text", "") for ev in evidence}
    read = on_asked_term(
        shown_read(kb, read, focus, evidence), asked_about(state, question), focus.entities, passages
    )
    chosen = named_answers(vote(kb, question, linked_ids(state), read), is_list_question(question))
    named: list[NamedAnswerRec] = [
        {
            "name": c.name,
            "entity_type": c.entity_type,
            "votes": round(c.votes, 3),
            "evidence_ids": list(dict.fromkeys(c.evidence_ids))[:2],
            "chain_ids": [f.chain_id for f in c.facts],
        }
        for c in chosen
    ]
    return named, [one_hop_chain(f) for c in chosen for f in c.facts]


def named_expansion(short: str, evidence: list[EvidenceRec]) -> list[NamedAnswerRec]:
    """What ``short`` stands for, as the retrieved passages write it most often ("What does RUNX2 stand
    for?" → "Runt related factor-2", from "Runt related factor-2 (Runx2)"), cited to the first two passages
    that give it; none when no passage defines it (the asked-detail check then says so)."""
    found = most_given(short, [ev.get("text", "") for ev in evidence])
    if found is None:
        return []
    name, where = found
    ids = [evidence[k]["id"] for k in where[:2]]
    return [
        {"name": name, "entity_type": "", "votes": float(len(where)), "evidence_ids": ids, "chain_ids": []}
    ]


def linked_ids(state: ConsultState) -> set[str]:
    """The ids of the entities this turn's question linked (not those carried from earlier turns)."""
    linked = set(state.get("turn_entity_ids", []))
    return {e["id"] for e in state.get("entities", []) if e["id"] in linked}


def named_line(named: list[NamedAnswerRec]) -> str:
    """ "- **Answer (as the evidence names it):** CFTR [E:…] [C:…]; …" — each name with where it is said."""
    items = [
        n["name"] + " " + "".join(f"[{i}]" for i in [*n["evidence_ids"], *n["chain_ids"]]) for n in named
    ]
    return f"- **Answer (as the evidence names it):** {'; '.join(items)}"
