"""A claim the knowledge graph decides: an inheritance pattern, a drug for a disease, a disease's vector or
pathogen, checked against curated typed edges and cited as the one-hop chain that decides it.

Why beside the trained checker: the checker does not yet reach the precision a verdict needs (its
thresholds call nothing; ``data/claims/CARD.md``), but two of the commonest factual slips in a colleague's
reply are exactly what the curated KG holds — "Wilson disease is autosomal *dominant*" against the Genetics
Home Reference edge ``Wilson disease -has_inheritance_pattern-> autosomal recessive``, and "drug X treats
disease Y" against PharmacotherapyDB / LabeledIn indications and PharmacotherapyDB's physician-curated
*non*-indications. A KG verdict is given only when the claim names the relation's both ends, both linked by
the calibrated linker (``tools.ner_link``), and the KG holds an edge of that relation for the subject:

* inheritance: the claimed pattern among the subject's patterns → supported; the subject has patterns and
  none is the claimed one → contradicted (a pattern never listed is not a verdict);
* treatment: an edge treats / indicated_for / palliates from the drug to the disease → supported;
  not_indicated_for → contradicted; no edge → no verdict (absence from a KG is not evidence);
* transmission and cause (Disease Ontology's definitions, parsed into ``transmitted_by`` and
  ``has_material_basis_in``): a claim that says how the disease spreads ("Lyme disease is spread by ticks")
  or what causes it ("… caused by Borrelia burgdorferi") and names a word of an edge's target → supported.
  Never contradicted: a vector or pathogen the KG does not list is absence, not evidence ("dengue spreads
  from person to person" gets no KG verdict, though DO lists only the mosquito).

A negated claim ("X does not treat Y") reverses the verdict, as for the checker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent.nodes.focus import Focus, focus_of
from agent.nodes.other_condition import SIBLING_TYPES
from agent.state import EntityRec
from graphs.kb import KnowledgeBase
from graphs.stores.kg_facts import KGFact, kg_facts
from graphs.text.word_stems import word_stems
from tools.ner_link import NerLinkRequest, NerLinkResult, ner_link
from tools.ranking import STOP_WORDS

INHERITANCE = re.compile(
    r"\b(autosomal[ -](?:dominant|recessive)|x[ -]linked(?:[ -](?:dominant|recessive))?|mitochondrial|"
    r"y[ -]linked)\b",
    re.I,
)
RANKING_CUE = re.compile(r"\b(first[- ]line|second[- ]line|drug of choice|best|preferred|alone|only)\b", re.I)
"""A claim about a drug's *rank* or sufficiency ("first-line", "alone is adequate"): the KG lists indications,
not their order, so it never decides these."""
TREATMENT_CUE = re.compile(
    r"\b(treat(?:s|ed|ing|ment)?|indicated|therapy|used (?:for|to treat)|manage[sd]?|prescribe[sd]?)\b",
    re.I,
)
SPREAD_CUE = re.compile(r"\b(spread|transmit|carrie[ds]|carry|carrying|pass(?:es|ed)? on)\w*", re.I)
"""Words that make a claim about how a disease spreads. Not "bite": "Is a bull's-eye rash after a tick bite
the first sign of Lyme disease?" is about the rash, and was once "supported" by the tick edge."""
CAUSE_CUE = re.compile(r"\b(caus\w*|due to|infection with|results? from)\b", re.I)
AGENT_RELATIONS = (("transmitted_by", SPREAD_CUE), ("has_material_basis_in", CAUSE_CUE))
"""A claim's cue and the KG relation whose target it may name: a transmission vector, a pathogen."""
AGENT_STOP = frozenset(
    {
        "bite",
        "with",
        "from",
        "four",
        "serotype",
        "ncbitaxon",
        "type",
        "infected",
        "infection",
        "contact",
        "human",
        "person",
        "people",
        "through",
        "direct",
        "directly",
        "membrane",
        "mucous",
    }
)
"""Words of a target's name too general to show that a claim names it: "rabies is spread by contact with
infected blood" shares "contact" and "infected" with "contact of mucous membranes with saliva of an
infected animal", and is not what the KG says."""
SUPPORTING_TREATMENT = ("treats", "indicated_for", "palliates")
CONTRADICTING_TREATMENT = ("not_indicated_for",)


