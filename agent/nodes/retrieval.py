"""The retrieval nodes: ``ner_link`` → ``hypergraph_walk`` → ``reasoning_chain`` (→ ``evidence_rank``).

Each node calls one tool from tools/ and folds its result into the consult state: linked entities, located
topics, reasoning chains, and graph candidates (evidence id → graph score) for the ranker. The same folding
functions serve the follow-up tool calls of the planner (agent/nodes/planner.py), so a tool's result means
the same thing whichever step asked for it.
"""

from __future__ import annotations

import re
from typing import Any

from langgraph.runtime import Runtime

from agent.context import ConsultContext
from agent.deps import ConsultDeps
from agent.nodes.common import emit, step
from agent.nodes.follow_up import (
    DRUG_TYPES,
    asks_drug_aspect,
    candidate_key_ids,
    consult_focus,
    focus_before,
    is_aspect_mention,
    is_bare_reference,
    is_follow_up,
    key_entities,
    named_in_place,
    own_focus,
)
from agent.state import ChainRec, ConsultState, EntityRec, TopicRec
from tools.hypergraph_walk import HypergraphWalkRequest, HypergraphWalkResult, hypergraph_walk
from tools.ner_link import NO_ENTITIES, NerLinkRequest, NerLinkResult, ner_link
from tools.reasoning_chain import ReasoningChainRequest, ReasoningChainResult, reasoning_chain

MAX_WALK_SEEDS = 20
MAX_ANCHORS = 8
UNRESOLVED_REFERENCE = (
    'This question refers back ("its", "the dose"…) but the consult has no earlier subject for it to refer '
    'to. Ask it again naming the disease or drug, e.g. "What are the side effects of metformin?"'
)


def fold_entities(result: NerLinkResult, turn: int) -> list[EntityRec]:
    out: list[EntityRec] = []
    for e in result.entities:
        surface = e.mentions[0].surface if e.mentions else e.name
        out.append(
            {
                "id": e.id,
                "name": e.name,
                "type": e.type,
                "score": round(e.score, 4),
                "method": e.method,
                "negated": e.negated,
                "surface": surface,
                "turn": turn,
            }
        )
    return out


def fold_topics(result: HypergraphWalkResult) -> tuple[list[TopicRec], dict[str, float]]:
    """Topics, and their evidence as graph candidates scored by the topic's normalised walk score."""
    topics: list[TopicRec] = []
    candidates: dict[str, float] = {}
    best = max((t.score for t in result.topics), default=0.0) or 1.0
    for t in result.topics:
        topics.append(
            {
                "id": t.topic_id,
                "entity_id": t.entity_id,
                "entity_name": t.entity_name,
                "label": t.label,
                "score": round(t.score, 6),
                "evidence_ids": list(t.evidence_ids),
            }
        )
        for ev in t.evidence_ids:
            candidates[ev] = max(candidates.get(ev, 0.0), t.score / best)
    return topics, candidates


def fold_chains(result: ReasoningChainResult) -> tuple[list[ChainRec], dict[str, float]]:
    """Chains, and path-mapped evidence (BCG) as candidates scored by rank."""
    chains: list[ChainRec] = [
        {
            "id": c.chain_id,
            "type": c.chain_type,
            "text": c.text,
            "length": c.length,
            "relation_ids": list(c.relation_ids),
            "node_ids": [n.id for n in c.nodes],
        }
        for c in result.chains
    ]
    candidates = {ev.evidence_id: 1.0 / (1.0 + ev.rank) for ev in result.evidence}
    return chains, candidates


def walk_seeds(state: ConsultState) -> list[str]:
    """This turn's affirmed entities (negated mentions are not walked from: "no fever" is not about fever)."""
    turn_ids = set(state.get("turn_entity_ids", []))
    ents = [e for e in state.get("entities", []) if e["id"] in turn_ids and not e.get("negated")]
    ents.sort(key=lambda e: (-e.get("score", 0.0), e["id"]))
    return [e["id"] for e in ents[:MAX_WALK_SEEDS]]


def carried_entities(state: ConsultState) -> list[EntityRec]:
    """The consult's focus entities, for a follow-up that names none of its own or refers back to them.

    "What are its symptoms?" after a question about gout links nothing by itself; without this the turn
    would search from nothing and end "insufficient" although the consult knows what "its" refers to.
    """
    return [e for e in consult_focus(state) if not e.get("negated")]


