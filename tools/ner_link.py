"""``ner_link``: which knowledge-graph entities does a question (and a hypothesis answer) talk about?

Three linkers, merged per entity, every mention keeping the text and character span it came from:

* **dictionary** (always on, "never only the LLM"): the builder's Aho-Corasick matcher over every text,
  with NegEx negation. A surface form that names several entities keeps its ``n_m`` best-connected senses
  (typed-graph degree), the rule the builder uses for ``f(e)``.
* **embedding** (HyKGE §4.2.1): candidate terms the dictionary did not cover — 1–4-word n-grams of the
  uncovered text between stop words and punctuation — are embedded in one batch and searched in the
  ``entities`` collection; the top ``n_m`` entities per term are kept if their cosine exceeds ``δ``.
  Overlapping candidates are resolved best-score-first, so "substernal chest discomfort" links once rather
  than as three unigrams.
* **llm_term**: search terms an LLM extracted (EbmKG's "more than 5 entities" prompt, KG-Rank's 3–5-term
  JSON) arrive in the request — the agent calls the LLM, this function stays pure. They are linked by exact
  dictionary lookup, then by embedding, and merged with what the texts gave.

Negated mentions ("no fever") are linked and flagged, never dropped: a clinician's "no fever" is a finding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field, model_validator

from graphs.kb import KnowledgeBase
from graphs.text.negation import negated_spans
from graphs.text.term_variants import condition_noun_forms
from graphs.vectors.batch_memo import BatchMemo
from tools.candidate_terms import (
    CandidateTerm,
    candidate_terms,
    is_generic,
    resembles_dictionary,
)
from tools.common import as_langchain_tool, truncate

ADJECTIVE = re.compile(r"\b[A-Za-z]{5,}\b")
"""A word that may be a lay adjective for a condition (``_adjective_links``)."""
DEFAULT_DELTA = 0.80
"""Cosine threshold δ for embedding links, measured by ``evals/calibrate_linking.py`` (not HyKGE's 0.7,
which belongs to its GTE encoder). Against the default KB's 30,787 entities, of the terms this tool really
embeds (uncovered n-grams of MedQuAD text, 1,500 sampled) 11 % clear 0.70, 6 % clear 0.75, 3 % clear 0.80;
judged by hand, links scoring 0.70–0.75 were right ~25 % of the time, 0.75–0.80 ~27 % (12 of 44), 0.80–0.85
~76 % (17.5 of 23), above 0.85 ~85 %. So precision of accepted links is ~40 % at 0.70, ~50 % at 0.75 and
~80 % at 0.80: 0.80 is the knee. The price is recall on paraphrases: held-out KG synonyms link to the right
concept 35 % of the time at 0.70 and 22 % at 0.80, and consumer wording such as "tiredness" → Fatigue (0.77)
is lost — the dictionary and LLM terms ("fatigue") carry those, and unlinked phrases are reported."""
NO_ENTITIES = "no entities found"
"""The warning of a text with no linkable entity (a follow-up that carries its subject drops it)."""
MAX_CANDIDATE_TERMS = 40
"""Candidate n-grams embedded per call: one encoder batch of short strings stays in the tens of ms."""

Method = Literal["dictionary", "embedding", "llm_term"]


class NerLinkRequest(BaseModel):
    """Arguments of ``ner_link`` (also the tool's JSON schema)."""

    texts: list[str] = Field(
        min_length=1,
        max_length=5,
        description="Texts to link: the question first, then optionally a hypothesis answer or other text. "
        "Each is truncated to 4,000 characters.",
    )
    sources: list[str] | None = Field(
        default=None,
        description='A label per text, e.g. ["question", "hypothesis"]; default "question", "hypothesis", '
        '"text_3", ... Mentions carry the label of the text they were found in.',
    )
    extra_terms: list[str] = Field(
        default_factory=list, max_length=20, description="Extra search terms to link (e.g. from a planner)."
    )
    llm_terms: list[str] = Field(
        default_factory=list,
        max_length=20,
        description="Medical terms an LLM extracted from the question (EbmKG search-words prompt, or "
        'KG-Rank\'s {"medical terminologies": [...]}); merged with the dictionary matches, never used alone.',
    )
    n_m: int = Field(default=3, ge=1, le=10, description="Entities kept per term or ambiguous name.")
    delta: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description=f"Cosine threshold for embedding links (default {DEFAULT_DELTA}).",
    )
    use_embeddings: bool = Field(
        default=True, description="Link terms the dictionary missed by embedding similarity."
    )

    @model_validator(mode="after")
    def _sources_match_texts(self) -> NerLinkRequest:
        if self.sources is not None and len(self.sources) != len(self.texts):
            raise ValueError(f"sources has {len(self.sources)} labels for {len(self.texts)} texts")
        return self

    def source_labels(self) -> list[str]:
        defaults = ["question", "hypothesis"] + [f"text_{i + 1}" for i in range(2, len(self.texts))]
        return list(self.sources) if self.sources is not None else defaults[: len(self.texts)]


