"""The query side of evidence_rank: the fragments and IDEP features of ``Q ⊕ HO``, and their vectors.

What the semantic methods compare every candidate against: the whole query (cosine), its stop-word-free
windows (fragment, HyKGE; tools/ranking.fragments) and the features with their usefulness (idep, EbmKG;
from an LLM when the caller passes them, else derived offline by tools/idep_features.py).

Why a module of its own: all of it depends on the question alone, is computed once per call before any
candidate is known, and holds the call's only encoder work (two calls, see :func:`embed_texts`); the
candidates' vectors are read from the index (tools/evidence_candidates.py), never embedded.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from graphs.kb import KnowledgeBase
from tools.idep_features import UsedFeature, offline_features
from tools.ranking import MAX_FRAGMENTS, fragments


def query_aspects(
    kb: KnowledgeBase,
    question: str,
    hypothesis: str,
    query_text: str,
    methods: Collection[str],
    llm_features: list[UsedFeature],
    entity_ids: list[str],
    labels: list[str],
) -> tuple[list[str], list[UsedFeature], list[str]]:
    """The fragments (``fragment`` method) and features (``idep``) of the query, and warnings about them."""
    warnings: list[str] = []
    frags: list[str] = []
    if "fragment" in methods:
        all_frags = fragments(query_text)
        frags = all_frags[:MAX_FRAGMENTS]
        if len(all_frags) > MAX_FRAGMENTS:
            warnings.append(
                f"{len(all_frags) - MAX_FRAGMENTS} fragments beyond the first {MAX_FRAGMENTS} ignored"
            )
    features: list[UsedFeature] = []
    if llm_features and "idep" not in methods:
        warnings.append("features are used by the idep method only; they were ignored")
    if "idep" in methods:
        if llm_features:
            features = llm_features
        else:
            known = frags if "fragment" in methods else None
            features = offline_features(kb, question, hypothesis, entity_ids, labels, known)
        if not features:
            warnings.append(
                "idep: no features (no entity or asked-about label in the question); idep skipped"
            )
        elif len({f.usefulness for f in features}) == 1:
            warnings.append(
                "idep: all features have the same usefulness, so eq. 9 cannot rank (score constant)"
            )
    return frags, features, warnings


def query_vectors(
    kb: KnowledgeBase, query_text: str, frags: list[str], features: list[UsedFeature]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The query's vector, and its fragments' and features' vectors as matrices (zero rows when none)."""
    short_texts = [t for t in dict.fromkeys([*frags, *(f.text for f in features)]) if t != query_text]
    vector_of = embed_texts(kb, query_text, short_texts)
    query = vector_of[query_text]
    frag_vecs = (
        np.stack([vector_of[t] for t in frags]) if frags else np.zeros((0, query.shape[0]), np.float32)
    )
    feat_vecs = (
        np.stack([vector_of[f.text] for f in features])
        if features
        else np.zeros((0, query.shape[0]), np.float32)
    )
    return query, frag_vecs, feat_vecs


def embed_texts(kb: KnowledgeBase, query_text: str, short_texts: list[str]) -> dict[str, np.ndarray]:
    """Embed the query and the short texts (fragments, features): two encoder calls, not one.

    Why two: the encoder pads a batch to its longest text, so one batch of a 100-token ``Q ⊕ HO`` and
    fifteen 15-token fragments runs 16 × 100 tokens; measured on the 2-core test machine, two calls took
    187 ms against 318 ms for the single batch.
    """
    vectors = {query_text: kb.embedder.embed([query_text])[0]}
    if short_texts:
        vectors.update(zip(short_texts, kb.embedder.embed(short_texts), strict=True))
    return vectors
