"""Cluster spread (seed 002 §4.2): how many k-means clusters of the KB's evidence a retrieved set touches.

The paper clusters all 731 k chunk embeddings into k = 200 and counts clusters hit by the top-K; more
clusters = the retriever reaches beyond the dense region around the question ("the long tail"). With a
few thousand units k = 200 would leave ~15 per cluster, so k scales with the pool: ``n // 50`` clamped to
[2, 200] (200 from 10,000 units up). Clustering is seeded (scipy ``kmeans2``), so a report is reproducible.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from scipy.cluster.vq import kmeans2

MAX_CLUSTERS = 200
UNITS_PER_CLUSTER = 50


def cluster_count(n_units: int) -> int:
    """k for a pool of ``n_units`` evidence units (seed 002's 200 on large pools, fewer on small ones)."""
    return max(2, min(MAX_CLUSTERS, n_units // UNITS_PER_CLUSTER))


def cluster_assignments(vectors: np.ndarray, k: int, seed: int = 2) -> np.ndarray:
    """k-means labels of each row (k-means++ init, seeded; 20 Lloyd iterations)."""
    if len(vectors) < k:
        raise ValueError(f"cannot make {k} clusters from {len(vectors)} vectors")
    _, labels = kmeans2(np.asarray(vectors, dtype=np.float64), k, iter=20, minit="++", seed=seed)
    return np.asarray(labels)


def spread_at_k(ranked_ids: Sequence[str], cluster_of: Mapping[str, int], k: int) -> int:
    """Distinct clusters among the first ``k`` retrieved evidence ids (ids without a cluster are skipped)."""
    return len({cluster_of[i] for i in ranked_ids[:k] if i in cluster_of})
