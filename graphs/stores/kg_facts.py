"""KG facts for an asked relation: the entities the typed KG links to a focus entity by given relation types.

Why: "What is the first-line medicine for type 2 diabetes?" has a direct answer in the KG
(``metformin -treats-> type 2 diabetes``, PharmacotherapyDB) that a passage list never states. Each fact is a
one-hop chain, cited as ``[C:…]`` with the same id ``tools.reasoning_chain`` gives a one-hop chain
(``"C:" + short_hash(relation id)``), so the citation validator and the renderers treat it like any chain.
The source dataset comes from the stored relation (``get_relations``), since adjacency reads carry none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphs.model.schema import short_hash
from graphs.stores.base import GraphStore
from graphs.text.ner import is_fragment_name

MAX_EDGES_PER_NODE = 2000
"""Edges read per focus entity and direction: type 2 diabetes has a few hundred typed edges, hubs more."""


@dataclass(frozen=True)
class KGFact:
    """One typed edge between a focus entity and another entity, ready to cite."""

    chain_id: str
    relation_id: str
    relation: str
    focus_id: str
    focus_name: str
    entity_id: str
    entity_name: str
    entity_type: str
    source: str
    focus_is_head: bool
    """True for ``focus -relation-> entity``, False for ``entity -relation-> focus``."""
    text: str
    """Rendered as a chain: ``head -relation-> tail``."""


def fact_chain_id(relation_id: str) -> str:
    """The id of the one-hop chain over ``relation_id`` (as ``tools.reasoning_chain.chain_id`` makes it)."""
    return "C:" + short_hash(relation_id)


def kg_facts(store: GraphStore, focus_ids: Sequence[str], relation_types: Sequence[str]) -> list[KGFact]:
    """Facts linking each focus entity to others by ``relation_types`` (either direction), sorted by
    focus, relation type order, then entity name. Unknown ids or no relation types give no facts."""
    if not focus_ids or not relation_types:
        return []
    edges = store.neighbors(list(focus_ids), "both", list(relation_types), MAX_EDGES_PER_NODE)
    focus = set(focus_ids)
    edges = [r for r in edges if (r.head in focus) != (r.tail in focus) or r.head == r.tail]
    if not edges:
        return []
    stored = store.get_relations([r.id for r in edges])
    names = store.get_entities(sorted({r.head for r in edges} | {r.tail for r in edges}))
    order = {rel: i for i, rel in enumerate(relation_types)}
    facts: list[KGFact] = []
    for r in edges:
        focus_id, other = (r.head, r.tail) if r.head in focus else (r.tail, r.head)
        head, tail = names.get(r.head), names.get(r.tail)
        other_ent = names.get(other)
        if other_ent and is_fragment_name(other_ent.name):
            continue  # "achondroplasia → abnormal ossification of cartilage in" is no fact to show
        focus_ent = names.get(focus_id)
        facts.append(
            KGFact(
                chain_id=fact_chain_id(r.id),
                relation_id=r.id,
                relation=r.relation,
                focus_id=focus_id,
                focus_name=focus_ent.name if focus_ent else focus_id,
                entity_id=other,
                entity_name=other_ent.name if other_ent else other,
                entity_type=other_ent.type if other_ent else "",
                source=stored[r.id].source if r.id in stored else "",
                focus_is_head=r.head in focus,
                text=f"{head.name if head else r.head} -{r.relation}-> {tail.name if tail else r.tail}",
            )
        )
    facts.sort(key=lambda f: (f.focus_id, order.get(f.relation, len(order)), f.entity_name.lower()))
    return facts


CATEGORY_DESCENDANTS = 50
"""A disease with at least this many ontology descendants is a category ("cancer" 2,013, "heart disease"
75, "breast cancer" 78; "hypertension" 23, "type 2 diabetes mellitus" 3 are not)."""
LABEL_MINED_SOURCES = frozenset({"labeledin"})
"""Sources that map a drug label's indication phrase to a concept: "breakthrough pain in cancer patients"
became ``Fentanyl -treats-> cancer``, "CMV disease in heart transplant recipients" ``Valganciclovir ->
heart disease``."""


def is_category(store: GraphStore, entity_id: str, at_least: int = CATEGORY_DESCENDANTS) -> bool:
    """Whether ``entity_id`` has ``at_least`` descendants by ``is_a`` (read breadth-first, stopping there)."""
    seen, frontier = {entity_id}, [entity_id]
    while frontier:
        children = {
            r.head
            for r in store.neighbors(
                frontier, direction="in", relation_types=["is_a"], limit_per_node=at_least
            )
            if r.tail in frontier and r.head not in seen
        }
        seen |= children
        if len(seen) - 1 >= at_least:
            return True
        frontier = sorted(children)
    return False


def label_mined_on_category(store: GraphStore, fact: KGFact, at_least: int = CATEGORY_DESCENDANTS) -> bool:
    """A fact only a label-mining source gives, about a disease category: the label named a context within
    the category (pain in cancer, a transplant's infection), not a treatment of it; "Drugs the KG lists for
    cancer: Clonidine; Fentanyl; Granisetron; Morphine …" headed "How is cancer treated?". Curated sources
    (Hetionet, PharmacotherapyDB) on a category are kept ("breast cancer" → anastrozole)."""
    return label_mined_only(fact) and is_category(store, disease_of(fact), at_least)


def without_label_mined_on_categories(
    store: GraphStore, facts: list[KGFact], at_least: int = CATEGORY_DESCENDANTS
) -> list[KGFact]:
    """``facts`` without those ``label_mined_on_category`` drops, each disease's ontology read once (a
    disease's drug facts all share it: hypertension has 111)."""
    mined = {disease_of(f) for f in facts if label_mined_only(f)}
    category = {d: is_category(store, d, at_least) for d in sorted(mined)}
    return [f for f in facts if not (label_mined_only(f) and category[disease_of(f)])]


def label_mined_only(fact: KGFact) -> bool:
    """Whether every source of ``fact`` mines drug labels (``LABEL_MINED_SOURCES``)."""
    sources = set(fact.source.split("|")) - {""}
    return bool(sources) and sources <= LABEL_MINED_SOURCES


def disease_of(fact: KGFact) -> str:
    """The disease end of a drug -> disease fact, whichever end the focus is."""
    return fact.entity_id if fact.focus_is_head else fact.focus_id
