"""Linking documents and evidence to KG entities: each document's keyword entity and each unit's ``f(e)``.

Why a module of its own: a full build (``builder``) and ``kb add`` (``incremental``) must link the same way —
the same dictionary terms, the same focus linking, the same choice among a mention's senses — or a document
added later would land on other entities than the same document in a fresh build. The shipped embedding
caches (``data/derive_embeddings.py``) replay this linking too. Kept apart from the build's staging, tables
and publishing, the rules that decide which entity a passage is about have one definition and one place.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence

from graphs.building.hypergraph import FocusLinker, new_focus_entity
from graphs.building.loaders import SourceDocument
from graphs.model.schema import Entity, slugify
from graphs.stores.embedded import normalise_name
from graphs.text.drug_names import other_names
from graphs.text.ner import DictionaryMatcher, Mention

MAX_SENSES_PER_MENTION = 3
"""A surface form that names several entities contributes at most this many (best connected) to f(e)."""


def entity_terms(entities: Iterable[Entity]) -> Iterable[tuple[str, str]]:
    """Dictionary terms of each entity: its name, its synonyms, and their everyday short forms.

    The one short form added: a trailing "mellitus" is dropped ("type 2 diabetes mellitus" → "type 2
    diabetes"), because clinicians and patients almost never say it and the KG almost always does. A drug
    also goes by its other approved names (graphs/text/drug_names.py: "levodopa" for DrugBank's "L-DOPA").
    """
    for e in entities:
        for term in (e.name, *e.synonyms):
            yield term, e.id
            for other in other_names(term, e.type):
                yield other, e.id
            if term.lower().endswith(" mellitus") and len(term.split()) > 2:
                yield term[: -len(" mellitus")], e.id


def mentions_to_entities(mentions: Sequence[Mention], degree: dict[str, int]) -> set[str]:
    """``f(e)`` from dictionary mentions: negated mentions still count (the passage is about them)."""
    out: set[str] = set()
    for m in mentions:
        senses = sorted(m.entity_ids, key=lambda i: (-degree.get(i, 0), i))
        out.update(senses[:MAX_SENSES_PER_MENTION])
    return out


def link_documents(
    docs: Sequence[SourceDocument],
    entities: dict[str, Entity],
    degree: dict[str, int],
    matcher: DictionaryMatcher | None,
) -> dict[str, str]:
    """Keyword entity per document; new focus entities are added to ``entities``.

    A document without a focus (generic documents) takes the entity it mentions most, weighted by
    specificity (``count / log(2 + degree)``) so that a hub such as "disease" does not become its keyword.
    """
    linker = FocusLinker.from_entities(entities, degree)
    keyword: dict[str, str] = {}
    for doc in docs:
        hit = None
        if doc.focus:
            hit = linker.link(doc.focus, doc.focus_cuis, doc.focus_synonyms)
        elif matcher is not None:
            counts = Counter(i for m in matcher.find(doc.title + "\n" + doc.text) for i in m.entity_ids[:1])
            hit = (
                min(counts, key=lambda i: (-counts[i] / math.log(2 + degree.get(i, 0)), i))
                if counts
                else None
            )
        if hit is None:
            focus = doc.focus or doc.title
            ent = new_focus_entity(focus, doc.focus_cuis, doc.focus_synonyms, doc.focus_type)
            if not doc.focus:
                ent = ent.model_copy(update={"id": "DOC:" + slugify(doc.id), "type": "Concept"})
            if ent.id not in entities:
                entities[ent.id] = ent
                linker.add(ent)
            hit = ent.id
        keyword[doc.id] = hit
    return keyword


def adopt_focus_names(
    docs: Sequence[SourceDocument], keyword: dict[str, str], entities: dict[str, Entity]
) -> int:
    """Add curated focus names as synonyms of the KG entity they were linked to through a UMLS CUI.

    Why: KG names are often formal ("type 2 diabetes mellitus") while people write "type 2 diabetes";
    MedQuAD foci are UMLS-curated consumer names of the same concept, so they make the dictionary match the
    way questions are asked. Only short names of single-CUI foci that name no other entity are adopted
    (NIDDK "foci" can be page titles; a multi-CUI focus is a broader concept).
    """
    taken = {normalise_name(n) for e in entities.values() for n in (e.name, *e.synonyms)}
    adopted = 0
    for doc in docs:
        ent = entities.get(keyword.get(doc.id, ""))
        if ent is None or len(doc.focus_cuis) != 1 or ent.id.startswith(("FOCUS:", "DOC:")):
            continue  # several CUIs ("Diabetes" → T1, T2, …) would make the name a wrong synonym
        new = [
            n
            for n in dict.fromkeys((doc.focus, *doc.focus_synonyms))
            if n and "?" not in n and len(n.split()) <= 6 and normalise_name(n) not in taken
        ]
        if new:
            entities[ent.id] = ent.model_copy(update={"synonyms": (*ent.synonyms, *new)})
            taken.update(normalise_name(n) for n in new)
            adopted += len(new)
    return adopted
