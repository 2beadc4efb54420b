"""Tests for graphs.vectors.embedding with the real all-MiniLM-L6-v2 model, both backends.

The ONNX backend is the default and must reproduce the sentence-transformers pipeline; comparing it with
the fp32 reference on real sentences is what proves tokenisation, truncation, pooling and normalisation
are right (a mistake in any of them drops the cosine far below 0.98).
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from graphs.vectors.embedding import (
    EMBEDDING_DIM,
    VALID_BACKENDS,
    Embedder,
    EmbeddingBackendUnavailable,
    get_embedder,
    session_options,
)

PROJECT_ROOT = Path(__file__).resolve().parents[1]
BIOASQ_SNIPPETS = PROJECT_ROOT / "evals" / "data" / "bioasq_ci_corpus.jsonl"
"""Real BioASQ gold snippets, as the project ships them for its CI evaluation slice."""

MEDICAL_SENTENCES = [
    "Myocardial infarction occurs when blood flow to part of the heart muscle is blocked.",
    "Metformin is a first-line oral drug for type 2 diabetes mellitus.",
    "What are the symptoms of iron deficiency anemia?",
    "Pembrolizumab requires a companion diagnostic test to assess PD-L1 status.",
    "Aspirin",
]


def _real_snippets(count: int) -> list[str]:
    with BIOASQ_SNIPPETS.open(encoding="utf-8") as lines:
        return [json.loads(next(lines))["text"] for _ in range(count)]


@pytest.fixture(
    scope="module",
    params=[
        pytest.param(backend, marks=pytest.mark.torch) if backend == "sentence-transformers" else backend
        for backend in VALID_BACKENDS
    ],
)
def embedder(request: pytest.FixtureRequest) -> Embedder:
    return get_embedder(request.param)


def test_shape_dtype_and_unit_norm(embedder: Embedder) -> None:
    texts = [*MEDICAL_SENTENCES, *_real_snippets(8)]
    vectors = embedder.embed(texts, batch_size=8)
    assert vectors.shape == (len(texts), EMBEDDING_DIM)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.dim == EMBEDDING_DIM
    assert embedder.name.startswith("all-MiniLM-L6-v2/")


def test_empty_input_gives_zero_rows(embedder: Embedder) -> None:
    vectors = embedder.embed([])
    assert vectors.shape == (0, EMBEDDING_DIM)
    assert vectors.dtype == np.float32


def test_embed_one_matches_embed_and_order_is_kept(embedder: Embedder) -> None:
    # Mixed lengths force the ONNX backend to reorder texts into batches; the rows must come back in order.
    batched = embedder.embed(MEDICAL_SENTENCES, batch_size=2)
    for row, sentence in zip(batched, MEDICAL_SENTENCES, strict=True):
        single = embedder.embed_one(sentence)
        assert single.shape == (EMBEDDING_DIM,)
        assert float(single @ row) > 0.9999


def test_deterministic(embedder: Embedder) -> None:
    first = embedder.embed(MEDICAL_SENTENCES)
    second = embedder.embed(MEDICAL_SENTENCES)
    np.testing.assert_allclose(first, second, atol=1e-6)


def test_medical_synonyms_score_higher_than_unrelated(embedder: Embedder) -> None:
    heart_attack, infarction, tax_return = embedder.embed(
        ["heart attack", "myocardial infarction", "tax return"]
    )
    assert float(heart_attack @ infarction) > float(heart_attack @ tax_return) + 0.3
    question, answer, off_topic = embedder.embed(
        [
            "How is high blood pressure treated?",
            "Hypertension is managed with lifestyle changes and antihypertensive drugs.",
            "The football season starts in September with the first league matches.",
        ]
    )
    assert float(question @ answer) > float(question @ off_topic)


def test_long_text_is_truncated_not_an_error(embedder: Embedder) -> None:
    opening = "Chronic kidney disease slowly reduces the ability of the kidneys to filter blood. "
    long_text = opening + " ".join(["nephron"] * 5000)
    vector = embedder.embed_one(long_text)
    assert vector.shape == (EMBEDDING_DIM,)
    assert np.isfinite(vector).all()
    # Truncation at 256 word pieces: anything after that point cannot change the vector.
    longer = embedder.embed_one(long_text + " a completely different ending about tax returns and football")
    assert float(vector @ longer) > 0.9999


@pytest.mark.torch
def test_onnx_matches_sentence_transformers_reference() -> None:
    onnx_vectors = get_embedder("onnx").embed([*MEDICAL_SENTENCES, *_real_snippets(10)])
    reference = get_embedder("sentence-transformers").embed([*MEDICAL_SENTENCES, *_real_snippets(10)])
    cosines = (onnx_vectors * reference).sum(axis=1)
    assert cosines.min() > 0.98, cosines


def test_model_sessions_do_not_spin_between_calls() -> None:
    """The turn-latency fix (evals/reports/bench_consult.md): worker threads sleep between model calls."""
    options = session_options(2)
    assert options.intra_op_num_threads == 2
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert options.get_session_config_entry("session.inter_op.allow_spinning") == "0"


@pytest.mark.torch
def test_backends_have_distinct_names() -> None:
    # A knowledge base records the name; the int8 and fp32 vectors differ, so the names must too.
    assert get_embedder("onnx").name != get_embedder("sentence-transformers").name


def test_get_embedder_is_cached_per_backend() -> None:
    assert get_embedder("onnx") is get_embedder("onnx")


def test_unknown_backend_lists_valid_ones() -> None:
    with pytest.raises(ValueError, match="onnx, sentence-transformers"):
        get_embedder("word2vec")


def test_bare_string_is_rejected() -> None:
    with pytest.raises(TypeError, match="embed_one"):
        get_embedder("onnx").embed("heart attack")


def test_without_torch_onnx_works_and_torch_backend_says_what_to_install() -> None:
    # A fresh interpreter in which torch cannot be imported stands in for an install without the extra.
    script = """
import sys
sys.modules["torch"] = None
from graphs.vectors.embedding import EmbeddingBackendUnavailable, get_embedder
vector = get_embedder("onnx").embed_one("heart attack")
assert vector.shape == (384,)
try:
    get_embedder("sentence-transformers")
except EmbeddingBackendUnavailable as error:
    print(error)
"""
    completed = subprocess.run(
        [sys.executable, "-c", script],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert "install evigraph[torch]" in completed.stdout
    assert issubclass(EmbeddingBackendUnavailable, RuntimeError)


def test_the_int8_matrix_product_is_exact_on_cpus_without_vnni() -> None:
    """Every shipped model is u8×s8 int8. On an AVX2-only x86-64 CPU onnxruntime's fast kernel sums pairs
    of products in saturating 16-bit registers: on a 2026-12-02 AMD EPYC without VNNI this product gave
    1,048,544 instead of 2,072,640 with default options, and the evidence reader's logits moved by up to
    0.73 from the calibrated machines'. The product's session options must give the exact sum on every CPU
    (on a VNNI CPU both kernels are exact)."""
    import onnxruntime
    from onnx import TensorProto, helper, numpy_helper

    width = 64
    weights = numpy_helper.from_array(np.full((width, 4), 127, np.int8), "B")
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["A", "B"], ["Y"])],
        "saturation",
        [helper.make_tensor_value_info("A", TensorProto.UINT8, [None, width])],
        [helper.make_tensor_value_info("Y", TensorProto.INT32, [None, 4])],
        [weights],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), session_options(1), providers=["CPUExecutionProvider"]
    )
    product = session.run(None, {"A": np.full((8, width), 255, np.uint8)})[0]
    assert (product == width * 255 * 127).all(), product[0]