def follow_up_entities(deps: ConsultDeps, state: ConsultState, linked: list[EntityRec]) -> list[EntityRec]:
    """What a follow-up continues with (nothing for a first turn or a question with its own subject): the
    consult's focus, plus the drug the previous answer was about when it asks "its" side effects or dose."""
    if state.get("turn", 1) <= 1 or not state.get("turns"):
        return []
    question = state["question"]
    if not is_follow_up(question, linked):
        return []
    carried = carried_entities(state)
    if carried and asks_drug_aspect(question) and not any(e.get("type") in DRUG_TYPES for e in carried):
        ids = candidate_key_ids(state)
        found = deps.kb.store.get_entities(ids) if ids else {}
        types = {i: ent.type for i, ent in found.items()}
        for key in key_entities(state, types):
            ent = found[key]
            carried.append(
                {
                    "id": key,
                    "name": ent.name,
                    "type": ent.type,
                    "score": 1.0,
                    "method": "follow_up",
                    "turn": state.get("turn", 1),
                }
            )
    linked_ids = {e["id"] for e in linked}
    return [e for e in carried if e["id"] not in linked_ids]


def distinct_names(entities: list[EntityRec]) -> list[str]:
    """Entity names as a reader tells them apart ("hypothyroidism" once, not once per source)."""
    seen: dict[str, str] = {}
    for e in entities:
        seen.setdefault(e["name"].lower(), e["name"])
    return list(seen.values())


def as_asked(name: str, question: str) -> str:
    """``name`` spelt as the question writes it, when the question names it (case aside): a KG name keeps
    its own capitals ("Pain", "Hydroxychloroquine"), which read oddly in a sentence of the answer ("about
    headaches, jaw, Pain or scalp"). A name the question does not write stays as the KG spells it."""
    found = re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", question, re.IGNORECASE)
    return found.group() if found else name


def search_question(state: ConsultState) -> str:
    """The question as retrieval should read it: a follow-up that names no entity gets the names it continues
    with, so the vector search and the relevance check look for "its symptoms" of the right disease.

    With one subject, a lone pronoun becomes that subject as the consult wrote it ("How is it treated?" →
    "How is COPD treated?"; ``follow_up.named_in_place``): the reader was trained on questions that name
    their subject, and on "How is it treated? (chronic obstructive pulmonary disease)" it scored
    "Bronchodilators and inhaled steroids are two medications used to treat COPD" below the answered
    threshold. Otherwise the names follow in brackets."""
    turn = state.get("turn", 1)
    ids = set(state.get("turn_entity_ids", []))
    carried_recs = [
        e
        for e in state.get("entities", [])
        if e["id"] in ids and (e.get("turn", turn) < turn or e.get("method") == "follow_up")
    ]
    carried = distinct_names(carried_recs)
    question = state["question"]
    if len(carried) == 1 and (named := named_in_place(question, written_name(carried_recs) or carried[0])):
        return named
    return f"{question} ({', '.join(carried)})" if carried else question


def written_name(entities: list[EntityRec]) -> str | None:
    """How an earlier turn wrote the subject ("shingles", "kidney stones", "COPD"), which the consumer pages
    say too, rather than the KG's name ("herpes zoster", "nephrolithiasis")."""
    earliest = min((e for e in entities if e.get("surface")), key=lambda e: e.get("turn", 0), default=None)
    return str(earliest["surface"]) if earliest else None


