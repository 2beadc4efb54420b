"""Systems by name: ``make_system(name, kb, pool)``. ``all`` in the runner expands to :data:`SYSTEMS`."""

from __future__ import annotations

from collections.abc import Callable

from evals.baselines.base import EvidencePool, Retriever
from evals.baselines.bcg import BCGHybridRetriever, BCGRetriever
from evals.baselines.bm25 import BM25Retriever
from evals.baselines.evigraph import ABLATIONS, EviGraphRetriever
from evals.baselines.hykge import HyKGERetriever
from evals.baselines.kgrag import KGRAGRetriever
from evals.baselines.kgrank import KGRankRetriever
from evals.baselines.vector import SearchVectorRetriever, VectorRetriever
from graphs.kb import KnowledgeBase

Factory = Callable[[KnowledgeBase, EvidencePool], Retriever]

FACTORIES: dict[str, Factory] = {
    "bm25": lambda kb, pool: BM25Retriever(pool),
    "vector": lambda kb, pool: VectorRetriever(kb),
    "search-vector": lambda kb, pool: SearchVectorRetriever(kb),
    "kgrag": KGRAGRetriever,
    "kgrank": KGRankRetriever,
    "hykge": lambda kb, pool: HyKGERetriever(kb),
    "bcg": lambda kb, pool: BCGRetriever(kb),
    "bcg-hybrid": BCGHybridRetriever,
}


def _evigraph_factory(name: str) -> Factory:
    description, config = ABLATIONS[name]

    def factory(kb: KnowledgeBase, pool: EvidencePool) -> Retriever:
        return EviGraphRetriever(kb, name, description, config)

    return factory


FACTORIES.update({name: _evigraph_factory(name) for name in ABLATIONS})

SYSTEMS: tuple[str, ...] = tuple(FACTORIES)


def make_system(name: str, kb: KnowledgeBase, pool: EvidencePool) -> Retriever:
    if name not in FACTORIES:
        raise ValueError(f"unknown system {name!r}; known: {', '.join(SYSTEMS)}")
    return FACTORIES[name](kb, pool)


def expand(names: str) -> list[str]:
    """A comma list of system names; ``all`` = every system; ``baselines`` = the non-EviGraph ones."""
    out: list[str] = []
    for item in (n.strip() for n in names.split(",") if n.strip()):
        if item == "all":
            out.extend(SYSTEMS)
        elif item == "baselines":
            out.extend(n for n in SYSTEMS if not n.startswith("evigraph"))
        else:
            if item not in FACTORIES:
                raise ValueError(f"unknown system {item!r}; known: all, baselines, {', '.join(SYSTEMS)}")
            out.append(item)
    return list(dict.fromkeys(out))
