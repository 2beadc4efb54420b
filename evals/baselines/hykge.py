"""HyKGE-style retrieval (seed 003), offline: reasoning chains between the question's entities, reranked
at fragment granularity, then the passages behind the top chains.

Offline means no hypothesis output: fragments come from the question alone (HyKGE chunks ``Q ⊕ HO``;
without an LLM, ``HO`` is empty). Chains (path / co-ancestor / co-occurrence within k = 3 hops, from
tools.reasoning_chain) are embedded as their rendered text, scored against every fragment (window 10,
overlap 4) and ranked by their best fragment; the top 10 are kept (HyKGE's topK). A chain's passages are
those naming both ends of one of its edges; passages follow chain order, and within a chain their own best
fragment similarity.
"""

from __future__ import annotations

import numpy as np

from evals.adapters import chain_evidence, find_chains, link_entities
from graphs.kb import KnowledgeBase
from tools.ranking import fragment_matrix, fragment_scores, fragments

TOP_CHAINS = 10


class HyKGERetriever:
    name = "hykge"
    description = (
        "reasoning chains (k=3) reranked by question fragments (HyKGE, no hypothesis), their evidence"
    )

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    def retrieve(self, question: str, k: int) -> list[str]:
        seeds = link_entities(self.kb, question).positive
        hits = find_chains(self.kb, seeds, mode="chains")
        if not hits.chains:
            return []
        frags = fragments(question) or [question]
        vectors = self.kb.embedder.embed([*frags, *hits.chain_texts]).astype(np.float64)
        frag_vecs, chain_vecs = vectors[: len(frags)], vectors[len(frags) :]
        chain_score = fragment_scores(fragment_matrix(chain_vecs, frag_vecs))
        order = sorted(range(len(hits.chains)), key=lambda i: (-chain_score[i], i))[:TOP_CHAINS]
        ranked_chains = [hits.chains[i] for i in order]
        ordered: list[str] = []
        seen: set[str] = set()
        for chain in ranked_chains:
            found = sorted(set(chain_evidence(self.kb, [chain])) - seen)
            if not found:
                continue
            stored = self.kb.vectors.get_vectors("evidence", found)
            present = [i for i in found if i in stored]
            if not present:
                continue
            matrix = np.stack([stored[i] for i in present]).astype(np.float64)
            score = fragment_scores(fragment_matrix(matrix, frag_vecs))
            for position in sorted(range(len(present)), key=lambda p: (-score[p], present[p])):
                ordered.append(present[position])
                seen.add(present[position])
            if len(ordered) >= k:
                break
        return ordered[:k]
