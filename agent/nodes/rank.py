"""``evidence_rank``: rank graph candidates plus a vector search into the passages the answer will cite.

Candidates are everything the consult's walks and chains reached (with their graph scores, for the BCG
hybrid) plus the tool's own vector search; the question, the hypothesis (HyKGE fragments) and the LLM's
IDEP features (when there are any) drive the ranking. The ranked passages replace the previous round's.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from agent.context import ConsultContext
from agent.deps import ConsultDeps
from agent.nodes.common import emit, step
from agent.nodes.focus import question_focus, standing_in_labels
from agent.nodes.retrieval import search_question
from agent.state import ConsultState, EvidenceRec
from graphs.model.labels import specific_labels_asked
from tools.evidence_rank import EvidenceRankRequest, Feature, RankedEvidence, evidence_rank

MAX_CANDIDATES = 400


def ranked_records(deps: ConsultDeps, items: list[RankedEvidence]) -> list[EvidenceRec]:
    """Ranked tool items → state records with their document's provenance."""
    docs = deps.kb.store.get_documents(sorted({i.document_id for i in items}))
    out: list[EvidenceRec] = []
    for item in items:
        doc = docs.get(item.document_id)
        scores = {k: round(float(v), 4) for k, v in item.scores.model_dump().items() if isinstance(v, float)}
        out.append(
            {
                "id": item.id,
                "document_id": item.document_id,
                "text": item.text,
                "label": item.label,
                "keyword_entity": item.keyword_entity,
                "title": item.title,
                "source": doc.source if doc else "",
                "url": doc.url if doc else "",
                "date": doc.date if doc else "",
                "score": scores.get("final", 0.0),
                "scores": scores,
            }
        )
    return out


def boosted_labels(deps: ConsultDeps, state: ConsultState) -> list[str]:
    """The labels sufficiency and the answer count as asked: the question's (options included, for an exam
    question), with the stand-in label the KB holds about the subjects instead of an asked one
    (agent/nodes/focus.py ``standing_in_labels``; its lookups are memoised, so the focus's own call and this
    one cost one)."""
    focus = question_focus(deps.kb, state)
    subjects = [str(e["id"]) for e in focus.entities]
    asked = specific_labels_asked(state["question"])
    return standing_in_labels(deps.kb, asked, subjects, focus.pattern, list(state.get("candidates", {})))


def make_evidence_rank(deps: ConsultDeps):  # type: ignore[no-untyped-def]
    def rank(state: ConsultState, runtime: Runtime[ConsultContext]) -> dict[str, Any]:
        ctx = runtime.context
        candidates = state.get("candidates", {})
        best = sorted(candidates, key=lambda k: (-candidates[k], k))[:MAX_CANDIDATES]
        request = EvidenceRankRequest(
            question=search_question(state),
            hypothesis=state.get("hypothesis") or None,
            candidate_ids=best,
            graph_scores={k: candidates[k] for k in best},
            features=[Feature.model_validate(f) for f in state.get("features", [])] or None,
            entity_ids=[e["id"] for e in state.get("entities", []) if not e.get("negated")][:20],
            top_k=ctx.top_k,
            word_budget=ctx.word_budget,
            labels_boost=boosted_labels(deps, state),
        )
        result = evidence_rank(deps.kb, request)
        records = ranked_records(deps, list(result.evidence))
        emit(runtime, "evidence_rank", top=[f"[{r['id']}] {r['text'][:90]}" for r in records[:3]])
        known = state.get("warnings", [])
        return {
            "evidence": records,
            "warnings": [*known, *(w for w in deps.kb.warnings if w not in known)],  # "rebuild the KB"
            "trace": [
                step(
                    state,
                    "evidence_rank",
                    f"{len(records)} passages ranked from {len(best)} graph candidates + vector search",
                    top=[r["id"] for r in records],
                )
            ],
        }

    return rank
