"""The search encoder: MiniLM fine-tuned here for question → passage retrieval, used for evidence search only.

Why a second encoder: the shipped all-MiniLM-L6-v2 is a general sentence encoder; fine-tuned on this
project's labelled, evaluation-disjoint question–passage pairs (``evals/train_retriever.py``,
``data/retriever/CARD.md``) it finds the passages that answer a question markedly more often
(evals/reports/retriever_finetune.md). Why only for evidence search: every other cosine the product uses —
entity linking, the question index, the answered model's features, key sentences without the reader — was
calibrated on the shipped encoder's vectors, so those keep it. A build stores the search encoder's vectors
of every evidence unit in the :data:`SEARCH_COLLECTION` collection beside the base ones, and evidence_rank
embeds its query with this encoder to search and score that collection.

Same architecture and vocabulary as the base model, so it runs through the same onnxruntime pipeline
(graphs/vectors/embedding.py ``OnnxMiniLMEmbedder``). The weights ship in ``data/retriever/`` with their
sha256 (nothing is downloaded); a missing or damaged file is a ``ReaderUnavailable`` (of reader.py)
naming the file and the fix, and callers fall back to the base encoder's evidence vectors and say so.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from graphs.vectors.embedding import OnnxMiniLMEmbedder
from graphs.vectors.reader import ReaderSpec, ReaderUnavailable, verify_weights

SHIPPED_SEARCH_DIR = Path(__file__).resolve().parents[2] / "data" / "retriever"
"""Where the project ships the search encoder (weights, retriever.json, CARD.md)."""
SEARCH_MANIFEST = "retriever.json"
SEARCH_COLLECTION = "evidence_search"
"""The vector collection of the search encoder's evidence vectors (ids as in ``evidence``)."""
NAME = "search encoder"

_LOADED: dict[Path, OnnxMiniLMEmbedder] = {}
_LOCK = threading.Lock()


def search_encoder_name(spec: ReaderSpec) -> str:
    """The name a build records and a cache keys on: the model's own name plus its weights' digest, so
    vectors of other weights are never mixed with these."""
    model = str((spec.raw or {}).get("name", "search-minilm"))
    return f"{model}/onnx-int8@{spec.sha256[:12]}"


def get_search_encoder(search_dir: Path | None = None) -> OnnxMiniLMEmbedder:
    """The search encoder of ``search_dir`` (default: :data:`SHIPPED_SEARCH_DIR`, read at call time),
    verified and loaded once per process.

    Raises :class:`~graphs.vectors.reader.ReaderUnavailable` when the manifest or weights are missing or
    damaged (the message names the file and how to restore it).
    """
    search_dir = search_dir or SHIPPED_SEARCH_DIR
    with _LOCK:
        if search_dir not in _LOADED:
            spec = ReaderSpec.read(search_dir, NAME, SEARCH_MANIFEST)
            verify_weights(spec)
            name = search_encoder_name(spec)
            _LOADED[search_dir] = OnnxMiniLMEmbedder(model_path=spec.model_file, name=name)
        return _LOADED[search_dir]


def recorded_search_encoder(manifest: dict[str, Any]) -> OnnxMiniLMEmbedder | None:
    """The search encoder that made a build's search vectors (its manifest's ``search_embedder``), or
    ``None`` when the build has none.

    Raises :class:`~graphs.vectors.reader.ReaderUnavailable` when that encoder cannot be used: its file is
    missing or damaged, or the shipped one is another model (its query vectors would not match the stored
    ones). Reading a build falls back to the base vectors with the message; updating one refuses with it.
    """
    recorded = manifest.get("search_embedder")
    if not recorded:
        return None
    encoder = get_search_encoder()
    if encoder.name != recorded:
        raise ReaderUnavailable(
            f"this KB's search vectors were made by {recorded}, not by the shipped {encoder.name}: "
            "rebuild the KB (`evigraph kb build`)"
        )
    return encoder
