"""Why a graph retriever scores what it scores: where gold evidence is lost along EviGraph's pipeline.

For each question, with gold resolved as in the report (evals/scoring.py):

* **linked** — does ner_link find any (non-negated) entity in the question?
* **gold mentions a question entity** — share of gold passages whose ``f(e)`` (entities found in the
  passage, keyword entity included) contains a linked question entity: the ceiling of any method that
  starts from the question's entities and looks only at passages naming them;
* **in walk candidates / chain candidates / graph union** — share of gold passages among the evidence of
  the walk's top topics (PPR, as the agent), mapped to the BCG shortest paths between the first 8 seeds,
  and in either (before any ranking or K cut), i.e. the recall of the ``evigraph`` system's candidates;
* **near-duplicate gold** — share of gold passages with another pool unit at cosine > 0.97 (evidence_rank
  keeps one of such a pair, which a snippet-level metric counts as a lost gold unit).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import numpy as np

from evals.adapters import find_chains, link_entities, walk_topics
from evals.baselines.base import EvidencePool
from evals.baselines.evigraph import MAX_ANCHORS, MAX_SEEDS
from evals.datasets.schema import RetrievalDataset
from evals.scoring import Gold, units
from tools.evidence_scoring import DUPLICATE_COSINE


@dataclass(frozen=True)
class Diagnosis:
    questions: int
    linked_share: float
    mean_linked: float
    gold_mentions_question_entity: float
    gold_in_walk: float
    gold_in_chains: float
    gold_in_graph: float
    mean_graph_candidates: float
    near_duplicate_gold: float


def _share(found: set[str], gold: frozenset[str]) -> float:
    return len(found & gold) / len(gold)


def diagnose(dataset: RetrievalDataset, pool: EvidencePool, golds: dict[str, Gold]) -> Diagnosis:
    kb = pool.kb
    linked_counts: list[int] = []
    mention: list[float] = []
    walk_share: list[float] = []
    chain_share: list[float] = []
    graph_share: list[float] = []
    sizes: list[int] = []
    by_id = {q.id: q for q in dataset.questions}
    unit_of = dict(zip(pool.ids, units(dataset, pool, pool.ids, "passage"), strict=True))
    members: dict[str, list[str]] = {}
    for evidence_id, unit in unit_of.items():
        members.setdefault(unit, []).append(evidence_id)
    for question_id, gold in golds.items():
        seeds = link_entities(kb, by_id[question_id].question).positive
        linked_counts.append(len(seeds))
        gold_ids = [e for unit in sorted(gold.passages) for e in members.get(unit, [])]
        entities = kb.store.evidence_entities(gold_ids)
        seed_set = set(seeds)
        naming = {e for e in gold_ids if seed_set & set(entities.get(e, []))}
        mention.append(_share(set(units(dataset, pool, sorted(naming), "passage")), gold.passages))
        walk = set(walk_topics(kb, seeds[:MAX_SEEDS], mode="ppr").evidence_scores) if seeds else set()
        anchors = seeds[:MAX_ANCHORS]
        chains: set[str] = set()
        if len(anchors) >= 2:
            chains = {
                e for e, _ in find_chains(kb, anchors, mode="shortest_path", max_evidence=20).path_evidence
            }
        for found, sink in ((walk, walk_share), (chains, chain_share), (walk | chains, graph_share)):
            sink.append(_share(set(units(dataset, pool, sorted(found), "passage")), gold.passages))
        sizes.append(len(walk | chains))
    gold_units = set().union(*(g.passages for g in golds.values()))
    gold_rows = [i for i, e in enumerate(pool.ids) if unit_of[e] in gold_units]
    duplicates = 0
    if gold_rows:
        sims = pool.vectors[gold_rows] @ pool.vectors.T
        sims[np.arange(len(gold_rows)), gold_rows] = -1.0
        duplicates = int((sims.max(axis=1) > DUPLICATE_COSINE).sum())
    return Diagnosis(
        questions=len(golds),
        linked_share=sum(1 for n in linked_counts if n) / len(linked_counts),
        mean_linked=statistics.fmean(linked_counts),
        gold_mentions_question_entity=statistics.fmean(mention),
        gold_in_walk=statistics.fmean(walk_share),
        gold_in_chains=statistics.fmean(chain_share),
        gold_in_graph=statistics.fmean(graph_share),
        mean_graph_candidates=statistics.fmean(sizes),
        near_duplicate_gold=duplicates / max(len(gold_rows), 1),
    )


def render_diagnosis(d: Diagnosis) -> list[str]:
    return [
        "## Where the graph loses gold (evals/diagnostics.py)",
        "",
        "Per question, averaged; passage-level gold; before any ranking or K cut.",
        "",
        "| measure | value |",
        "| --- | --- |",
        f"| questions with ≥ 1 linked entity | {d.linked_share:.2f} (mean {d.mean_linked:.1f} entities) |",
        f"| gold passages naming a linked question entity | {d.gold_mentions_question_entity:.3f} |",
        f"| gold passages among the walk's topic evidence | {d.gold_in_walk:.3f} |",
        f"| gold passages mapped to the shortest paths | {d.gold_in_chains:.3f} |",
        f"| gold passages among all graph candidates | {d.gold_in_graph:.3f} "
        f"(mean {d.mean_graph_candidates:.0f} candidates) |",
        f"| gold units with a near-duplicate (cos > {DUPLICATE_COSINE}) in the pool "
        f"| {d.near_duplicate_gold:.3f} |",
        "",
    ]