class EntityMention(BaseModel):
    """Where an entity was found: ``source`` names the text (or "llm_terms"/"extra_terms")."""

    source: str
    start: int
    end: int
    surface: str
    negated: bool
    method: Method
    score: float


class LinkedEntity(BaseModel):
    """One knowledge-graph entity the texts mention, with every mention and the best link score."""

    id: str
    name: str
    type: str
    score: float = Field(description="1.0 for an exact dictionary name, else the embedding cosine.")
    method: Method = Field(description="How the best-scoring mention was linked.")
    methods: list[Method]
    negated: bool = Field(description="True when every mention in the texts is negated.")
    mentions: list[EntityMention]


class NerLinkResult(BaseModel):
    entities: list[LinkedEntity]
    unlinked_terms: list[str] = Field(
        description="Requested terms and uncovered phrases that no linker could map to an entity."
    )
    generic_terms: list[str] = Field(
        default_factory=list,
        description="Category words found and deliberately not linked (disease, drug, gene, patient, …): "
        "they name a kind of thing, and a KG node of that name is never the question's subject.",
    )
    parameters: dict[str, Any]
    warnings: list[str]


@dataclass
class _Link:
    entity_id: str
    mention: EntityMention
    order: tuple[int, int]


@dataclass
class _Linking:
    """The state of one call: the (truncated) texts and everything linked or left unlinked so far."""

    texts: list[str]
    labels: list[str]
    n_m: int
    delta: float
    links: list[_Link] = field(default_factory=list)
    unlinked: list[str] = field(default_factory=list)
    generic: list[str] = field(default_factory=list)
    linked_runs: set[int] = field(default_factory=set)
    degree: dict[str, int] = field(default_factory=dict)


