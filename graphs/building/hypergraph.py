"""Hypergraph construction: keyword entities, topics per (entity, label), and eq. 6 weights.

EbmKG (seed 000 §3): a topic ``t`` groups the evidence ``E_t`` of one keyword entity under one label; an
entity ``m`` is joined to ``t`` with weight ``w(t, m) = |{e ∈ E_t : m ∈ f(e)}| / |E_t|`` where ``f(e)`` is
the set of entities found in ``e``. Choice written down here: the keyword entity itself is always in
``f(e)`` for its own evidence (the unit is *about* it even when a paragraph says "this condition" instead of
the name), so the keyword has weight 1 to each of its topics and the walk can always start from it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from graphs.model.schema import Entity, Evidence, Topic, TopicEdge, slugify, topic_id
from graphs.stores.embedded import normalise_name

DISEASE_TYPES = ("Disease", "Phenotype", "Symptom")


@dataclass
class FocusLinker:
    """Links a document focus to a KG entity: UMLS/MeSH xrefs first, then exact name/synonym.

    Ties are broken towards diseases and then the best-connected node, because a MedQuAD focus is nearly
    always a condition and the connected node is the one that reasoning chains can use.
    """

    by_xref: dict[str, list[str]]
    by_name: dict[str, list[str]]
    entities: dict[str, Entity]
    degree: Mapping[str, int]

    @classmethod
    def from_entities(cls, entities: dict[str, Entity], degree: Mapping[str, int]) -> FocusLinker:
        by_xref: dict[str, list[str]] = defaultdict(list)
        by_name: dict[str, list[str]] = defaultdict(list)
        for e in entities.values():
            by_xref[e.id].append(e.id)
            for x in e.xrefs:
                by_xref[x].append(e.id)
            for n in {normalise_name(s) for s in (e.name, *e.synonyms)}:
                by_name[n].append(e.id)
        return cls(dict(by_xref), dict(by_name), entities, degree)

    def add(self, entity: Entity) -> None:
        """Make a newly created entity linkable by the documents that follow."""
        self.entities[entity.id] = entity
        self.by_xref.setdefault(entity.id, []).append(entity.id)
        for x in entity.xrefs:
            self.by_xref.setdefault(x, []).append(entity.id)
        for n in {normalise_name(s) for s in (entity.name, *entity.synonyms)}:
            self.by_name.setdefault(n, []).append(entity.id)

    def _best(self, ids: Iterable[str]) -> str | None:
        cands = sorted(set(ids))
        if not cands:
            return None
        return min(
            cands,
            key=lambda i: (self.entities[i].type not in DISEASE_TYPES, -self.degree.get(i, 0), i),
        )

    def link(self, focus: str, cuis: Sequence[str] = (), synonyms: Sequence[str] = ()) -> str | None:
        for cui in cuis:
            hit = self._best(self.by_xref.get(f"UMLS:{cui}", ()))
            if hit:
                return hit
        for name in (focus, *synonyms):
            hit = self._best(self.by_name.get(normalise_name(name), ()))
            if hit:
                return hit
        return None


def new_focus_entity(focus: str, cuis: Sequence[str], synonyms: Sequence[str], focus_type: str) -> Entity:
    """An entity for a focus the KG does not know (kept so its evidence is still reachable)."""
    type_map = {
        "Disorders": "Disease",
        "Disease": "Disease",
        "Drug": "Compound",
        "Chemicals & Drugs": "Compound",
    }
    return Entity(
        id="FOCUS:" + slugify(focus),
        name=focus,
        type=type_map.get(focus_type, "Concept"),
        synonyms=tuple(s for s in synonyms if s and s != focus),
        xrefs=tuple(f"UMLS:{c}" for c in cuis),
        sources=("corpus-focus",),
    )


def build_topics(
    evidence: Iterable[Evidence],
    mentions: Mapping[str, Iterable[str]],
    describe: Callable[[str, str, list[Evidence]], str],
) -> tuple[list[Topic], list[TopicEdge]]:
    """Topics per (keyword entity, label) and their entity edges with eq. 6 weights.

    ``mentions[e.id]`` is ``f(e)`` without the keyword (added here). ``describe(entity_id, label, units)``
    returns the topic description (extractive offline, an LLM summary when one is configured).
    """
    groups: dict[tuple[str, str], list[Evidence]] = defaultdict(list)
    for ev in evidence:
        groups[(ev.keyword_entity, ev.label)].append(ev)
    topics: list[Topic] = []
    edges: list[TopicEdge] = []
    for (entity, label), units in sorted(groups.items()):
        units.sort(key=lambda e: (e.document_id, e.start, e.id))
        tid = topic_id(entity, label)
        counts: dict[str, int] = defaultdict(int)
        for ev in units:
            for m in {*mentions.get(ev.id, ()), ev.keyword_entity}:
                counts[m] += 1
        topics.append(
            Topic(
                id=tid,
                entity_id=entity,
                label=label,
                description=describe(entity, label, units),
                evidence_ids=tuple(sorted(e.id for e in units)),
            )
        )
        edges.extend(
            TopicEdge(topic_id=tid, entity_id=m, weight=round(c / len(units), 6))
            for m, c in sorted(counts.items())
        )
    return topics, edges


def extractive_description(
    entity_name: str, label: str, units: Sequence[Evidence], max_words: int = 60
) -> str:
    """Offline topic description: the topic's name and the opening words of its first evidence units."""
    words: list[str] = []
    for ev in units:
        words.extend(ev.text.split())
        if len(words) >= max_words:
            break
    text = " ".join(words[:max_words])
    return f"{entity_name} — {label}: {text}{'…' if len(words) > max_words else ''}"