@dataclass(frozen=True)
class KGVerdict:
    """``supported`` or ``contradicted`` for the claim as stated (after a negation's reversal)."""

    verdict: str
    facts: tuple[KGFact, ...]
    """The edges that decide it (at most two), cited as one-hop chains."""


def _normal(pattern: str) -> str:
    return re.sub(r"[ -]+", " ", pattern.lower()).replace(" inheritance", "").strip()


def link_claim(kb: KnowledgeBase, text: str) -> NerLinkResult:
    """The entities a claim names, by dictionary (negated mentions included: the claim's own negation is
    handled by the caller)."""
    return ner_link(kb, NerLinkRequest(texts=[text], use_embeddings=False))


def named_disease(kb: KnowledgeBase, text: str) -> str | None:
    """The first disease a claim names, as written there."""
    mentions = [
        m
        for e in link_claim(kb, text).entities
        if e.type == "Disease"
        for m in e.mentions
        if m.source == "question"
    ]
    return min(mentions, key=lambda m: m.start).surface if mentions else None


def claim_subject(kb: KnowledgeBase, text: str) -> Focus:
    """The diseases a claim names, as the focus its closest passage must not be a sibling of
    (agent/nodes/other_condition.py): a reply's claim has no linked question of its own."""
    entities: list[EntityRec] = [
        {"id": e.id, "name": e.name, "type": e.type, "surface": m.surface}
        for e in link_claim(kb, text).entities
        if e.type in SIBLING_TYPES
        for m in e.mentions[:1]
    ]
    return focus_of(kb, entities, text)


CONDITION_TYPES = ("Disease", "Phenotype", "Finding", "Symptom")


def named_conditions(kb: KnowledgeBase, text: str) -> tuple[str, ...]:
    """Every condition a claim names (disease, phenotype, finding, symptom), as written there."""
    return tuple(
        dict.fromkeys(
            m.surface
            for e in link_claim(kb, text).entities
            if e.type in CONDITION_TYPES
            for m in e.mentions
            if m.source == "question"
        )
    )


def _linked(kb: KnowledgeBase, text: str) -> dict[str, list[str]]:
    """Entity ids by type that the linker finds in ``text``."""
    out: dict[str, list[str]] = {}
    for entity in link_claim(kb, text).entities:
        out.setdefault(entity.type, []).append(entity.id)
    return out


def _inheritance(kb: KnowledgeBase, text: str, diseases: list[str]) -> KGVerdict | None:
    match = INHERITANCE.search(text)
    if match is None or not diseases:
        return None
    claimed = _normal(match.group(1))
    facts = kg_facts(kb.store, diseases, ["has_inheritance_pattern"])
    facts = [f for f in facts if f.focus_is_head]
    if not facts:
        return None
    same = [
        f
        for f in facts
        if _normal(f.entity_name).startswith(claimed) or claimed.startswith(_normal(f.entity_name))
    ]
    if same:
        return KGVerdict("supported", tuple(same[:2]))
    return KGVerdict("contradicted", tuple(facts[:2]))


def _treatment(kb: KnowledgeBase, text: str, drugs: list[str], diseases: list[str]) -> KGVerdict | None:
    if not drugs or not diseases or TREATMENT_CUE.search(text) is None or RANKING_CUE.search(text):
        return None
    facts = [
        f
        for f in kg_facts(kb.store, drugs, [*SUPPORTING_TREATMENT, *CONTRADICTING_TREATMENT])
        if f.focus_is_head and f.entity_id in diseases
    ]
    against = [f for f in facts if f.relation in CONTRADICTING_TREATMENT]
    for_it = [f for f in facts if f.relation in SUPPORTING_TREATMENT]
    if for_it and not against:
        return KGVerdict("supported", tuple(for_it[:2]))
    if against and not for_it:
        return KGVerdict("contradicted", tuple(against[:2]))
    return None


VIRUS = re.compile(r"\bvir(?:us|uses|al)\b", re.I)
BACTERIUM = re.compile(r"\bbacteri(?:a|al|um)\b", re.I)


def kind_clash(claim_text: str, target_name: str) -> bool:
    """The claim names a kind of pathogen the target is not: "caused by Clostridium viruses" against
    Clostridium tetani (not a virus), "bacterial" against Dengue virus. No KG verdict then — the edge names
    the organism, and a clash of kinds is for the reader to see, not for a name match to call supported."""
    target_is_virus = bool(VIRUS.search(target_name))
    if VIRUS.search(claim_text):
        return not target_is_virus
    return bool(BACTERIUM.search(claim_text)) and target_is_virus