def ner_link(kb: KnowledgeBase, request: NerLinkRequest) -> NerLinkResult:
    """Link the request's texts and terms to knowledge-graph entities (see the module docstring)."""
    warnings: list[str] = []
    labels = request.source_labels()
    texts: list[str] = []
    for label, raw in zip(labels, request.texts, strict=True):
        text, note = truncate(raw)
        texts.append(text)
        if note:
            warnings.append(f"{label}: {note}")
    delta = DEFAULT_DELTA if request.delta is None else request.delta
    state = _Linking(texts=texts, labels=labels, n_m=request.n_m, delta=delta)

    covered = _dictionary_links(kb, state)
    term_candidates = _requested_terms(kb, state, request)
    candidates: list[CandidateTerm] = []
    if request.use_embeddings:
        text_candidates, run_texts = candidate_terms(texts, covered)
        candidates = term_candidates + [
            c for c in text_candidates if resembles_dictionary(kb, c.term) and not is_generic(c.term)
        ]
        if len(candidates) > MAX_CANDIDATE_TERMS:
            dropped = len(candidates) - MAX_CANDIDATE_TERMS
            warnings.append(f"{dropped} candidate terms not embedded (limit {MAX_CANDIDATE_TERMS} per call)")
            candidates = candidates[:MAX_CANDIDATE_TERMS]
        if candidates:
            _embedding_links(state, candidates, _search_entities(kb, [c.term for c in candidates], state.n_m))
        state.unlinked += [run for i, run in enumerate(run_texts) if i not in state.linked_runs]
    else:
        state.unlinked += [c.term for c in term_candidates]

    entities = _merge(kb, state.links)
    if not entities:
        warnings.append(NO_ENTITIES)
    return NerLinkResult(
        entities=entities,
        unlinked_terms=list(dict.fromkeys(state.unlinked)),
        generic_terms=list(dict.fromkeys(state.generic)),
        parameters={
            "sources": labels,
            "n_m": request.n_m,
            "delta": delta,
            "use_embeddings": request.use_embeddings,
            "candidate_terms": len(candidates) if request.use_embeddings else 0,
            "max_candidate_terms": MAX_CANDIDATE_TERMS,
        },
        warnings=warnings,
    )


def _dictionary_links(kb: KnowledgeBase, state: _Linking) -> list[list[tuple[int, int]]]:
    """Dictionary mentions of every text as links (``n_m`` senses each); returns the covered spans."""
    found = [kb.matcher.find(text, with_negation=True) for text in state.texts]
    senses = sorted({i for mentions in found for m in mentions for i in m.entity_ids})
    state.degree.update(kb.store.degrees(senses) if senses else {})
    for index, mentions in enumerate(found):
        for m in mentions:
            if is_generic(m.surface):  # its span stays covered, so it is not embedded either
                state.generic.append(m.surface.lower())
                continue
            for entity_id in _senses(m.entity_ids, state.degree, state.n_m):
                mention = EntityMention(
                    source=state.labels[index],
                    start=m.start,
                    end=m.end,
                    surface=m.surface,
                    negated=m.negated,
                    method="dictionary",
                    score=1.0,
                )
                state.links.append(_Link(entity_id, mention, (index, m.start)))
    covered = [[(m.start, m.end) for m in mentions] for mentions in found]
    for index, text in enumerate(state.texts):
        covered[index] += _adjective_links(kb, state, index, text, covered[index])
    return covered