def make_ner_link(deps: ConsultDeps):  # type: ignore[no-untyped-def]
    def link(state: ConsultState, runtime: Runtime[ConsultContext]) -> dict[str, Any]:
        texts, sources = [state["question"]], ["question"]
        if state.get("hypothesis"):
            texts.append(state["hypothesis"])
            sources.append("hypothesis")
        request = NerLinkRequest(
            texts=texts,
            sources=sources,
            llm_terms=state.get("search_terms", [])[:20],
            n_m=runtime.context.n_m,
        )
        result = ner_link(deps.kb, request)
        entities = fold_entities(result, state.get("turn", 1))
        in_question = {e.id for e in result.entities for m in e.mentions if m.source == "question"}
        asked = [e for e in entities if e["id"] in in_question]
        carried = follow_up_entities(deps, state, asked)
        turn_ids = [e["id"] for e in entities if not (carried and is_aspect_mention(e))]
        turn_ids += [e["id"] for e in carried if e["id"] not in turn_ids]
        focus = [e["id"] for e in carried if e.get("method") != "follow_up"] or own_focus(asked)
        own = [w for w in result.warnings if not (carried and w == NO_ENTITIES)]  # a follow-up carries them
        warnings = [*state.get("warnings", []), *own]
        if not carried and not own_focus(asked) and is_bare_reference(state["question"]):
            # "what are its side effects?" with nothing before it: searching from "side effects" alone would
            # answer about drug reactions in general; with no entity the turn ends insufficient instead.
            turn_ids = []
            warnings.append(UNRESOLVED_REFERENCE)
        emit(
            runtime,
            "ner_link",
            entities=[
                f"{e['name']} ({e['type']})" + (" [negated]" if e["negated"] else "") for e in entities
            ],
            unlinked=result.unlinked_terms,
            carried=distinct_names(carried),
        )
        summary = f"{len(entities)} entities linked, {len(result.unlinked_terms)} terms unlinked"
        if carried:
            summary += f"; follow-up question, continuing with {', '.join(distinct_names(carried))}"
        return {
            "entities": entities + [e for e in carried if e.get("method") == "follow_up"],
            "turn_entity_ids": turn_ids,
            "focus_by_turn": {
                **state.get("focus_by_turn", {}),
                str(state.get("turn", 1)): focus or focus_before(state),
            },
            "unlinked_terms": result.unlinked_terms,
            "warnings": warnings,
            "trace": [
                step(
                    state,
                    "ner_link",
                    summary,
                    entities=[e["id"] for e in entities],
                    carried=[e["id"] for e in carried],
                )
            ],
        }

    return link


def make_hypergraph_walk(deps: ConsultDeps):  # type: ignore[no-untyped-def]
    def walk(state: ConsultState, runtime: Runtime[ConsultContext]) -> dict[str, Any]:
        seeds = walk_seeds(state)
        if not seeds:
            emit(runtime, "hypergraph_walk", topics=[], skipped=True)
            return {"trace": [step(state, "hypergraph_walk", "skipped: no entity to start from")]}
        ctx = runtime.context
        result = hypergraph_walk(
            deps.kb, HypergraphWalkRequest(entity_ids=seeds, mode=ctx.walk_mode, n_t=ctx.n_t, seed=ctx.seed)
        )
        topics, candidates = fold_topics(result)
        emit(runtime, "hypergraph_walk", topics=[f"{t['entity_name']} — {t['label']}" for t in topics[:6]])
        return {
            "topics": topics,
            "candidates": candidates,
            "trace": [
                step(
                    state,
                    "hypergraph_walk",
                    f"{len(topics)} topics located",
                    topics=[t["id"] for t in topics],
                )
            ],
        }

    return walk


def make_reasoning_chain(deps: ConsultDeps):  # type: ignore[no-untyped-def]
    def chains(state: ConsultState, runtime: Runtime[ConsultContext]) -> dict[str, Any]:
        anchors = walk_seeds(state)[:MAX_ANCHORS]
        if len(anchors) < 2:
            emit(runtime, "reasoning_chain", chains=[], skipped=True)
            return {"trace": [step(state, "reasoning_chain", "skipped: fewer than two entities to connect")]}
        result = reasoning_chain(deps.kb, ReasoningChainRequest(entity_ids=anchors, k=runtime.context.k))
        found, _ = fold_chains(result)
        mapped = reasoning_chain(
            deps.kb, ReasoningChainRequest(entity_ids=anchors, mode="shortest_path", k=runtime.context.k)
        )
        path_chains, candidates = fold_chains(mapped)
        all_chains = found + [c for c in path_chains if c["id"] not in {x["id"] for x in found}]
        emit(runtime, "reasoning_chain", chains=[c["text"] for c in all_chains[:5]])
        return {
            "chains": all_chains,
            "candidates": candidates,
            "trace": [
                step(
                    state,
                    "reasoning_chain",
                    f"{len(all_chains)} chains, {len(candidates)} path evidence",
                    chains=[c["id"] for c in all_chains],
                )
            ],
        }

    return chains