GENERAL_AGENT_STEMS = word_stems(
    "virus bacteria bacterium parasite fungus fungi germ microbe organism strain species pathogen agent kind "
    "form " + " ".join(AGENT_STOP)
)
"""Stems of words that name what kind of agent a claim means, not which one ("caused by a virus", "by
Plasmodium parasites"), and of :data:`AGENT_STOP`'s general words: never foreign to the target (a clash of
kinds is :func:`kind_clash`'s to see)."""
PHRASE_LEAD = re.compile(
    r"^(?:\s*\b(?:by|through|via|with|from|to|the|a|an|its|their|some|certain)\b)+", re.I
)
PHRASE_END = re.compile(
    r"[,.;:?!]|\b(?:in|on|at|of|from|within|during|when|after|before|and|or|but|which|that|who|while|"
    r"because|among|into|for|to|with)\b",
    re.I,
)


def agent_phrase(claim_text: str) -> str:
    """The words a claim gives for the agent, from its cue to the first preposition or clause boundary:
    "calcium crystals" in "Is gout caused by calcium crystals in the joints?"."""
    cues = [m for cue in (CAUSE_CUE, SPREAD_CUE) if (m := cue.search(claim_text))]
    if not cues:
        return ""
    rest = claim_text[min(cues, key=lambda m: m.start()).end() :]
    lead = PHRASE_LEAD.match(rest)
    rest = rest[lead.end() if lead else 0 :]
    end = PHRASE_END.search(rest)
    return rest[: end.start()] if end else rest


def foreign_agent_words(claim_text: str, target_name: str, subject_name: str) -> set[str]:
    """Words of the claim's agent phrase that neither the target's name, the disease's name, a general word
    nor a kind of agent accounts for: the claim names some *other* agent beside the shared word."""
    known = word_stems(target_name) | word_stems(subject_name) | GENERAL_AGENT_STEMS
    return word_stems(agent_phrase(claim_text), 3, STOP_WORDS) - known


def names_target(claim_text: str, target_name: str, subject_name: str) -> bool:
    """Whether the claim names the edge's target: a word of the target's name (4+ letters, not a general
    one, not a word of the disease's own name — "dengue" in "Dengue virus") among the claim's words,
    singular or plural ("ticks" names "blacklegged tick Ixodes scapularis"; "viral" names a virus), and no
    other agent beside it: "gout is caused by calcium crystals" shares "crystal" with "uric acid crystal
    deposits" and was *supported* by it (calcium pyrophosphate crystals are pseudogout's), so a word of
    the claim's agent phrase that the target does not account for (:func:`foreign_agent_words`) means the
    claim names something else, and the KG decides nothing."""
    target = word_stems(target_name, 4, AGENT_STOP) - word_stems(subject_name)
    return bool(target & word_stems(claim_text)) and not foreign_agent_words(
        claim_text, target_name, subject_name
    )


def _agent(kb: KnowledgeBase, text: str, diseases: list[str]) -> KGVerdict | None:
    if not diseases:
        return None
    for relation, cue in AGENT_RELATIONS:
        if cue.search(text) is None:
            continue
        facts = [f for f in kg_facts(kb.store, diseases, [relation]) if f.focus_is_head]
        named = [f for f in facts if names_target(text, f.entity_name, f.focus_name)]
        if any(kind_clash(text, f.entity_name) for f in named):
            return None
        if named:
            return KGVerdict("supported", tuple(named[:2]))
    return None


def kg_verdict(kb: KnowledgeBase, claim_text: str, negated: bool) -> KGVerdict | None:
    """The KG's verdict on a claim, or ``None`` when the KG does not decide it."""
    linked = _linked(kb, claim_text)
    diseases = linked.get("Disease", [])
    found = (
        _inheritance(kb, claim_text, diseases)
        or _treatment(kb, claim_text, linked.get("Compound", []), diseases)
        or _agent(kb, claim_text, diseases)
    )
    if found is None or not negated:
        return found
    flipped = "supported" if found.verdict == "contradicted" else "contradicted"
    return KGVerdict(flipped, found.facts)