def _adjective_links(
    kb: KnowledgeBase, state: _Linking, index: int, text: str, covered: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """Dictionary links of the condition a lay adjective names ("my mom is anemic" -> anemia, "he is
    asthmatic" -> asthma; graphs/text/term_variants.py ``condition_noun_forms``), for words no mention
    covers; only senses the KG types as a disease, so "positive" never becomes "position". Returns the
    spans it linked.

    Why: the dictionary holds names, not their adjectives: "my mom is anemic, what kinds of things cause
    that?" linked nothing, was told it referred back to no earlier subject, and was insufficient above the
    anemia causes page."""
    spans: list[tuple[int, int]] = []
    for word in ADJECTIVE.finditer(text):
        start, end = word.span()
        if any(s < end and start < e for s, e in covered):
            continue
        for noun in condition_noun_forms(word.group().lower()):
            senses = kb.matcher.entity_ids(noun)
            diseases = [i for i, e in kb.store.get_entities(senses).items() if e.type == "Disease"]
            if not diseases:
                continue
            state.degree.update(kb.store.degrees([d for d in diseases if d not in state.degree]))
            mention = EntityMention(
                source=state.labels[index],
                start=start,
                end=end,
                surface=word.group(),
                negated=negated_spans(text, [(start, end)])[0],
                method="dictionary",
                score=1.0,
            )
            for entity_id in _senses(diseases, state.degree, state.n_m):
                state.links.append(_Link(entity_id, mention, (index, start)))
            spans.append((start, end))
            break
    return spans


def _requested_terms(kb: KnowledgeBase, state: _Linking, request: NerLinkRequest) -> list[CandidateTerm]:
    """Link LLM/extra terms that are dictionary names; return the others as embedding candidates."""
    pending: list[CandidateTerm] = []
    requested = [(t, "llm_terms") for t in request.llm_terms] + [
        (t, "extra_terms") for t in request.extra_terms
    ]
    for raw_term, origin in requested:
        term = " ".join(raw_term.split())
        if not term:
            continue
        if is_generic(term):
            state.generic.append(term.lower())
            continue
        senses = kb.matcher.entity_ids(term)
        if not senses:
            pending.append(CandidateTerm(term=term, origin=origin))
            continue
        state.degree.update(kb.store.degrees([s for s in senses if s not in state.degree]))
        method: Method = "llm_term" if origin == "llm_terms" else "dictionary"
        for entity_id in _senses(senses, state.degree, state.n_m):
            state.links.append(_requested_link(state, entity_id, term, method, origin, 1.0))
    return pending


def _senses(entity_ids: list[str], degree: dict[str, int], n_m: int) -> list[str]:
    """The ``n_m`` best-connected senses of an ambiguous name (degree, then id, for determinism)."""
    return sorted(entity_ids, key=lambda i: (-degree.get(i, 0), i))[:n_m]


def _requested_link(
    state: _Linking, entity_id: str, term: str, method: Method, origin: str, score: float
) -> _Link:
    """A link for an LLM/extra term, placed at its first occurrence in a text when it occurs there.

    ``origin`` ("llm_terms" or "extra_terms") names the mention's source when the term is not in any text.
    """
    for index, text in enumerate(state.texts):
        start = text.lower().find(term.lower())
        if start >= 0:
            end = start + len(term)
            mention = EntityMention(
                source=state.labels[index],
                start=start,
                end=end,
                surface=text[start:end],
                negated=negated_spans(text, [(start, end)])[0],
                method=method,
                score=score,
            )
            return _Link(entity_id, mention, (index, start))
    mention = EntityMention(
        source=origin, start=0, end=len(term), surface=term, negated=False, method=method, score=score
    )
    return _Link(entity_id, mention, (len(state.texts), 0))


_SEARCHES: BatchMemo[tuple[str, str, int], list[tuple[str, float]]] = BatchMemo(1024)
"""(KB version, term, limit) → the term's nearest entities. A consult's follow-up round links the question
again with a few extra terms, and every term of the first round was searched already: each search is a pass
over all 31k entity vectors (~1 ms a term), so a follow-up round re-searched ~30 terms for nothing."""


def _search_entities(kb: KnowledgeBase, terms: list[str], limit: int) -> list[list[tuple[str, float]]]:
    """Embed the terms not searched yet in one batch and find each one's nearest entities.

    A vector index may offer ``search_many`` (one matrix product for the whole batch); otherwise one
    ``search`` per term. Results are remembered per KB version (see ``_SEARCHES``).
    """

    def search(keys: list[tuple[str, str, int]]) -> list[list[tuple[str, float]]]:
        vectors = kb.embedder.embed([term for _, term, _ in keys])
        batched = getattr(kb.vectors, "search_many", None)
        if callable(batched):
            return list(batched("entities", vectors, limit))
        return [kb.vectors.search("entities", vector, limit) for vector in vectors]

    return _SEARCHES.get_many([(kb.version, t, limit) for t in terms], search)


def _embedding_links(
    state: _Linking, candidates: list[CandidateTerm], hits: list[list[tuple[str, float]]]
) -> None:
    """Accept candidates whose best cosine exceeds δ, best first, skipping text spans already taken.

    HyKGE links a term to its argmax entity above δ; EbmKG keeps the top ``n_m`` per term — here the top
    ``n_m`` that clear δ.
    """
    order = sorted(
        range(len(candidates)),
        key=lambda i: (-(hits[i][0][1] if hits[i] else -1.0), -len(candidates[i].term), i),
    )
    taken: dict[int, list[tuple[int, int]]] = {}
    for i in order:
        candidate = candidates[i]
        found = [(e, round(s, 4)) for e, s in hits[i] if s > state.delta][: state.n_m]
        if candidate.origin is not None:
            if not found:
                state.unlinked.append(candidate.term)
            method: Method = "llm_term" if candidate.origin == "llm_terms" else "embedding"
            for entity_id, score in found:
                state.links.append(
                    _requested_link(state, entity_id, candidate.term, method, candidate.origin, score)
                )
            continue
        places = [
            p for p in candidate.places if not any(s < p[2] and p[1] < e for s, e in taken.get(p[0], []))
        ]
        if not found or not places:
            continue
        state.linked_runs.update(p[4] for p in places)
        for index, start, end, surface, _ in places:
            taken.setdefault(index, []).append((start, end))
            negated = negated_spans(state.texts[index], [(start, end)])[0]
            for entity_id, score in found:
                mention = EntityMention(
                    source=state.labels[index],
                    start=start,
                    end=end,
                    surface=surface,
                    negated=negated,
                    method="embedding",
                    score=score,
                )
                state.links.append(_Link(entity_id, mention, (index, start)))


_METHOD_RANK: dict[str, int] = {"dictionary": 0, "llm_term": 1, "embedding": 2}


def _merge(kb: KnowledgeBase, links: list[_Link]) -> list[LinkedEntity]:
    """One entry per entity: all its mentions in text order, its best score and how that was obtained."""
    by_entity: dict[str, list[_Link]] = {}
    for link in links:
        by_entity.setdefault(link.entity_id, []).append(link)
    records = kb.store.get_entities(sorted(by_entity))
    out: list[tuple[tuple[Any, ...], LinkedEntity]] = []
    for entity_id, items in by_entity.items():
        entity = records.get(entity_id)
        if entity is None:
            continue  # a vector without a graph record (index and store out of step): not linkable
        items.sort(key=lambda x: (x.order, x.mention.end, -x.mention.score, _METHOD_RANK[x.mention.method]))
        places: dict[tuple[str, int, int], EntityMention] = {}
        for item in items:  # one mention per place: the best-scoring link of it (a dictionary one first)
            places.setdefault((item.mention.source, item.mention.start, item.mention.end), item.mention)
        mentions = list(places.values())
        best = min(mentions, key=lambda m: (-m.score, _METHOD_RANK[m.method]))
        in_text = [m for m in mentions if m.source not in ("llm_terms", "extra_terms")]
        methods = sorted({x.mention.method for x in items}, key=_METHOD_RANK.__getitem__)
        linked = LinkedEntity(
            id=entity_id,
            name=entity.name,
            type=entity.type,
            score=best.score,
            method=best.method,
            methods=methods,
            negated=bool(in_text) and all(m.negated for m in in_text),
            mentions=mentions,
        )
        out.append(((-best.score, _METHOD_RANK[best.method], items[0].order, entity_id), linked))
    return [linked for _, linked in sorted(out, key=lambda pair: pair[0])]


NER_LINK_DESCRIPTION = (
    "Find the knowledge-graph entities (diseases, drugs, symptoms, genes, ...) that a question and, "
    "optionally, a tentative answer mention. Returns entity ids to use with the graph tools, each with the "
    "text span it came from, how it was linked (dictionary name, embedding similarity, or your search term) "
    "and whether it was negated ('no fever'). Pass extra medical search terms in llm_terms. Terms it could "
    "not link are listed in unlinked_terms."
)


def ner_link_tool(kb: KnowledgeBase) -> BaseTool:
    """``ner_link`` as a LangChain tool with :class:`NerLinkRequest` as its argument schema."""
    return as_langchain_tool(kb, ner_link, NerLinkRequest, "ner_link", NER_LINK_DESCRIPTION)
